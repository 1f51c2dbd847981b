package luabind

import (
	"math"
	"unicode/utf8"

	lua "github.com/attune-dev/attune/internal/lua"
)

// Unchanged reports whether FromLua(v) would succeed and give back plain
// exactly: a caller that converted plain (plain data, see Plain) into v
// and handed v to a script can keep plain instead of converting v back
// when the script left it as it was. It checks what FromLua checks (the
// data limits, valid UTF-8, finite numbers) and reads tables without
// copying them; any doubt answers false, and the caller converts.
func (s *State) Unchanged(v lua.LValue, plain any) bool {
	w := unchangedWalk{listMeta: s.ListMeta}
	return w.same(v, plain, 0)
}

// unchangedWalk counts what it reads as CheckData does.
type unchangedWalk struct {
	listMeta     lua.LValue
	nodes, bytes int
}

func (w *unchangedWalk) str(s string) bool {
	w.bytes += len(s)
	return w.bytes <= MaxDataBytes && utf8.ValidString(s)
}

func (w *unchangedWalk) same(v lua.LValue, p any, depth int) bool {
	if w.nodes++; w.nodes > MaxDataNodes {
		return false
	}
	switch x := p.(type) {
	case nil:
		return v == lua.LNil
	case bool:
		b, ok := v.(lua.LBool)
		return ok && bool(b) == x
	case float64:
		n, ok := v.(lua.LNumber)
		return ok && math.Float64bits(float64(n)) == math.Float64bits(x) && !math.IsInf(x, 0) && !math.IsNaN(x)
	case string:
		t, ok := v.(lua.LString)
		return ok && string(t) == x && w.str(x)
	case []any:
		t, ok := v.(*lua.LTable)
		if !ok || depth >= maxDepth {
			return false
		}
		if len(x) == 0 {
			return t.Metatable == w.listMeta && entries(t) == 0
		}
		// keys exactly 1..n, each holding its element (a nil element would
		// not survive the conversion): Len is n, no key follows n, and
		// every element is there
		if t.Len() != len(x) {
			return false
		}
		if k, _ := t.Next(lua.LNumber(len(x))); k != lua.LNil {
			return false
		}
		for k, e := range x {
			if e == nil || !w.same(t.RawGetInt(k+1), e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		t, ok := v.(*lua.LTable)
		if !ok || depth >= maxDepth {
			return false
		}
		if len(x) == 0 {
			return t.Metatable != w.listMeta && entries(t) == 0
		}
		// as many entries as keys, and every key holds its value: the
		// table has exactly these string keys, so it reads back as a map
		if entries(t) != len(x) {
			return false
		}
		for k, e := range x {
			if e == nil || !w.str(k) || !w.same(t.RawGetString(k), e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// entries counts the keys of t.
func entries(t *lua.LTable) int { return t.Count() }
