package scheme

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// registerForms are the register forms of docs/forms.md, by the global
// that holds them and the field (or "" for a global function).
var registerForms = [][2]string{
	{"define", "tool"}, {"define", "reducer"}, {"define", "method"}, {"define", "command"},
	{"guard", "tool"}, {"guard", "turn"}, {"guard", "round"},
	{"hook", "tool"}, {"hook", "turn"}, {"hook", "round"},
	{"validate", "configuration"},
	{"subscribe", ""}, {"require", ""},
}

// record runs a program in a state whose register forms are recorders and
// returns one line per declaration: the form, then each argument described
// (strings, numbers, booleans, lists, maps with sorted keys, fn for a
// function). Every function is also probed: called with (config, invoke,
// {}) and its result described, so the handlers are compared too.
func record(t *testing.T, file, src string, scheme bool) []string {
	t.Helper()
	L := newLuaState(t)
	var lines []string
	var probes []*lua.LFunction
	var describe func(v lua.LValue) string
	describe = func(v lua.LValue) string {
		switch v := v.(type) {
		case *lua.LFunction:
			probes = append(probes, v)
			return "fn"
		case *lua.LTable:
			// Keys in sorted order, so functions are probed in the same order.
			var keys []lua.LValue
			n := v.Len()
			v.ForEach(func(k, x lua.LValue) {
				if kn, ok := k.(lua.LNumber); ok && float64(kn) == float64(int(kn)) && int(kn) >= 1 && int(kn) <= n {
					return
				}
				keys = append(keys, k)
			})
			sort.Slice(keys, func(i, j int) bool { return show(L, keys[i]) < show(L, keys[j]) })
			var parts []string
			for _, k := range keys {
				parts = append(parts, show(L, k)+"="+describe(v.RawGet(k)))
			}
			var items []string
			for i := 1; i <= n; i++ {
				items = append(items, describe(v.RawGetInt(i)))
			}
			if len(parts) == 0 && n == 0 {
				return show(L, v) // () for list(), {} otherwise
			}
			return "(" + strings.Join(items, " ") + ")" + "{" + strings.Join(parts, " ") + "}"
		}
		return show(L, v)
	}
	recorder := func(name string) *lua.LFunction {
		return L.NewFunction(func(L *lua.LState) int {
			parts := []string{name}
			for i := 1; i <= L.GetTop(); i++ {
				parts = append(parts, describe(L.Get(i)))
			}
			lines = append(lines, strings.Join(parts, " "))
			return 0
		})
	}
	tables := map[string]*lua.LTable{}
	for _, f := range registerForms {
		if f[1] == "" {
			L.SetGlobal(f[0], recorder(f[0]))
			continue
		}
		tb := tables[f[0]]
		if tb == nil {
			tb = L.NewTable()
			tables[f[0]] = tb
			L.SetGlobal(f[0], tb)
		}
		L.SetField(tb, f[1], recorder(f[0]+"/"+f[1]))
	}
	L.SetGlobal("config", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString("config:" + show(L, L.Get(1))))
		return 1
	}))
	for _, name := range []string{"notify", "propose", "refuse", "retry"} {
		name := name
		L.SetGlobal(name, L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LString(name + ":" + show(L, L.Get(1))))
			return 1
		}))
	}
	if scheme {
		if err := runLowered(t, L, file, src); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	} else if err := L.DoString(src); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	invoke := L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString("invoked"))
		return 1
	})
	conf := L.NewTable()
	L.SetField(conf, "limit", lua.LNumber(3))
	for i := 0; i < len(probes); i++ {
		err := L.CallByParam(lua.P{Fn: probes[i], NRet: 1, Protect: true}, conf, invoke, L.NewTable())
		if err != nil {
			t.Errorf("%s: probing handler %d: %v", file, i+1, err)
			continue
		}
		lines = append(lines, "probe "+describe(L.Get(-1)))
		L.Pop(1)
	}
	return lines
}

// TestRegisterParity runs each tests/scheme/parity/NAME.scm and NAME.lua with
// recorders in place of the register forms and checks that both register
// the same declarations, with the same arguments and options, and handlers
// that answer alike; every register form of docs/forms.md must appear.
// R7.2 R1.1
func TestRegisterParity(t *testing.T) {
	seen := map[string]bool{}
	for _, path := range dataFiles(t, "parity") {
		name := strings.TrimSuffix(filepath.Base(path), ".scm")
		t.Run(name, func(t *testing.T) {
			scm, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			luaSrc, err := os.ReadFile(strings.TrimSuffix(path, ".scm") + ".lua")
			if err != nil {
				t.Fatal(err)
			}
			got := record(t, name+".scm", string(scm), true)
			want := record(t, name+".lua", string(luaSrc), false)
			for i := 0; i < len(got) || i < len(want); i++ {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Errorf("declaration %d:\n  scheme: %s\n  lua:    %s", i+1, g, w)
				}
			}
			for _, l := range got {
				seen[strings.Fields(l)[0]] = true
			}
		})
	}
	for _, f := range registerForms {
		name := f[0]
		if f[1] != "" {
			name += "/" + f[1]
		}
		if !seen[name] {
			t.Errorf("no parity program uses %s", name)
		}
	}
}
