package luabind

import (
	"errors"
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// sharedGo is 2^n leaves in n Go maps: each level holds the one below
// twice.
func sharedGo(n int) any {
	var t any = map[string]any{}
	for range n {
		t = map[string]any{"a": t, "b": t}
	}
	return t
}

// R1.11: Go data converted into a state is counted like data leaving it: a
// map reached from several places counts each time, over the limits is a
// *LimitError (ErrMemory) with the path, before the copy grows.
func TestToLuaCountsAgainstTheDataLimits(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	big := make([]any, MaxDataNodes)
	for i := range big {
		big[i] = i
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for name, c := range map[string]struct {
		v    any
		want string
		mem  bool
	}{
		"shared maps":     {sharedGo(24), "memory: over the data limit of 262144 values", true},
		"a long list":     {big, "memory: over the data limit of 262144 values", true},
		"text":            {[]string{strings.Repeat("x", 10<<20), strings.Repeat("y", 7<<20)}, "args[2]: memory: over the data limit of 16777216 bytes", true},
		"map of strings":  {map[string]any{"m": map[string]string{"k": strings.Repeat("x", 17<<20)}}, "args.m.k: memory: over the data limit", true},
		"a cycle":         {cyclic, "nested deeper than 64 (a cycle?)", false},
		"a struct's JSON": {struct{ L []int }{L: make([]int, MaxDataNodes)}, "args.L[262143]: memory: over the data limit", true},
	} {
		lv, err := s.ToLuaChecked(c.v, "args")
		var le *LimitError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrMemory) != c.mem {
			t.Errorf("%s: got %v (%v), want a LimitError with %q", name, err, lv, c.want)
		}
	}
	// shared but small: copied each time it is reached
	lv, err := s.ToLuaChecked(sharedGo(8), "args")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.FromLua(lv); err != nil || got.(map[string]any)["a"] == nil {
		t.Fatalf("%v %v", got, err)
	}
}

// A conversion over the limits made outside a callback (the engine
// converting a callback's arguments) fails the callback it was made for,
// before it runs; the next callback runs as usual.
func TestToLuaOverTheLimitsFailsTheNextCallback(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	p, err := Compile("t.lua", []byte(`ran = 0; return function(args) ran = ran + 1 end`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Call(Register, s.Load(p), 1); err != nil {
		t.Fatal(err)
	}
	fn := s.L.Get(-1)
	s.L.Pop(1)
	err = s.Call(Callback, fn, 0, s.ToLua(sharedGo(24)))
	if !errors.Is(err, ErrMemory) || !strings.HasPrefix(err.Error(), "value.a.a.a") {
		t.Fatalf("got %v", err)
	}
	if err := s.Call(Callback, fn, 0, s.ToLua(sharedGo(4))); err != nil {
		t.Fatalf("the next callback: %v", err)
	}
	if ran := s.L.GetGlobal("ran"); ran != lua.LNumber(1) {
		t.Fatalf("the callback ran %v times, want 1 (not the one whose argument was over the limits)", ran)
	}
}

// A result an engine function converts for the script that is over the
// limits is an error where the script called it (pcall sees it); a
// conversion inside a callback that nothing raised fails the callback.
func TestToLuaOverTheLimitsInAFunctionRaises(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	s.Open(NewLibrary([]*Func{
		{Name: "host/give", Ambients: Callback, Leaves: true, Fn: func(s *State) int {
			s.L.Push(s.ToLua(sharedGo(int(s.L.CheckNumber(1)))))
			return 1
		}},
	}))
	if err := run(t, s, Callback, `
		local ok, e = pcall(host.give, 24)
		assert(not ok and e:find("host.give: value.a.a", 1, true) and e:find("memory: over the data limit", 1, true), tostring(e))
		assert(type(host.give(3)) == "table")`); err != nil {
		t.Fatal(err)
	}
	err := run(t, s, Callback, `host.give(24)`)
	var se *ScriptError
	if !strings.Contains(err.Error(), "t.lua:1: host.give: value.a") || !errors.As(err, &se) || se.Code != "memory" || se.Position != "t.lua:1" {
		t.Fatalf("got %v", err)
	}
}
