package engine

import (
	"context"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// frame is the per-callback state: which instance and registration is
// running, its lineage, its call id, its authority, and what the callback
// may reach (the guard it is running in, the method it serves, where its
// notes go). Engine functions find it on their registry's frame stack.
type frame struct {
	parent *frame
	ctx    context.Context
	inst   *Instance
	reg    *registry
	decl   *decl
	callID string
	// lineage: the registration ids that led here, this one last (R4.9).
	lineage []string
	// calls: the call ids that led here.
	calls         []string
	hostAuthority bool
	depth         int
	// thread is the logical thread of control the frame runs on: nested
	// calls share it, parallel hooks each get their own. A registry held by
	// a thread is re-entered by that thread without waiting.
	thread *thread
	// seq numbers the nested calls made under callID (shared by every
	// frame of one call, so nested ids never collide).
	seq *int64

	guard  *guardRun  // set while a tool guard runs
	method *methodRun // set while a method handler runs
	notes  *noteSink  // where notify goes while a boundary hook runs
}

// maxDepth bounds nested calls (tools and methods calling each other).
const maxDepth = 32

// child returns a frame for a registration entered from f (f may be nil:
// a call straight from the host).
func (f *frame) child(ctx context.Context, inst *Instance, r *registry, d *decl, callID string) *frame {
	c := &frame{parent: f, ctx: ctx, inst: inst, reg: r, decl: d, callID: callID, seq: new(int64)}
	if f != nil {
		c.thread = f.thread
		c.hostAuthority = f.hostAuthority
		c.depth = f.depth + 1
		c.notes = f.notes
		c.lineage = append(append(make([]string, 0, len(f.lineage)+1), f.lineage...), d.id)
		c.calls = f.calls
	} else {
		c.thread = new(thread)
		base := inst.rec.Lineage
		c.lineage = append(append(make([]string, 0, len(base)+1), base...), d.id)
	}
	if len(c.calls) == 0 || c.calls[len(c.calls)-1] != callID {
		c.calls = append(append(make([]string, 0, len(c.calls)+1), c.calls...), callID)
	}
	return c
}

// onLineage counts how often a registration id is on a frame's lineage.
func (f *frame) onLineage(id string, base []string) int {
	n := 0
	ids := base
	if f != nil {
		ids = f.lineage
	}
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// ctxTable builds the ctx record handed to tool handlers, methods,
// subscriptions and commands.
func (f *frame) ctxTable() *lua.LTable {
	L := f.reg.st.L
	t := L.CreateTable(0, 5)
	t.RawSetString("instance", lua.LString(f.inst.id))
	t.RawSetString("session", lua.LString(f.inst.rec.Session))
	t.RawSetString("bot", lua.LString(f.inst.rec.Bot))
	t.RawSetString("call_id", lua.LString(f.callID))
	t.RawSetString("host_authority", lua.LBool(f.hostAuthority))
	return t
}

// childCallID derives a nested call's id from its parent's (R5.7).
func (f *frame) childCallID() string {
	*f.seq++
	return f.callID + "/" + strconv.FormatInt(*f.seq, 10)
}

// thread identifies one logical thread of control (see frame.thread).
type thread struct{ _ byte }
