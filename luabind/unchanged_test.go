package luabind

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// Plain data converted to Lua and left alone is unchanged; every edit a
// script can make to it is seen, so the caller converts it back.
func TestUnchanged(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	for _, plain := range []any{
		nil, true, false, 0.0, -1.5, "", "x", "ünï",
		[]any{}, map[string]any{},
		[]any{"a", 1.0, true}, map[string]any{"path": "/a", "n": 2.0, "ok": false, "list": []any{1.0, []any{}}},
		map[string]any{"1": "one"}, []any{map[string]any{"k": map[string]any{}}},
	} {
		v := s.ToLua(plain)
		if !s.Unchanged(v, plain) {
			t.Errorf("%#v: converted and left alone, but not unchanged", plain)
		}
	}
	edits := []struct {
		name  string
		plain any
		edit  func(v lua.LValue) lua.LValue
	}{
		{"a string for another", "x", func(lua.LValue) lua.LValue { return lua.LString("y") }},
		{"a number for a string", "1", func(lua.LValue) lua.LValue { return lua.LNumber(1) }},
		{"-0 for 0", 0.0, func(lua.LValue) lua.LValue { return lua.LNumber(math.Copysign(0, -1)) }},
		{"a field changed", map[string]any{"a": 1.0}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).RawSetString("a", lua.LNumber(2)); return v }},
		{"a field added", map[string]any{"a": 1.0}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).RawSetString("b", lua.LTrue); return v }},
		{"a field removed", map[string]any{"a": 1.0, "b": 2.0}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).RawSetString("b", lua.LNil); return v }},
		{"a field renamed", map[string]any{"a": 1.0}, func(v lua.LValue) lua.LValue {
			t := v.(*lua.LTable)
			t.RawSetString("a", lua.LNil)
			t.RawSetString("b", lua.LNumber(1))
			return v
		}},
		{"a number key added to a map", map[string]any{"a": 1.0}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).RawSetInt(1, lua.LTrue); return v }},
		{"an element appended", []any{1.0}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).Append(lua.LTrue); return v }},
		{"a key added to a list", []any{1.0}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).RawSetString("x", lua.LTrue); return v }},
		{"a far index added to a list", []any{1.0}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).RawSetInt(9, lua.LTrue); return v }},
		{"the last element removed", []any{1.0, 2.0}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).RawSetInt(2, lua.LNil); return v }},
		{"a hole", []any{1.0, 2.0, 3.0}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).RawSetInt(2, lua.LNil); return v }},
		{"a nested edit", map[string]any{"l": []any{"a"}}, func(v lua.LValue) lua.LValue {
			v.(*lua.LTable).RawGetString("l").(*lua.LTable).RawSetInt(1, lua.LString("b"))
			return v
		}},
		{"an empty list made a map", []any{}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).Metatable = lua.LNil; return v }},
		{"an empty map made a list", map[string]any{}, func(v lua.LValue) lua.LValue { v.(*lua.LTable).Metatable = s.ListMeta; return v }},
		{"a function", map[string]any{"a": 1.0}, func(v lua.LValue) lua.LValue {
			v.(*lua.LTable).RawSetString("a", s.L.NewFunction(func(*lua.LState) int { return 0 }))
			return v
		}},
		{"a cycle", map[string]any{"a": map[string]any{}}, func(v lua.LValue) lua.LValue {
			v.(*lua.LTable).RawSetString("a", v)
			return v
		}},
	}
	for _, c := range edits {
		v := c.edit(s.ToLua(c.plain))
		if s.Unchanged(v, c.plain) {
			t.Errorf("%s: reported unchanged", c.name)
		}
	}
	// what FromLua refuses is never unchanged
	for _, plain := range []any{"\xff", math.Inf(1), math.NaN(), map[string]any{"\xff": 1.0}} {
		if s.Unchanged(s.ToLua(plain), plain) {
			t.Errorf("%#v: FromLua refuses it, yet it is unchanged", plain)
		}
	}
}

// FuzzUnchanged: for any JSON document, Unchanged of its conversion agrees
// with converting it back: true only when FromLua gives the same value.
func FuzzUnchanged(f *testing.F) {
	for _, seed := range []string{`"x"`, `1`, `{"a":[1,2,{"b":null}]}`, `[]`, `{}`, `[[],{}]`, `{"1":2}`, `[1,null,3]`} {
		f.Add(seed)
	}
	s := NewState(Options{})
	defer s.Close()
	f.Fuzz(func(t *testing.T, doc string) {
		var plain any
		if json.Unmarshal([]byte(doc), &plain) != nil {
			return
		}
		v := s.ToLua(plain)
		back, err := s.FromLua(v)
		// the same value, -0 and 0 told apart (DeepEqual compares
		// floats with ==; the journal writes -0 as -0)
		same := err == nil && reflect.DeepEqual(back, plain) && sameJSON(back, plain)
		if got := s.Unchanged(v, plain); got && !same {
			t.Fatalf("%s: unchanged, but FromLua gives %#v (%v)", doc, back, err)
		} else if !got && same && !hasNull(plain) {
			t.Fatalf("%s: converted and left alone, but not unchanged", doc)
		}
	})
}

// hasNull reports a nil inside plain data (Lua keeps none: the conversion
// drops it, and Unchanged answers false).
func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

// sameJSON reports whether a and b encode alike.
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}
