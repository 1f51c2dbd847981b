package engine

import (
	"fmt"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
)

// The guard runner. Tool guards (R4.3) and turn and round guards (R3.1)
// run the same way: each gets its record and a single-use invoke, in pin
// order then declaration order; invoke runs the rest of the chain (the
// next guard, or past the last one what the guards protect) and returns
// its outcome, which the guard returns. A guard may instead return
// (refuse REASON), or (retry REASON) where its chain allows it; returning
// anything else without calling invoke is a refusal by that guard.
//
// What differs between the kinds of chain is a guardChain: the record a
// guard gets, what invoke runs and what retry means. The tool chain is
// chain (toolchain.go), the boundary chain bchain (boundary.go).

// guardChain is one kind of guard chain, as the runner sees it.
type guardChain interface {
	// guardRecord fills the record guard gr gets, in r's state (held).
	guardRecord(r *registry, gr *guardRun) *lua.LTable
	// putRecord gives the record back to its pool once the guard returned.
	putRecord(r *registry, t *lua.LTable)
	// invoke runs the rest of the chain after guard gr.k; s is the
	// guard's state, with invoke's arguments on its stack.
	invoke(s *luabind.State, gr *guardRun) Outcome
	// retry is what a guard's (retry REASON) does.
	retryFrom(gr *guardRun, reason string) Outcome
	// retrying reports that a later guard asked for a retry: the chain
	// starts again, and the verdicts of the guards before it do not count.
	retrying() bool
}

// guardRun is the state of one guard's run.
type guardRun struct {
	chain   guardChain
	g       *guardDecl
	k       int         // its place in the chain
	call    *lua.LTable // the record it was given
	invoked bool
	out     Outcome     // what invoke returned
	outTab  *lua.LTable // and the outcome record the guard got
	// a tool guard's arguments: as plain Go data, and the Lua value of
	// its call record's args
	args   any
	argsLV lua.LValue
}

// runGuard runs the guard of gr on frame fr and returns the chain's
// outcome as the guard decided it.
func runGuard(fr *frame, gr *guardRun) Outcome {
	g := gr.g
	r := g.reg
	fr.guard = gr
	owned, err := r.lock(fr)
	if err != nil {
		return failedOut(r, err)
	}
	gr.call = gr.chain.guardRecord(r, gr)
	err = r.run(fr, luabind.Callback, g.fn, 1, gr.call, r.invokeFn)
	gr.chain.putRecord(r, gr.call)
	if gr.outTab != nil {
		r.outs.Put(gr.outTab)
	}
	v, reason := verdictOther, ""
	if err == nil {
		v, reason = guardVerdict(r, r.st.L.Get(-1))
		r.st.L.Pop(1)
	}
	r.unlock(owned)
	if err != nil {
		return failedOut(r, err)
	}
	if gr.chain.retrying() {
		return Outcome{}
	}
	switch v {
	case verdictRetry:
		return gr.chain.retryFrom(gr, reason)
	case verdictRefuse:
		return Outcome{Status: StatusRefused, RefusedBy: ByGuard, Reason: reasonOr(reason, g)}
	}
	if gr.invoked {
		return gr.out
	}
	return Outcome{Status: StatusRefused, RefusedBy: ByGuard,
		Reason: fmt.Sprintf("guard at %s returned without calling invoke or refuse", g.pos)}
}

func reasonOr(reason string, g *guardDecl) string {
	if reason != "" {
		return reason
	}
	return "refused by the guard at " + g.pos
}

// fInvoke is invoke(args?) inside a guard (R4.3, R3.1).
func fInvoke(s *luabind.State) int {
	r := regOf(s)
	fr := r.top()
	if fr == nil || fr.guard == nil {
		s.L.RaiseError("invoke called outside its guard")
	}
	gr := fr.guard
	if gr.invoked {
		s.L.RaiseError("invoke called twice")
	}
	gr.invoked = true
	// A guard that ends in "return invoke(...)" hands the outcome record
	// straight back to runGuard, which reads gr.out and not the record: no
	// script could see it, so none is made (the most common guard).
	unseen := s.ReturnsToCaller()
	gr.out = gr.chain.invoke(s, gr)
	if unseen {
		s.L.Push(lua.LNil)
		return 1
	}
	gr.outTab = outcomeRecord(r, gr.out)
	s.L.Push(gr.outTab)
	return 1
}

// verdict classifies what a guard returned: a refusal, a retry, or other.
type verdict uint8

const (
	verdictOther verdict = iota
	verdictRefuse
	verdictRetry
)

// guardVerdict reads a guard's return value (with the registry held).
func guardVerdict(r *registry, ret lua.LValue) (verdict, string) {
	t, ok := ret.(*lua.LTable)
	if !ok {
		return verdictOther, ""
	}
	v := verdictOther
	switch t.Metatable {
	case r.refuseMT:
		v = verdictRefuse
	case r.retryMT:
		v = verdictRetry
	default: // an outcome passed on, most often: no field to read
		return verdictOther, ""
	}
	reason := ""
	if s, ok := t.RawGetString("reason").(lua.LString); ok {
		reason = string(s)
	}
	return v, reason
}

// refuse and retry return marker tables, one metatable each per state.
func fRefuse(s *luabind.State) int { return pushVerdict(s, regOf(s).refuseMT) }

func fRetry(s *luabind.State) int { return pushVerdict(s, regOf(s).retryMT) }

// pushVerdict pushes {reason = REASON} marked by mt (guardVerdict reads it).
func pushVerdict(s *luabind.State, mt *lua.LTable) int {
	t := s.L.CreateTable(0, 1)
	t.RawSetString("reason", lua.LString(s.L.OptString(1, "")))
	t.Metatable = mt
	s.L.Push(t)
	return 1
}
