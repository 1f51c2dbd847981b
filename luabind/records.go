package luabind

import (
	"reflect"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// RecordPool recycles the string-keyed tables (records) a registry hands
// to its handlers: call, outcome and boundary records. Building a
// string-keyed gopher-lua table costs about one allocation per key; a
// recycled one costs none. A record is valid while the handler it was given
// to runs: a handler that keeps it for later keeps a record the next call
// will overwrite (copy what you need). A record that came back with keys of
// its own, list items or a metatable is not recycled.
//
// Knowing whether a handler added keys needs gopher-lua's unexported list
// of every string key a table has held (LTable.keys), read by reflection
// without allocating. Should gopher-lua rename it, no record is recycled
// (correct, slower) and TestRecordPoolSeesKeys fails.
type RecordPool struct {
	free []*lua.LTable
	keys int // the fields of the pool's records
}

// recordPoolSize bounds the free records a pool keeps.
const recordPoolSize = 8

// Get returns a recycled record or a fresh one primed with FIELDS (false
// each), so that any other key a handler sets shows. List FIELDS in sorted
// order: a key keeps the place it was first set in, so a record (fresh or
// recycled) iterates in sorted key order under pairs(). One pool serves
// one list of fields.
func (p *RecordPool) Get(L *lua.LState, fields []string) *lua.LTable {
	if n := len(p.free); n > 0 {
		t := p.free[n-1]
		p.free = p.free[:n-1]
		return t
	}
	p.keys = len(fields)
	t := L.CreateTable(0, len(fields))
	for _, f := range fields {
		t.RawSetString(f, lua.LFalse)
	}
	return t
}

// Put gives a record back once its handler has returned.
func (p *RecordPool) Put(t *lua.LTable) {
	if t == nil || len(p.free) >= recordPoolSize || t.Metatable != lua.LNil || t.Len() != 0 || keysEverSet(t) > p.keys {
		return
	}
	p.free = append(p.free, t)
}

// keysField is the index of LTable's unexported key list (every string key
// ever set); -1 when gopher-lua has no such field.
var keysField = sync.OnceValue(func() int {
	f, ok := reflect.TypeFor[lua.LTable]().FieldByName("keys")
	if !ok || f.Type.Kind() != reflect.Slice {
		return -1
	}
	return f.Index[0]
})

// keysEverSet counts the string keys a table has held (a script's own
// fields too); a huge number when it cannot tell.
func keysEverSet(t *lua.LTable) int {
	k := keysField()
	if k < 0 {
		return 1 << 30
	}
	return reflect.ValueOf(t).Elem().Field(k).Len()
}

// SetField sets a record field unless it holds that value already: a
// recycled record often does (the same path, instance, status), and reading
// a gopher-lua field costs one map lookup where writing costs two.
func SetField(t *lua.LTable, key string, v lua.LValue) {
	if t.RawGetString(key) != v {
		t.RawSetString(key, v)
	}
}

// SetString sets a record field to a string, or clears it (absent) when the
// string is empty.
func SetString(t *lua.LTable, key, v string) {
	if v == "" {
		SetField(t, key, lua.LNil)
		return
	}
	t.RawSetString(key, lua.LString(v))
}
