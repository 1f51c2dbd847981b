package luabind

import (
	"errors"

	lua "github.com/yuin/gopher-lua"
)

// Protected calls run on a thread of their own.
//
// gopher-lua (v1.1.2, issue #448) closes the upvalues of every frame on the
// stack when an error is raised inside a protected call, not only those of
// the frames the error unwinds: after `pcall` catches an error, a local of
// the caller and the closures sharing it go separate ways (the closure
// keeps the old value). A protected call that runs on a fresh thread (a
// coroutine's LState: same globals, its own stack and upvalue list) can
// only close what its own frames opened. So the sandbox's pcall and xpcall
// run that way. (A nested callback the engine runs in the same state — a
// guard's invoke reaching the next guard of the same program — does not:
// a thread per nested callback made the tool chain four times slower. An
// error that fails such a nested callback can still split the waiting
// callback's locals from its closures.)

// maxProtected bounds how deeply protected calls nest (each is a thread
// with a call stack of its own).
const maxProtected = 200

// thread returns a new thread of L that runs under L's context (without
// the goroutine context.WithCancel would start for it).
func thread(L *lua.LState) *lua.LState {
	ctx := L.RemoveContext()
	co, _ := L.NewThread()
	if ctx != nil {
		L.SetContext(ctx)
		co.SetContext(ctx)
	}
	return co
}

func protectedCall(L *lua.LState, handler, keep *lua.LFunction, nargs int) int {
	s := stateOf(L)
	if s != nil {
		if s.protected >= maxProtected {
			L.RaiseError("pcall: protected calls nest deeper than %d", maxProtected)
		}
		s.protected++
		defer func() { s.protected-- }()
	}
	if fn, ok := L.Get(1).(*lua.LFunction); ok && fn.IsG {
		// A Go function opens no upvalues, and its errors keep the
		// caller's position: it runs here, with an error handler, which
		// keeps gopher-lua from closing the caller's upvalues.
		if handler == nil {
			handler = keep
		}
		base := L.GetTop() - nargs - 1
		if err := L.PCall(nargs, lua.MultRet, handler); err != nil {
			return failed(L, err)
		}
		n := L.GetTop() - base
		L.Insert(lua.LTrue, base+1)
		return n + 1
	}
	co := thread(L)
	for k := 1; k <= nargs+1; k++ {
		co.Push(L.Get(k))
	}
	err := co.PCall(nargs, lua.MultRet, handler)
	if err != nil {
		return failed(L, err)
	}
	n := co.GetTop()
	L.Push(lua.LTrue)
	for k := 1; k <= n; k++ {
		L.Push(co.Get(k))
	}
	return n + 1
}

// protectedCalls returns the sandbox's pcall and xpcall.
func protectedCalls(L *lua.LState) (pcall, xpcall *lua.LFunction) {
	keep := L.NewFunction(keepError)
	pcall = L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() == 0 {
			L.ArgError(1, "value expected")
		}
		return protectedCall(L, nil, keep, L.GetTop()-1)
	})
	xpcall = L.NewFunction(func(L *lua.LState) int {
		handler := L.CheckFunction(2)
		L.SetTop(1)
		return protectedCall(L, handler, keep, 0)
	})
	return pcall, xpcall
}

// keepError is the error handler that keeps the error as it is.
func keepError(L *lua.LState) int { return 1 }

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
