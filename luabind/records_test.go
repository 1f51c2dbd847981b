package luabind

import (
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// The pool learns whether a handler added keys to a record from
// LTable.KeysEverSet (our gopher-lua): a key set to nil stays counted.
func TestRecordPoolSeesKeys(t *testing.T) {
	st := NewState(Options{})
	defer st.Close()
	tb := st.L.CreateTable(0, 0)
	tb.RawSetString("a", lua.LTrue)
	tb.RawSetString("b", lua.LTrue)
	tb.RawSetString("a", lua.LNil) // a cleared key stays counted
	if n := tb.KeysEverSet(); n != 2 {
		t.Fatalf("KeysEverSet = %d after setting a and b, want 2", n)
	}
	var p RecordPool
	r := p.Get(st.L, []string{"a"})
	r.RawSetString("mine", lua.LTrue) // a handler's own key
	p.Put(r)
	if p.Get(st.L, []string{"a"}) == r {
		t.Fatal("a record a handler added a key to was recycled")
	}
}

// A record comes back for reuse unless its handler added a key, a list
// item or a metatable.
func TestRecordPoolRecycles(t *testing.T) {
	st := NewState(Options{})
	defer st.Close()
	fields := []string{"a", "b"}
	var p RecordPool
	r := p.Get(st.L, fields)
	SetField(r, "a", lua.LString("x"))
	SetString(r, "b", "")
	if r.RawGetString("b") != lua.LNil {
		t.Fatal("SetString of an empty string left the field set")
	}
	p.Put(r)
	if p.Get(st.L, fields) != r {
		t.Fatal("a clean record was not recycled")
	}
	for name, spoil := range map[string]func(*lua.LTable){
		"own key":   func(t *lua.LTable) { t.RawSetString("mine", lua.LTrue) },
		"list item": func(t *lua.LTable) { t.RawSetInt(1, lua.LTrue) },
		"metatable": func(t *lua.LTable) { t.Metatable = st.L.CreateTable(0, 0) },
	} {
		r := p.Get(st.L, fields)
		spoil(r)
		p.Put(r)
		if p.Get(st.L, fields) == r {
			t.Fatalf("a record with its handler's %s was recycled", name)
		}
	}
}
