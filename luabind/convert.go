package luabind

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	lua "github.com/attune-dev/attune/internal/lua"
)

// maxDepth bounds nesting in plain data (and catches cycles).
const maxDepth = 64

// ToLua converts plain Go data into a Lua value of this state. Numbers of
// any Go numeric type become Lua numbers; []any and []string become lists;
// map[string]any and map[string]string become tables. An empty list gets
// the list marker so it converts back as a list.
//
// The conversion is counted against the data limits (datalimits.go) as it
// copies, a map or slice reached from several places counted each time it
// is reached, and nests at most 64 deep (a cycle). Over a limit the value
// is not made: ToLua returns nil and keeps the error for the state, and
// the first of these to come fails with it: the engine function that
// converted a result for the script (the script gets the error where it
// called), the callback the value was converted for (it fails before it
// runs: the engine converts a callback's arguments just before running
// it), or the callback during which it was converted. The error is a
// *LimitError, errors.Is ErrMemory for a value over the limits.
// ToLuaChecked returns the error instead.
func (s *State) ToLua(v any) lua.LValue {
	c := dataCount{}
	lv, err := s.toLua(v, &c, 0)
	if err == nil {
		return lv
	}
	err.Path = "value" + err.Path
	if s.pending == nil {
		s.pending = err
	}
	return lua.LNil
}

// ToLuaChecked is ToLua returning the error instead (root names the value
// in it: "args", "state").
func (s *State) ToLuaChecked(v any, root string) (lua.LValue, error) {
	c := dataCount{}
	lv, err := s.toLua(v, &c, 0)
	if err != nil {
		err.Path = root + err.Path
		return lua.LNil, err
	}
	return lv, nil
}

func (s *State) toLua(v any, c *dataCount, depth int) (lua.LValue, *LimitError) {
	if c.nodes++; c.nodes > MaxDataNodes {
		return nil, overNodes()
	}
	switch x := v.(type) {
	case nil:
		return lua.LNil, nil
	case bool:
		return lua.LBool(x), nil
	case float64:
		return s.L.NumberValue(lua.LNumber(x)), nil // boxed in a block of the state's
	case int:
		return s.L.NumberValue(lua.LNumber(x)), nil
	case int64:
		return lua.LNumber(x), nil
	case float32:
		return lua.LNumber(x), nil
	case int32:
		return lua.LNumber(x), nil
	case uint64:
		return lua.LNumber(x), nil
	case string:
		if err := c.size(x); err != nil {
			return nil, err
		}
		return s.L.StringValue(x), nil // a short one boxed in a block of the state's
	case []any:
		if depth >= maxDepth {
			return nil, tooDeep()
		}
		t := s.L.CreateTable(len(x), 0)
		for i, e := range x {
			lv, err := s.toLua(e, c, depth+1)
			if err != nil {
				err.Path = "[" + strconv.Itoa(i+1) + "]" + err.Path
				return nil, err
			}
			t.Append(lv)
		}
		if len(x) == 0 {
			t.Metatable = s.ListMeta
		}
		return t, nil
	case []string:
		t := s.L.CreateTable(len(x), 0)
		for i, e := range x {
			c.nodes++
			err := c.size(e)
			if err == nil && c.nodes > MaxDataNodes {
				err = overNodes()
			}
			if err != nil {
				err.Path = "[" + strconv.Itoa(i+1) + "]" + err.Path
				return nil, err
			}
			t.Append(lua.LString(e))
		}
		if len(x) == 0 {
			t.Metatable = s.ListMeta
		}
		return t, nil
	case map[string]any:
		if depth >= maxDepth {
			return nil, tooDeep()
		}
		// keys in sorted order: pairs() visits a table in the order its
		// keys were set, and a Go map's order changes from run to run
		t := s.L.CreateTable(0, len(x))
		var buf [16]field
		for _, f := range sortedFields(x, buf[:0]) {
			err := c.size(f.k)
			var lv lua.LValue
			if err == nil {
				lv, err = s.toLua(f.v, c, depth+1)
			}
			if err != nil {
				err.Path = "." + f.k + err.Path
				return nil, err
			}
			t.RawSetH(s.keyBox(f.k), lv)
		}
		return t, nil
	case map[string]string:
		t := s.L.CreateTable(0, len(x))
		var buf [16]string
		for _, k := range SortedKeys(x, buf[:0]) {
			c.nodes++
			err := c.size(k)
			if err == nil {
				err = c.size(x[k])
			}
			if err == nil && c.nodes > MaxDataNodes {
				err = overNodes()
			}
			if err != nil {
				err.Path = "." + k + err.Path
				return nil, err
			}
			t.RawSetString(k, lua.LString(x[k]))
		}
		return t, nil
	case lua.LValue:
		return x, nil
	}
	// Any other Go value (a host's struct, a typed slice) reaches script as
	// the plain data of its JSON form: the same value a replay reads back
	// from the journal.
	if data, err := json.Marshal(v); err == nil {
		var plain any
		if json.Unmarshal(data, &plain) == nil {
			c.nodes--
			return s.toLua(plain, c, depth)
		}
	}
	str := fmt.Sprint(v)
	if err := c.size(str); err != nil {
		return nil, err
	}
	return lua.LString(str), nil
}

// SortedKeys appends the keys of m to buf in sorted order. Every table the
// engine builds for a script from a Go map is filled in this order, so
// pairs() visits its keys identically in a session, its replay, a
// hydration and another process (gopher-lua's pairs follows the order in
// which keys were first set).
func SortedKeys[V any](m map[string]V, buf []string) []string {
	for k := range m {
		buf = append(buf, k)
	}
	slices.Sort(buf)
	return buf
}

