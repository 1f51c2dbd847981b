package luabind

import (
	lua "github.com/attune-dev/attune/internal/lua"
)

// RecordPool recycles the string-keyed tables (records) a registry hands
// to its handlers: call, outcome and boundary records. Building a
// string-keyed gopher-lua table costs about one allocation per key; a
// recycled one costs none. A record is valid while the handler it was given
// to runs: a handler that keeps it for later keeps a record the next call
// will overwrite (copy what you need). A record that came back with keys of
// its own, list items or a metatable is not recycled (our gopher-lua lists
// every hash key a table has held: LTable.KeysEverSet).
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
	if t == nil || len(p.free) >= recordPoolSize || t.Metatable != lua.LNil || t.Len() != 0 || t.KeysEverSet() > p.keys {
		return
	}
	p.free = append(p.free, t)
}

// SetField sets a record field. A record is a small table (a few string
// keys, no map: see internal/lua), where a write costs what a
// read does, so a field is written without reading it first.
func SetField(t *lua.LTable, key string, v lua.LValue) {
	t.RawSetString(key, v)
}

// SetFieldAt is SetField for the field at position i of the list the
// record was made with (RecordPool.Get), and only for a record of a pool:
// its first keys are those fields in that order, fresh or recycled (a
// small table keeps every key it was given in place, Put takes back no
// record with keys of its own, and one that left small mode has no
// positions and is written by key), so the value is stored without
// looking the key up or comparing it (TestRecordFieldsKeepTheirPlaces).
func SetFieldAt(t *lua.LTable, i int, key string, v lua.LValue) {
	t.SetRecordAt(i, key, v)
}

// SetStringAt is SetString for the field at position i (see SetFieldAt).
func SetStringAt(t *lua.LTable, i int, key, v string) {
	if v == "" {
		t.SetRecordAt(i, key, lua.LNil)
		return
	}
	t.SetRecordAt(i, key, lua.LString(v))
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
