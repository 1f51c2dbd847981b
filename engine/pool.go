package engine

import (
	"reflect"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// tablePool recycles the call and outcome records a registry hands to its
// guards and hooks. Building a string-keyed gopher-lua table costs about
// one allocation per key; a recycled one costs none. A record is valid
// while the handler it was given to runs: a handler that keeps it for later
// keeps a record the next call will overwrite (copy what you need). A
// record that came back with keys of its own is not recycled.
type tablePool struct {
	free []*lua.LTable
	keys int // the fields of the pool's records
}

// The fields of the two records. A fresh record is primed with all of its
// fields, so any other key a handler sets shows in keysEverSet. They are
// listed in sorted order: a key keeps the place it was first set in, so a
// record (fresh or recycled) iterates in sorted key order under pairs().
var (
	callFields    = []string{"args", "attempt", "call_id", "instance", "marks", "path"}
	outcomeFields = []string{"diagnostics", "error", "reason", "refused_by", "result", "status"}
)

const poolSize = 8

func (p *tablePool) get(L *lua.LState, fields []string) *lua.LTable {
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

func (p *tablePool) put(t *lua.LTable) {
	if t == nil || len(p.free) >= poolSize || t.Metatable != lua.LNil || t.Len() != 0 || keysEverSet(t) > p.keys {
		return
	}
	p.free = append(p.free, t)
}

// keysField is the index of LTable's unexported key list (every string key
// ever set), read by reflection without allocating; -1 when gopher-lua has
// no such field, and then no record is recycled.
var keysField = sync.OnceValue(func() int {
	f, ok := reflect.TypeFor[lua.LTable]().FieldByName("keys")
	if !ok || f.Type.Kind() != reflect.Slice {
		return -1
	}
	return f.Index[0]
})

// keysEverSet counts the keys a table has held (a script's own fields too).
func keysEverSet(t *lua.LTable) int {
	k := keysField()
	if k < 0 {
		return 1 << 30
	}
	return reflect.ValueOf(t).Elem().Field(k).Len()
}

// set sets a record field unless it holds that value already: a recycled
// record often does (the same path, instance, status), and reading a
// gopher-lua field costs one map lookup where writing costs two.
func set(t *lua.LTable, key string, v lua.LValue) {
	if t.RawGetString(key) != v {
		t.RawSetString(key, v)
	}
}

// setOpt sets a record field, or clears it when the value is absent.
func setOpt(t *lua.LTable, key, v string) {
	if v == "" {
		set(t, key, lua.LNil)
		return
	}
	t.RawSetString(key, lua.LString(v))
}

// record fills a pooled call record for a guard or hook (SPEC §10
// Records); args nil leaves call.args absent (a hidden refusal).
func (c *chain) record(r *registry, args any) *lua.LTable {
	st := r.st
	t := r.calls.get(st.L, callFields)
	set(t, "path", c.te.pathLV)
	if args != nil {
		t.RawSetString("args", st.ToLua(args))
	} else {
		set(t, "args", lua.LNil)
	}
	if len(c.marks) == 0 {
		t.RawSetString("marks", r.emptyList())
	} else {
		marks := st.NewListCap(len(c.marks))
		for _, m := range c.marks {
			marks.Append(lua.LString(m))
		}
		t.RawSetString("marks", marks)
	}
	set(t, "attempt", number(c.attempt))
	set(t, "instance", c.i.idLV)
	set(t, "call_id", c.callIDLV)
	return t
}

// outcomeRecord fills a pooled outcome record (absent fields stay nil).
func outcomeRecord(r *registry, o Outcome) *lua.LTable {
	st := r.st
	t := r.outs.get(st.L, outcomeFields)
	fillOutcome(r, t, o)
	return t
}

// emptyList is the registry's one empty list, handed to every record whose
// list is empty (no fresh table per call). Records are valid only while
// their handler runs; a handler that filled the list or changed its
// metatable gets a new one next time.
func (r *registry) emptyList() *lua.LTable {
	if t := r.empty; t != nil && t.Metatable == r.st.ListMeta && t.Len() == 0 {
		if k, _ := t.Next(lua.LNil); k == lua.LNil {
			return t
		}
	}
	r.empty = r.st.NewListCap(0)
	return r.empty
}

func fillOutcome(r *registry, t *lua.LTable, o Outcome) {
	st := r.st
	set(t, "status", statusLV(o.Status))
	if o.Result != nil {
		t.RawSetString("result", st.ToLua(o.Result))
	} else {
		set(t, "result", lua.LNil)
	}
	if o.Status == StatusOK && len(o.Diagnostics) == 0 {
		t.RawSetString("diagnostics", r.emptyList())
	} else if o.Status == StatusOK {
		d := st.NewListCap(len(o.Diagnostics))
		for _, s := range o.Diagnostics {
			d.Append(lua.LString(s))
		}
		t.RawSetString("diagnostics", d)
	} else {
		set(t, "diagnostics", lua.LNil)
	}
	setOpt(t, "reason", o.Reason)
	setOpt(t, "refused_by", o.RefusedBy)
	setOpt(t, "error", o.Error)
}
