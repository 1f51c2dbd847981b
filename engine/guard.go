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
	// committedOut is the outcome a guard that passed the call on with
	// "return invoke(...)" returns whatever ended its callback, once the
	// core committed it (Commit); false: none.
	committedOut(gr *guardRun) (Outcome, bool)
	// retrying reports that a later guard asked for a retry: the chain
	// starts again, and the verdicts of the guards before it do not count.
	retrying() bool
	// proceed runs the rest of the chain for a guard that returned
	// (allow REASON) or (ask REASON) without calling invoke, as invoke with
	// no argument would (the registry held, its script returned).
	proceed(s *luabind.State, gr *guardRun) Outcome
	// proceeds reports whether verdict v (allow or ask) without invoke
	// lets the rest of the chain run.
	proceeds(v verdict) bool
	// verdict is what (allow REASON) or (ask REASON) does to the outcome
	// out of the rest of the chain (gr.invoked: the rest ran).
	verdict(gr *guardRun, v verdict, reason string, out Outcome) Outcome
}

// guardRun is the state of one guard's run.
type guardRun struct {
	chain   guardChain
	g       *guardDecl
	k       int         // its place in the chain
	call    *lua.LTable // the record it was given
	invoked bool
	tail    bool        // it invoked with "return invoke(...)": its outcome is invoke's
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
	v, reason := verdictOther, ""
	if err == nil {
		v, reason = guardVerdict(r, r.st.L.Get(-1))
		r.st.L.Pop(1)
	}
	if err == nil && (v == verdictAllow || v == verdictAsk) && !gr.invoked && !gr.chain.retrying() && gr.chain.proceeds(v) {
		// (allow REASON) or (ask REASON) without invoke: the call goes on
		// as the guard left it, with the verdict
		gr.invoked = true
		gr.out = gr.chain.proceed(r.st, gr)
	}
	gr.chain.putRecord(r, gr.call)
	if gr.outTab != nil {
		r.outs.Put(gr.outTab)
	}
	r.unlock(owned)
	if out, ok := gr.chain.committedOut(gr); ok {
		// no script ran after its invoke: a cancellation while it waited
		// (err) cannot undo the success the host has acted on
		return out
	}
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
		return Outcome{Status: StatusRefused, RefusedBy: ByGuard, Reason: reasonOr(reason, g), RefusedAt: g.pos}
	case verdictHalt: // the turn ends (halt recorded it); the call or boundary does not go on
		return Outcome{Status: StatusRefused, RefusedBy: ByGuard, Reason: haltReasonOr(reason, g)}
	case verdictAllow, verdictAsk:
		return gr.chain.verdict(gr, v, reason, gr.out)
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
	gr.tail = unseen
	gr.out = gr.chain.invoke(s, gr)
	if unseen {
		s.L.Push(lua.LNil)
		return 1
	}
	gr.outTab = outcomeRecord(r, gr.out)
	s.L.Push(gr.outTab)
	return 1
}

// verdict classifies what a guard returned: a refusal, a retry, an
// allow, an ask, a halt, or other.
type verdict uint8

const (
	verdictOther verdict = iota
	verdictRefuse
	verdictRetry
	verdictAllow
	verdictAsk
	verdictHalt
)

// Verdicts a tool guard gives the harness about a call that goes ahead
// (Outcome.Verdict): the strictest of the chain's guards holds.
const (
	VerdictAllow = "allow" // approve the call: skip the harness's own permission prompt
	VerdictAsk   = "ask"   // ask the user before the call runs
)

func verdictWord(v verdict) string {
	switch v {
	case verdictAllow:
		return VerdictAllow
	case verdictAsk:
		return VerdictAsk
	}
	return ""
}

// stricter reports whether verdict a is stricter than b (ask > allow > none).
func stricter(a, b string) bool {
	rank := func(v string) int {
		switch v {
		case VerdictAsk:
			return 2
		case VerdictAllow:
			return 1
		}
		return 0
	}
	return rank(a) > rank(b)
}

func haltReasonOr(reason string, g *guardDecl) string {
	if reason != "" {
		return reason
	}
	return "halted by the guard at " + g.pos
}

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
	case r.allowMT:
		v = verdictAllow
	case r.askMT:
		v = verdictAsk
	case r.haltMT:
		v = verdictHalt
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

// allow and ask are a tool guard's verdicts on a call that goes ahead.
func fAllow(s *luabind.State) int { return pushVerdict(s, regOf(s).allowMT) }

func fAsk(s *luabind.State) int { return pushVerdict(s, regOf(s).askMT) }

// pushVerdict pushes {reason = REASON} marked by mt (guardVerdict reads it).
func pushVerdict(s *luabind.State, mt *lua.LTable) int {
	t := s.L.CreateTable(0, 1)
	t.RawSetString("reason", lua.LString(s.L.OptString(1, "")))
	t.Metatable = mt
	s.L.Push(t)
	return 1
}
