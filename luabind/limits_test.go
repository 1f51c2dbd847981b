package luabind

import (
	"errors"
	lua "github.com/attune-dev/attune/internal/lua"
	"strings"
	"testing"
	"time"
)

// Deeply nested or oversized sources are a clear compile error, in a pack
// file and in a script's load, never a Go stack overflow.
func TestCompileLimits(t *testing.T) {
	shapes := map[string]string{
		"not":    "return " + strings.Repeat("not ", 5_000) + "1",
		"table":  "return " + strings.Repeat("{", 5_000) + strings.Repeat("}", 5_000),
		"call":   "return f" + strings.Repeat("()", 5_000),
		"field":  "return x" + strings.Repeat(".a", 5_000),
		"concat": "return 'a'" + strings.Repeat("..'a'", 5_000),
		"plus":   "return 1" + strings.Repeat("+1", 5_000),
		"block":  strings.Repeat("do ", 5_000) + strings.Repeat("end ", 5_000),
		"elseif": "if x then" + strings.Repeat(" elseif x then", 5_000) + " end",
		"func":   strings.Repeat("return function() ", 5_000) + strings.Repeat("end ", 5_000),
		"big":    "return " + strings.Repeat("not ", 2_000_000) + "1",
	}
	for name, src := range shapes {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := Compile("deep.lua", []byte(src))
			if !errors.Is(err, ErrCompileLimit) || !strings.HasPrefix(err.Error(), "deep.lua:") {
				t.Fatalf("pack file: got %v, want a compile limit error naming deep.lua", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("pack file: took %v", d)
			}
			if len(src) > MaxSource {
				return
			}
			s := NewState(Options{Budget: 5 * time.Second})
			defer s.Close()
			s.L.SetGlobal("src", lua.LString(src))
			err = run(t, s, Callback, `local f, err = load(src)
				assert(f == nil, "loaded")
				assert(err:find("compile limit", 1, true), err)`)
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// parentheses make no tree nodes; what real programs do stays well
	// inside the limits
	ok := "local x = " + strings.Repeat("(", 20_000) + "1" + strings.Repeat(")", 20_000) + "\n" +
		"if x == 1 then" + strings.Repeat(" elseif x == 2 then", 150) + " end\nreturn 'a'" + strings.Repeat("..'a'", 150)
	if _, err := Compile("ok.lua", []byte(ok)); err != nil {
		t.Fatal(err)
	}
}

// load stops parsing when the callback's budget is spent, and the callback
// fails even if the script catches the error.
func TestLoadUnderBudget(t *testing.T) {
	s := NewState(Options{Budget: 50 * time.Millisecond})
	defer s.Close()
	s.L.SetGlobal("src", lua.LString("local x = 1\n"+strings.Repeat("x = x + 1\n", 90_000)))
	start := time.Now()
	err := run(t, s, Callback, `while true do pcall(load, src) end`)
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("got %v, want the budget", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	if err := run(t, s, Callback, `assert(load("return 1 + 1")() == 2)`); err != nil {
		t.Fatalf("state unusable after: %v", err)
	}
}
