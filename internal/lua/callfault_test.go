package lua

import (
	"strings"
	"testing"
)

// A call that finds no function names what the source called (attune):
// gopher-lua said only "attempt to call a non-function object".
func TestCallFaultNamesTheCallee(t *testing.T) {
	cases := []struct{ src, callee, kind, msg string }{
		{"refuze('x')", "refuze", "global", "attempt to call global 'refuze' (a nil value)"},
		{"hook = {} hook.tol('x')", "hook.tol", "global", "attempt to call field 'hook.tol' (a nil value)"},
		{"local t = {a = {}} t.a.b()", "t.a.b", "local", "attempt to call field 't.a.b' (a nil value)"},
		{"local n = 3 n()", "n", "local", "attempt to call local 'n' (a number value)"},
		{"local r = {} local function f() return r:branch() end f()", "r:branch", "method", "attempt to call method 'r:branch' (a nil value)"},
		{"local up = 1 local function f() up() end f()", "up", "upvalue", "attempt to call upvalue 'up' (a number value)"},
		{"local function f() return missing(1) end f()", "missing", "global", "attempt to call global 'missing' (a nil value)"},
	}
	for _, c := range cases {
		L := NewState()
		err := L.DoString(c.src)
		if err == nil {
			t.Fatalf("%s: no error", c.src)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %q does not say %q", c.src, err, c.msg)
		}
		f := L.TakeCallFault()
		if f == nil || f.Callee != c.callee || f.Kind != c.kind {
			t.Errorf("%s: fault %+v, want callee %q kind %q", c.src, f, c.callee, c.kind)
		} else if !strings.Contains(err.Error(), f.Message) {
			t.Errorf("%s: fault message %q is not the error's %q", c.src, f.Message, err)
		}
		if L.TakeCallFault() != nil {
			t.Errorf("%s: a fault taken twice", c.src)
		}
		L.Close()
	}
	// a call of an expression the compiler cannot spell keeps the old words
	L := NewState()
	defer L.Close()
	err := L.DoString("local t = {} t[1]()")
	if err == nil || !strings.Contains(err.Error(), "attempt to call a non-function object") {
		t.Errorf("t[1](): %v", err)
	}
	if f := L.TakeCallFault(); f != nil {
		t.Errorf("t[1](): fault %+v", f)
	}
}
