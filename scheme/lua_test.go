package scheme

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// newLuaState opens a state the way the engine does: no libraries but base,
// table, string and math, and a global list() that returns an empty table
// marked as a list (by a metatable the state keeps in the registry).
func newLuaState(t testing.TB) *lua.LState {
	t.Helper()
	L := openLuaState()
	t.Cleanup(L.Close)
	return L
}

// openLuaState is newLuaState for a caller that closes the state itself
// (a test that opens thousands keeps none of them to its end).
func openLuaState() *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range []string{"dofile", "loadfile", "load", "loadstring", "require", "module"} {
		L.SetGlobal(name, lua.LNil)
	}
	listMeta := L.NewTable()
	L.SetField(L.Get(lua.RegistryIndex), "scheme.list", listMeta)
	L.SetGlobal("list", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		L.SetMetatable(t, listMeta)
		L.Push(t)
		return 1
	}))
	return L
}

// runLowered lowers src and runs it in L under the chunk name file.
func runLowered(t testing.TB, L *lua.LState, file, src string) error {
	t.Helper()
	out, err := Lower(file, []byte(src))
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}
	fn, err := L.Load(strings.NewReader(out), file)
	if err != nil {
		t.Fatalf("load lowered Lua: %v\n%s", err, out)
	}
	L.Push(fn)
	return L.PCall(0, 0, nil)
}

// show prints a Lua value the way the tests spell expectations: lists as
// (a b), the empty list as (), maps as {k=v} with sorted keys, an empty table
// that is not marked as a list as {}.
func show(L *lua.LState, v lua.LValue) string {
	switch v := v.(type) {
	case *lua.LNilType:
		return "nil"
	case lua.LBool:
		if v {
			return "#t"
		}
		return "#f"
	case lua.LNumber:
		f := float64(v)
		if f == float64(int64(f)) {
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case lua.LString:
		return strconv.Quote(string(v))
	case *lua.LFunction:
		return "<function>"
	case *lua.LTable:
		n := v.Len()
		keys := 0
		v.ForEach(func(lua.LValue, lua.LValue) { keys++ })
		marked := L.GetMetatable(v) == L.GetField(L.Get(lua.RegistryIndex), "scheme.list")
		if keys == 0 {
			if marked {
				return "()"
			}
			return "{}"
		}
		if keys == n {
			parts := make([]string, n)
			for i := 1; i <= n; i++ {
				parts[i-1] = show(L, v.RawGetInt(i))
			}
			return "(" + strings.Join(parts, " ") + ")"
		}
		var parts []string
		v.ForEach(func(k, x lua.LValue) {
			parts = append(parts, show(L, k)+"="+show(L, x))
		})
		sort.Strings(parts)
		return "{" + strings.Join(parts, " ") + "}"
	}
	return fmt.Sprintf("<%s>", v.Type())
}
