package luabind

import (
	"errors"

	lua "github.com/attune-dev/attune/internal/lua"
)

// Protected calls.
//
// gopher-lua v1.1.2 (issue #448) closed the upvalues of every frame on the
// stack when an error was raised inside a protected call, not only those
// of the frames the error unwound: after `pcall` caught an error, a local
// of the caller and the closures sharing it went separate ways (the
// closure kept the old value); the same for a nested callback of one state
// (a guard's invoke reaching the next guard of the same program) that
// failed. attune's copy of gopher-lua (internal/lua), whose PCall
// closes only the upvalues above the unwound call's base, as Lua's
// luaD_pcall does, so pcall, xpcall and nested callbacks run on the
// state's own stack. The sandbox's pcall and xpcall add a bound on how
// deeply they nest.

// maxProtected bounds how deeply protected calls nest.
const maxProtected = 200

func protectedCall(L *lua.LState, handler *lua.LFunction, nargs int) int {
	s := stateOf(L)
	if s != nil {
		if s.protected >= maxProtected {
			L.RaiseError("pcall: protected calls nest deeper than %d", maxProtected)
		}
		s.protected++
		defer func() { s.protected-- }()
	}
	base := L.GetTop() - nargs - 1
	if err := L.PCall(nargs, lua.MultRet, handler); err != nil {
		return failed(L, err)
	}
	n := L.GetTop() - base
	L.Insert(lua.LTrue, base+1)
	return n + 1
}

// protectedCalls returns the sandbox's pcall and xpcall.
func protectedCalls(L *lua.LState) (pcall, xpcall *lua.LFunction) {
	pcall = L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() == 0 {
			L.ArgError(1, "value expected")
		}
		return protectedCall(L, nil, L.GetTop()-1)
	})
	xpcall = L.NewFunction(func(L *lua.LState) int {
		handler := L.CheckFunction(2)
		L.SetTop(1)
		return protectedCall(L, handler, 0)
	})
	return pcall, xpcall
}

func failed(L *lua.LState, err error) int {
	L.Push(lua.LFalse)
	var api *lua.ApiError
	if errors.As(err, &api) && api.Object != nil {
		L.Push(api.Object)
	} else {
		L.Push(lua.LString(err.Error()))
	}
	return 2
}
