package scheme

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// TestTraceLines runs tests/scheme/trace/handlers.scm: every tool handler in
// it throws, and the runtime error must name the .scm file and the line
// marked "throws NAME", because lowered Lua keeps the source's lines.
// R7.4
func TestTraceLines(t *testing.T) {
	path := filepath.Join(dataDir, "trace", "handlers.scm")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const file = "handlers.scm"
	want := map[string]int{}
	marker := regexp.MustCompile(`; throws (\S+)`)
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		if m := marker.FindStringSubmatch(sc.Text()); m != nil {
			want[m[1]] = line
		}
	}
	if len(want) < 5 {
		t.Fatalf("only %d markers in %s", len(want), path)
	}

	L := newLuaState(t)
	handlers := map[string]*lua.LFunction{}
	define := L.NewTable()
	L.SetField(define, "tool", L.NewFunction(func(L *lua.LState) int {
		handlers[L.CheckString(1)] = L.CheckFunction(2)
		return 0
	}))
	L.SetGlobal("define", define)
	L.SetGlobal("notify", L.NewFunction(func(L *lua.LState) int { return 0 }))
	if err := runLowered(t, L, file, string(src)); err != nil {
		t.Fatalf("top level: %v", err)
	}
	for name, line := range want {
		if name == "nested" {
			continue // thrown by helper, called from the "nested" tool below
		}
		t.Run(name, func(t *testing.T) {
			h := handlers[name]
			if h == nil {
				t.Fatalf("no tool %q registered", name)
			}
			err := L.CallByParam(lua.P{Fn: h, NRet: 1, Protect: true}, L.NewTable(), L.NewTable())
			if err == nil {
				t.Fatal("handler did not throw")
			}
			prefix := file + ":" + strconv.Itoa(line) + ":"
			if msg := err.Error(); !strings.HasPrefix(msg, prefix) {
				t.Errorf("error does not start with %s:\n%s", prefix, msg)
			}
		})
	}
	t.Run("traceback", func(t *testing.T) {
		err := L.CallByParam(lua.P{Fn: handlers["nested"], NRet: 1, Protect: true}, L.NewTable(), L.NewTable())
		if err == nil {
			t.Fatal("handler did not throw")
		}
		msg := err.Error()
		if prefix := file + ":" + strconv.Itoa(want["nested"]) + ":"; !strings.HasPrefix(msg, prefix) {
			t.Errorf("error does not start with %s:\n%s", prefix, msg)
		}
		// The traceback names the line of the call in the tool's handler.
		if !strings.Contains(msg, file+":22:") {
			t.Errorf("traceback does not name %s:22 (the call of helper):\n%s", file, msg)
		}
	})
}

// TestTraceInline checks line alignment on forms spread over lines, with the
// error raised at several depths of expression nesting.
// R7.4
func TestTraceInline(t *testing.T) {
	cases := []struct {
		src  string
		line int
	}{
		{"(define (f)\n  (error \"x\"))\n(f)", 2},
		{"\n\n\n(error \"x\")", 4},
		{"(notify\n  (string-append \"a\"\n    (let ((x nil))\n      (+ x 1))))", 4},
		{"(define x\n  (cond\n    ((= 1 2) 1)\n    (else (error \"no\"))))", 4},
		{"(let loop ((i 0))\n  (if (< i 3)\n      (loop (+ i 1))\n      (error \"done\")))", 4},
		{"(define t (table))\n(put! (get t :x)\n  :y 1)", 2},
		{"(fold (lambda (x acc)\n        (error \"in fold\"))\n      0 (list 1))", 2},
		{"(length\n  5)", 1},
	}
	for _, tc := range cases {
		L := newLuaState(t)
		L.SetGlobal("notify", L.NewFunction(func(L *lua.LState) int { return 0 }))
		err := runLowered(t, L, "inline.scm", tc.src)
		if err == nil {
			t.Errorf("%q: no error", tc.src)
			continue
		}
		if prefix := "inline.scm:" + strconv.Itoa(tc.line) + ":"; !strings.HasPrefix(err.Error(), prefix) {
			out, _ := Lower("inline.scm", []byte(tc.src))
			t.Errorf("%q: error does not start with %s:\n%v\nlowered:\n%s", tc.src, prefix, err, out)
		}
	}
}
