package engine

import (
	"github.com/attune-dev/attune/luabind"

	lua "github.com/attune-dev/attune/internal/lua"
)

// The fields of the records the engine hands to handlers (pooled by
// luabind.RecordPool). They are listed in sorted order: a key keeps the
// place it was first set in, so a record (fresh or recycled) iterates in
// sorted key order under pairs().
var (
	callFields    = []string{"args", "attempt", "call_id", "harness", "instance", "marks", "path"}
	outcomeFields = []string{"code", "diagnostics", "error", "reason", "refused_by", "result", "status"}
)

// The places of the fields in those lists (luabind.SetFieldAt).
const (
	callArgs = iota
	callAttempt
	callCallID
	callHarness
	callInstance
	callMarks
	callPath
)

const (
	outCode = iota
	outDiagnostics
	outError
	outReason
	outRefusedBy
	outResult
	outStatus
)

// callRecord fills a pooled call record for a guard or hook (docs/forms.md,
// Records); args nil leaves call.args absent (a hidden refusal).
func (c *chain) callRecord(r *registry, args any) *lua.LTable {
	st := r.st
	t := r.calls.Get(st.L, callFields)
	luabind.SetFieldAt(t, callPath, "path", c.te.pathLV)
	if args != nil {
		if !c.lazyArgs(r, t, args) {
			luabind.SetFieldAt(t, callArgs, "args", c.argsValue(r, args))
		}
	} else {
		luabind.SetFieldAt(t, callArgs, "args", lua.LNil)
	}
	if len(c.marks) == 0 {
		luabind.SetFieldAt(t, callMarks, "marks", r.emptyList())
	} else {
		marks := st.NewListCap(len(c.marks))
		for _, m := range c.marks {
			marks.Append(st.L.StringValue(m))
		}
		luabind.SetFieldAt(t, callMarks, "marks", marks)
	}
	luabind.SetFieldAt(t, callAttempt, "attempt", number(c.attempt))
	luabind.SetFieldAt(t, callInstance, "instance", c.i.idLV)
	if c.harness != nil { // the harness's event (harness.go)
		luabind.SetFieldAt(t, callHarness, "harness", st.ToLua(c.harness))
	} else {
		luabind.SetFieldAt(t, callHarness, "harness", lua.LNil)
	}
	if c.callIDLV == nil { // boxed once per chain, when a record needs it
		c.callIDLV = st.L.StringValue(c.callID)
	}
	luabind.SetFieldAt(t, callCallID, "call_id", c.callIDLV)
	return t
}

// lazyArgs puts a table or list argument in call record t as a lazy field:
// it is converted when the handler first reads call.args, so a handler that
// never does (most guards) costs no conversion, and invoke() knows the
// argument unchanged without comparing it. The argument is counted against
// the data limits first (luabind.Fits): one over them is converted at once,
// so that the handler fails before it runs, as for any argument. It reports
// false for an argument it leaves to argsValue.
func (c *chain) lazyArgs(r *registry, t *lua.LTable, args any) bool {
	switch args.(type) {
	case map[string]any, []any:
	default:
		return false
	}
	if !luabind.Fits(args) {
		return false
	}
	l, ok := t.PeekRecordAt(callArgs, "args").(*lua.LLazy)
	if ok && l.Made() == nil { // the record's last one, never read: reused
		l.Reset(makeArgs, args, r.st)
	} else {
		l = lua.NewLazy(makeArgs, args, r.st)
	}
	return t.SetLazyAt(callArgs, "args", l)
}

// makeArgs converts a lazy call.args on its first read.
func makeArgs(l *lua.LLazy) lua.LValue { return l.Aux.(*luabind.State).ToLua(l.Arg) }

// argsValue is a call's argument as a Lua value of r's state: a string is
// boxed once per chain and shared by every handler (Lua strings cannot be
// changed); anything else is converted for each handler, which gets its
// own copy.
func (c *chain) argsValue(r *registry, args any) lua.LValue {
	if s, ok := args.(string); ok {
		if lv, ok := c.argsLV.(lua.LString); ok && string(lv) == s {
			return c.argsLV
		}
		c.argsLV = r.st.L.StringValue(s)
		return c.argsLV
	}
	return r.st.ToLua(args)
}

// outcomeRecord fills a pooled outcome record (absent fields stay nil).
func outcomeRecord(r *registry, o Outcome) *lua.LTable {
	st := r.st
	t := r.outs.Get(st.L, outcomeFields)
	fillOutcome(r, t, o)
	return t
}

// emptyList is the registry's one empty list, handed to every record whose
// list is empty (no fresh table per call). Records are valid only while
// their handler runs; a handler that filled the list or changed its
// metatable gets a new one next time.
func (r *registry) emptyList() *lua.LTable {
	if t := r.empty; t != nil && t.Metatable == r.st.ListMeta && t.Len() == 0 && t.KeysEverSet() == 0 {
		return t
	}
	r.empty = r.st.NewListCap(0)
	return r.empty
}

func fillOutcome(r *registry, t *lua.LTable, o Outcome) {
	st := r.st
	luabind.SetFieldAt(t, outStatus, "status", statusLV(o.Status))
	if o.Result != nil {
		luabind.SetFieldAt(t, outResult, "result", st.ToLua(o.Result))
	} else {
		luabind.SetFieldAt(t, outResult, "result", lua.LNil)
	}
	if o.Status == StatusOK && len(o.Diagnostics) == 0 {
		luabind.SetFieldAt(t, outDiagnostics, "diagnostics", r.emptyList())
	} else if o.Status == StatusOK {
		d := st.NewListCap(len(o.Diagnostics))
		for _, s := range o.Diagnostics {
			d.Append(lua.LString(s))
		}
		luabind.SetFieldAt(t, outDiagnostics, "diagnostics", d)
	} else {
		luabind.SetFieldAt(t, outDiagnostics, "diagnostics", lua.LNil)
	}
	luabind.SetStringAt(t, outReason, "reason", o.Reason)
	luabind.SetStringAt(t, outRefusedBy, "refused_by", o.RefusedBy)
	luabind.SetStringAt(t, outError, "error", o.Error)
	luabind.SetStringAt(t, outCode, "code", string(outcomeCode(o)))
}
