package luabind

import (
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// R1.12: a generic for whose list computes a value from a call before
// calling a method on it runs as Lua says, at the top level and inside a
// function (gopher-lua v1.1.2 compiles it into a nil-pointer panic).
func TestForListShapes(t *testing.T) {
	var got []string
	s := NewState(Options{Print: func(line string) { got = append(got, line) }})
	defer s.Close()
	src := `
local function f(x) return x end
local s = "b\nc"
for l in (f("a\n") .. s):gmatch("[^\n]+") do print("top " .. l) end
local function g()
  for l in (f("d\n") .. s):gmatch("[^\n]+") do print("fn " .. l) end
  for k, v in next, {f("x")} do print("next " .. k .. v) end
  for w in string.gmatch(f("p q") .. " r", "%a+") do print("arg " .. w) end
  for n in (function() local i = 0 return function() i = i + 1 if i <= 2 then return i end end end)() do print("iter " .. n) end
  for _, v in ipairs({f(1) + 1, f(2) * 2}) do print("ipairs " .. v) end
end
g()
`
	if err := run(t, s, Callback, src); err != nil {
		t.Fatal(err)
	}
	want := []string{"top a", "top b", "top c", "fn d", "fn b", "fn c", "next 1x", "arg p", "arg q", "arg r",
		"iter 1", "iter 2", "ipairs 2", "ipairs 4"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("printed %q\nwant    %q", got, want)
	}
}

// R1.12: a Go panic raised while script runs (inside the VM, or in a Go
// function the script called) is a script error at the script's current
// line, never a bare Go runtime error.
func TestGoPanicIsPositioned(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	s.L.SetGlobal("explode", s.L.NewFunction(func(L *lua.LState) int {
		var m map[string]int
		m["x"] = 1 //lint:ignore SA5000 the Go runtime panic is what the test raises
		return 0
	}))
	err := run(t, s, Callback, "local x = 1\nlocal function f()\n  explode()\nend\nf()\n")
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "t.lua:3: ") || !strings.Contains(msg, "assignment to entry in nil map") {
		t.Fatalf("error %q: want it at t.lua:3 with the panic's text", msg)
	}
	var se *ScriptError
	if !asScriptError(err, &se) {
		t.Fatalf("error %T is not a *ScriptError", err)
	}
}

func asScriptError(err error, se **ScriptError) bool {
	x, ok := err.(*ScriptError)
	*se = x
	return ok
}
