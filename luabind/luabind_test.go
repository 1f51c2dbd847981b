package luabind

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"
)

func run(t *testing.T, s *State, a Ambient, src string) error {
	t.Helper()
	p, err := Compile("t.lua", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s.Call(a, s.Load(p), 0)
}

// R1.11: the sandbox removes what gopher-lua's base library defines.
func TestSandbox(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	for _, name := range []string{"dofile", "loadfile", "collectgarbage", "module", "getfenv", "setfenv",
		"newproxy", "_printregs", "require", "os", "io", "debug", "package", "coroutine", "channel"} {
		if err := run(t, s, Callback, "assert("+name+" == nil, '"+name+" present')"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := run(t, s, Callback, "assert(string.dump == nil); assert(('x').dump == nil)"); err != nil {
		t.Error(err)
	}
	if err := run(t, s, Callback, "assert(loadstring('return 1')() == 1)"); err != nil {
		t.Error(err)
	}
	if err := run(t, s, Callback, "loadstring('\\27Lua')"); err == nil || !strings.Contains(err.Error(), "binary chunks") {
		t.Errorf("binary chunk: %v", err)
	}
	if err := run(t, s, Callback, "os.execute('true')"); err == nil || !strings.Contains(err.Error(), "'execute'") {
		t.Errorf("os.execute: %v", err)
	}
	if err := run(t, s, Callback, "io.open('/etc/passwd')"); err == nil {
		t.Error("io.open ran")
	}
	if err := run(t, s, Callback, "string.rep('x', 1e9)"); err == nil || !strings.Contains(err.Error(), "string.rep") {
		t.Errorf("string.rep bound: %v", err)
	}
}

// R1.11: math.random is seeded per state.
func TestRandomSeededPerState(t *testing.T) {
	draw := func(seed uint64) []float64 {
		s := NewState(Options{Seed: seed})
		defer s.Close()
		var out []float64
		for range 3 {
			if err := s.Call(Callback, s.L.GetField(s.L.GetGlobal("math"), "random"), 1); err != nil {
				t.Fatal(err)
			}
			out = append(out, float64(s.L.Get(-1).(lua.LNumber)))
			s.L.Pop(1)
		}
		return out
	}
	if !reflect.DeepEqual(draw(1), draw(1)) || reflect.DeepEqual(draw(1), draw(2)) {
		t.Fatal("math.random is not seeded per state")
	}
}

// R1.11: a runaway callback is cancelled and the state stays usable.
func TestBudgetCancels(t *testing.T) {
	s := NewState(Options{Budget: 50 * time.Millisecond})
	defer s.Close()
	start := time.Now()
	err := run(t, s, Callback, "while true do end")
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "cancelled: time budget") {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("cancellation took too long")
	}
	if err := run(t, s, Callback, "local x = 0 for i = 1, 1000 do x = x + i end"); err != nil {
		t.Fatalf("state unusable after cancellation: %v", err)
	}
	// pcall cannot swallow a cancellation.
	err = run(t, s, Callback, "while true do pcall(function() while true do end end) end")
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("pcall swallowed the cancellation: %v", err)
	}
}

// Time spent in host work (a Leaves func) does not count against the budget.
func TestBudgetPausesForHostWork(t *testing.T) {
	s := NewState(Options{Budget: 30 * time.Millisecond})
	defer s.Close()
	s.Open(NewLibrary([]*Func{{Name: "host/slow", Ambients: Callback, Leaves: true, Fn: func(s *State) int {
		time.Sleep(80 * time.Millisecond)
		return 0
	}}}))
	if err := run(t, s, Callback, "host.slow() host.slow()"); err != nil {
		t.Fatal(err)
	}
}

// R1.4, R1.5: the choke point enforces ambients with the contract's texts.
func TestAmbients(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	s.Open(NewLibrary([]*Func{
		{Name: "define/tool", Ambients: Register, Register: true, Fn: func(*State) int { return 0 }},
		{Name: "propose", Ambients: Callback, Fn: func(*State) int { return 0 }},
	}))
	if err := run(t, s, Register, "define.tool()"); err != nil {
		t.Fatal(err)
	}
	err := run(t, s, Callback, "define.tool()")
	if err == nil || !strings.Contains(err.Error(), "register form define/tool outside the register ambient") || !strings.HasPrefix(err.Error(), "t.lua:1:") {
		t.Fatalf("callback: %v", err)
	}
	err = run(t, s, Reducer, "propose()")
	if err == nil || !strings.Contains(err.Error(), "propose is not available in the reducer ambient") {
		t.Fatalf("reducer: %v", err)
	}
	err = run(t, s, Reducer, "define.tool()")
	if err == nil || !strings.Contains(err.Error(), "define/tool is not available in the reducer ambient") {
		t.Fatalf("reducer register form: %v", err)
	}
}

func TestConvertRoundTrip(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	for _, v := range []any{nil, true, false, 3.0, -1.5, "x", "", []any{}, map[string]any{},
		[]any{1.0, "a", []any{}, map[string]any{"k": []any{true}}},
		map[string]any{"a": 1.0, "b": map[string]any{"c": "d", "e": []any{}}, "n": nil},
	} {
		got, err := s.FromLua(s.ToLua(v))
		if err != nil {
			t.Fatal(err)
		}
		want := v
		if m, ok := v.(map[string]any); ok {
			if _, has := m["n"]; has { // nil values vanish in Lua tables
				c := map[string]any{}
				for k, e := range m {
					if e != nil {
						c[k] = e
					}
				}
				want = c
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip %#v: got %#v", v, got)
		}
	}
	if err := run(t, s, Callback, "x = {1, 2, f = print}"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FromLua(s.L.GetGlobal("x")); err == nil || !strings.Contains(err.Error(), "value.f: not plain data: function") {
		t.Fatalf("function in data: %v", err)
	}
	if err := run(t, s, Callback, "y = {} y.self = y"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FromLua(s.L.GetGlobal("y")); err == nil {
		t.Fatal("cycle converted")
	}
}

func TestSyntaxError(t *testing.T) {
	_, err := Compile("bad.lua", []byte("x = 1\nif then\n"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || !strings.HasPrefix(err.Error(), "bad.lua:2:") {
		t.Fatalf("got %v", err)
	}
}

func TestToLuaStructAsPlainData(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	type rec struct {
		Name string `json:"name"`
		N    int    `json:"n"`
	}
	got, err := s.FromLua(s.ToLua(rec{"x", 2}))
	if err != nil || !reflect.DeepEqual(got, map[string]any{"name": "x", "n": 2.0}) {
		t.Fatalf("got %#v %v", got, err)
	}
}

// R1.2: the libraries are shared read-only; a write lands in one state only.
func TestSharedLibrariesIsolated(t *testing.T) {
	a, b := NewState(Options{}), NewState(Options{})
	defer a.Close()
	defer b.Close()
	if err := run(t, a, Callback, `string.upper = nil; math.floor = function() return 7 end; table.x = 1`); err != nil {
		t.Fatal(err)
	}
	if err := run(t, b, Callback, `assert(string.upper("a") == "A"); assert(math.floor(1.5) == 1); assert(table.x == nil); assert(("a"):upper() == "A")`); err != nil {
		t.Fatal(err)
	}
	if err := run(t, a, Callback, `assert(getmetatable("") == false); assert(getmetatable(string) == false)`); err != nil {
		t.Fatal(err)
	}
	if err := run(t, a, Callback, `setmetatable(string, {})`); err == nil || !strings.Contains(err.Error(), "protected metatable") {
		t.Fatalf("setmetatable on a library: %v", err)
	}
}

// A raised value's __tostring never runs outside the callback's budget.
func TestErrorObjectNotStringified(t *testing.T) {
	s := NewState(Options{Budget: 50 * time.Millisecond})
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		done <- run(t, s, Callback, `error(setmetatable({}, {__tostring = function() while true do end end}))`)
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "error object: table") {
			t.Fatalf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a __tostring metamethod ran outside the budget")
	}
	if err := run(t, s, Callback, `error({message = "structured"})`); err == nil || err.Error() != "t.lua:1: structured" {
		t.Fatalf("got %v", err)
	}
}

// R1.12: a compile error says where, also at the end of the file, and
// advises splitting a function only when the function is over a limit.
func TestCompileErrorsSayWhere(t *testing.T) {
	for _, c := range []struct{ src, want, not string }{
		{"-- x\nlocal t = {1,\n  2", "t.lua:3: syntax error near '2' at the end of the file", ""},
		{"local t = {1,\n", "t.lua:1: ", ""},
		{"goto done\n", "no visible label 'done' for <goto> at line 1", "too big"},
		{"for i = 1, 2 do end\nbreak\n", "no loop to break", "too big"},
	} {
		_, err := Compile("t.lua", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.not != "" && strings.Contains(err.Error(), c.not)) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}