// field is one entry of a map being converted.
type field struct {
	k string
	v any
}

// sortedFields appends the entries of m to buf in the order of their keys
// (read once: no lookup per key).
func sortedFields(m map[string]any, buf []field) []field {
	for k, v := range m {
		buf = append(buf, field{k, v})
	}
	if len(buf) > 12 {
		slices.SortFunc(buf, func(a, b field) int { return strings.Compare(a.k, b.k) })
		return buf
	}
	for i := 1; i < len(buf); i++ { // a few keys, most often: insertion
		for j := i; j > 0 && buf[j].k < buf[j-1].k; j-- {
			buf[j], buf[j-1] = buf[j-1], buf[j]
		}
	}
	return buf
}

// keyBoxes is how many converted map keys a state keeps boxed.
const keyBoxes = 32

// keyBox returns k as a Lua string. Hosts call the same tools with the same
// argument keys again and again, so a state keeps the keys it converted
// lately (short ones, one per slot of a small cache) and hands out the
// same box instead of allocating one per key per conversion; a Lua string
// cannot change, so sharing it is invisible.
func (s *State) keyBox(k string) lua.LValue {
	if len(k) == 0 || len(k) > 40 {
		return lua.LString(k)
	}
	h := (uint(len(k))*31 + uint(k[0])*7 + uint(k[len(k)-1])) % keyBoxes
	if b, ok := s.keys[h].(lua.LString); ok && string(b) == k {
		return s.keys[h]
	}
	b := lua.LValue(lua.LString(k))
	s.keys[h] = b
	return b
}

// NewList returns an empty table marked as a list.
func (s *State) NewList() *lua.LTable {
	t := s.L.CreateTable(0, 0)
	t.Metatable = s.ListMeta
	return t
}

// NewListCap returns an empty list with room for n elements (gopher-lua
// otherwise grows a list's first element into room for 32).
func (s *State) NewListCap(n int) *lua.LTable {
	t := s.L.CreateTable(n, 0)
	t.Metatable = s.ListMeta
	return t
}

// DataError says where a value is not plain data.
type DataError struct {
	Path string
	Msg  string
}

func (e *DataError) Error() string { return e.Path + ": " + e.Msg }

// FromLua converts a Lua value into plain Go data. A table whose keys are
// exactly 1..n (n >= 1) is a list; an empty table is a list when it carries
// the list marker, else a map. Other number keys of a map become decimal
// strings. Functions, userdata, threads and boolean keys are errors.
func (s *State) FromLua(v lua.LValue) (any, error) {
	if err := CheckData(v, "value"); err != nil { // datalimits.go
		return nil, err
	}
	return s.fromLua(v, "value", 0)
}

func (s *State) fromLua(v lua.LValue, path string, depth int) (any, error) {
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		return float64(x), nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		if depth >= maxDepth {
			return nil, &DataError{path, fmt.Sprintf("nested deeper than %d (a cycle?)", maxDepth)}
		}
		return s.tableFromLua(x, path, depth)
	}
	return nil, &DataError{path, "not plain data: " + TypeName(v)}
}

func (s *State) tableFromLua(t *lua.LTable, path string, depth int) (any, error) {
	n := t.Len()
	count := 0
	isList := true
	var bad error
	t.ForEach(func(k, _ lua.LValue) {
		count++
		if num, ok := k.(lua.LNumber); ok {
			if f := float64(num); f != math.Trunc(f) || f < 1 || f > float64(n) {
				isList = false
			}
			return
		}
		isList = false
		if _, ok := k.(lua.LString); !ok && bad == nil {
			bad = &DataError{path, "a table key must be a string or a number, got " + TypeName(k)}
		}
	})
	if bad != nil {
		return nil, bad
	}
	if count == 0 {
		if t.Metatable == s.ListMeta {
			return []any{}, nil
		}
		return map[string]any{}, nil
	}
	if isList && count == n {
		out := make([]any, n)
		for i := 1; i <= n; i++ {
			e, err := s.fromLua(t.RawGetInt(i), path+"["+strconv.Itoa(i)+"]", depth+1)
			if err != nil {
				return nil, err
			}
			out[i-1] = e
		}
		return out, nil
	}
	out := make(map[string]any, count)
	var err error
	t.ForEach(func(k, e lua.LValue) {
		if err != nil {
			return
		}
		var key string
		switch kk := k.(type) {
		case lua.LString:
			key = string(kk)
		case lua.LNumber:
			key = strconv.FormatFloat(float64(kk), 'g', -1, 64)
		}
		if _, dup := out[key]; dup {
			// a map's keys are strings: one of the two values would be lost
			err = &DataError{path, "key " + key + " is there as a number and as a string; a map's keys are strings, so keep one of them"}
			return
		}
		var g any
		g, err = s.fromLua(e, path+"."+key, depth+1)
		out[key] = g
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Copy returns a deep copy of plain data within this state; functions and
// other non-data values are shared, not copied. Cycles are cut at maxDepth.
func (s *State) Copy(v lua.LValue) lua.LValue {
	return s.copy(v, 0)
}

func (s *State) copy(v lua.LValue, depth int) lua.LValue {
	t, ok := v.(*lua.LTable)
	if !ok || depth >= maxDepth {
		return v
	}
	c := s.L.CreateTable(t.Len(), 0)
	// Next, not ForEach: ForEach walks string keys in Go map order, and
	// the copy must keep the order pairs() sees in the original.
	for k, e := t.Next(lua.LNil); k != lua.LNil; k, e = t.Next(k) {
		c.RawSet(k, s.copy(e, depth+1))
	}
	c.Metatable = t.Metatable
	return c
}
