package engine

import (
	"context"
	"strconv"

	lua "github.com/attune-dev/attune/internal/lua"
)

// frame is the per-callback state: which instance and registration is
// running, who called it (the parent frame: the lineage is the chain of
// parents), its call id, its authority, and what the callback may reach
// (the guard it runs in, the method it serves, where its notes go). Engine
// functions find it on their registry's frame stack.
type frame struct {
	parent        *frame
	ctx           context.Context
	inst          *Instance
	reg           *registry
	decl          *decl
	callID        string
	hostAuthority bool
	depth         int

	// thread is the logical thread of control the frame runs on: nested
	// calls share it, parallel hooks each get their own. A registry held by
	// a thread is re-entered by that thread without waiting.
	thread *thread
	// seq numbers the nested calls made under callID; frames of one call
	// share their chain's counter, so nested ids never collide.
	seq    *int64
	own    int64
	guard  *guardRun  // set while a tool guard runs
	method *methodRun // set while a method handler runs
	notes  *noteSink  // where notify goes while a boundary hook runs
	// noted counts the bytes of the notes emitted on the frame's lineage
	// outside a boundary hook (engine.max_boundary_note_bytes).
	noted *int64
	// retries counts the retries spent on the frame's lineage: nested
	// chains share it, so one retry budget covers the lineage (R5.7).
	retries *int
	// validating is set while validate/configuration handlers run: the
	// instance has no session yet (R1.8).
	validating bool
	// prints counts the lines the callback printed or logged (trace.go).
	prints int
	// A frame entered from the host keeps its thread and retry budget
	// here: one allocation for the three.
	ownThread  thread
	ownRetries int
	ownNoted   int64
}

// maxDepth bounds nested calls (tools and methods calling each other).
const maxDepth = 32

// newFrame returns a frame for registration d of r entered from parent;
// parent nil is a call straight from the host: the frame gets a thread and
// a retry budget of its own.
func newFrame(parent *frame, ctx context.Context, inst *Instance, r *registry, d *decl, callID string) *frame {
	c := &frame{ctx: ctx, inst: inst, reg: r, decl: d, callID: callID}
	c.seq = &c.own
	if inst.e.obs != nil {
		inst.e.ran(d)
	}
	parent.enter(c)
	if parent == nil {
		c.thread = &c.ownThread
		c.retries = &c.ownRetries
		c.noted = &c.ownNoted
	}
	return c
}

// enter makes c a callee of f (nil: the host): c gets f as its parent and
// inherits its thread, authority, depth and note sink.
func (f *frame) enter(c *frame) {
	c.parent = f
	if f != nil {
		c.thread = f.thread
		c.hostAuthority = f.hostAuthority
		c.depth = f.depth + 1
		c.notes = f.notes
		c.retries = f.retries
		c.noted = f.noted
	}
}

// onLineage counts how often registration id is on the lineage that led to
// f: f and its callers, then the instance's inherited lineage (R4.9, R3.12).
func (f *frame) onLineage(id string, base []string) int {
	n := 0
	for x := f; x != nil; x = x.parent {
		if x.decl != nil && x.decl.id == id {
			n++
		}
	}
	for _, x := range base {
		if x == id {
			n++
		}
	}
	return n
}

// childCallID derives a nested call's id from its parent's (R5.7).
func (f *frame) childCallID() string {
	*f.seq++
	return f.callID + "/" + strconv.FormatInt(*f.seq, 10)
}

// ctxTable builds the ctx record handed to tool handlers, methods,
// subscriptions and commands.
func (f *frame) ctxTable() *lua.LTable {
	L := f.reg.st.L
	t := L.CreateTable(0, 5)
	// keys in sorted order, so pairs() visits them identically everywhere
	t.RawSetString("bot", f.inst.botLV)
	t.RawSetString("call_id", lua.LString(f.callID))
	t.RawSetString("host_authority", lua.LBool(f.hostAuthority))
	t.RawSetString("instance", f.inst.idLV)
	t.RawSetString("session", f.inst.sessLV)
	return t
}
