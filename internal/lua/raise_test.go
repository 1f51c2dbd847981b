package lua

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/attune-dev/attune/internal/lua/parse"
)

// A raised error records where it was raised and the code a host gave it
// (attune), so a host never reads them back from the message.
func TestRaiseRecordsPositionAndCode(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.SetGlobal("coded", L.NewFunction(func(L *LState) int {
		L.RaiseCoded("grant", "grant: %s", "no")
		return 0
	}))
	cases := []struct{ src, where, code, msg string }{
		{"\nerror('boom')", "x.lua:2:", "", "x.lua:2: boom"},
		{"\n\ncoded()", "x.lua:3:", "grant", "x.lua:3: grant: no"},
		{"local ok, e = pcall(coded)\nerror(e)", "x.lua:2:", "", "x.lua:2: x.lua:1: grant: no"},
	}
	for _, c := range cases {
		fn, err := L.Load(strings.NewReader(c.src), "x.lua")
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		err = L.PCall(0, 0, nil)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Fatalf("%q: %v", c.src, err)
		}
		r := L.TakeRaise()
		if r == nil || r.Where != c.where || r.Code != c.code || r.Message != c.msg || r.Position() != strings.TrimSuffix(c.where, ":") {
			t.Errorf("%q: raise %+v, want where %q code %q message %q", c.src, r, c.where, c.code, c.msg)
		}
		if L.TakeRaise() != nil {
			t.Errorf("%q: a raise taken twice", c.src)
		}
	}
	// error with a table and level 0: no position, or the value's
	fn, _ := L.Load(strings.NewReader("error('plain', 0)"), "x.lua")
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err == nil {
		t.Fatal("no error")
	}
	if r := L.TakeRaise(); r != nil {
		t.Errorf("level 0: raise %+v", r)
	}
	fn, _ = L.Load(strings.NewReader("local t = {}\nerror(t)"), "x.lua")
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err == nil {
		t.Fatal("no error")
	}
	if r := L.TakeRaise(); r == nil || r.Where != "x.lua:2:" || r.Value == nil || r.Message != "" {
		t.Errorf("table: raise %+v", r)
	}
}

// An error PCall recovers carries where it happened as data
// (ApiError.Where, attune): a Go panic inside the runtime included, which
// raises no Raise and whose message has no position.
func TestRecoveredErrorCarriesWhere(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.SetGlobal("explode", L.NewFunction(func(L *LState) int {
		panic("a Go function fell over")
	}))
	for _, c := range []struct{ src, where string }{
		{"local x = 1\n\nexplode()", "x.lua:3:"},
		{"local function f()\n  explode()\nend\nf()", "x.lua:2:"},
		{"error('boom', 0)", "x.lua:1:"},
	} {
		fn, err := L.Load(strings.NewReader(c.src), "x.lua")
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		err = L.PCall(0, 0, nil)
		api, ok := err.(*ApiError)
		if !ok || api.Where != c.where {
			t.Errorf("%q: %#v, want where %q", c.src, err, c.where)
		}
		L.TakeRaise()
	}
}

// A full call stack and a function over Lua's limits are told by data
// (attune): the panic's Cause is ErrCallStackOverflow, the compile error's
// Limit is set; neither is read from a message.
func TestLimitsAreData(t *testing.T) {
	L := NewState(Options{MinimizeStackMemory: true, CallStackSize: 200}) // the call stack luabind's states use
	defer L.Close()
	fn, err := L.Load(strings.NewReader("local function f() return f() + 1 end\nf()"), "x.lua")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	api, ok := err.(*ApiError)
	if !ok || api.Type != ApiErrorPanic || !errors.Is(api.Cause, ErrCallStackOverflow) || api.Where == "" {
		t.Fatalf("overflow: %#v", err)
	}
	var src strings.Builder
	for k := range 300 {
		fmt.Fprintf(&src, "local v%d = %d\n", k, k)
	}
	chunk, err := parse.Parse(strings.NewReader(src.String()), "big.lua")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(chunk, "big.lua")
	var ce *CompileError
	if !errors.As(err, &ce) || !ce.Limit {
		t.Fatalf("limit: %#v", err)
	}
	chunk, err = parse.Parse(strings.NewReader("goto nowhere"), "goto.lua")
	if err != nil {
		t.Fatal(err)
	}
	if _, err = Compile(chunk, "goto.lua"); !errors.As(err, &ce) || ce.Limit {
		t.Fatalf("not a limit: %#v", err)
	}
}
