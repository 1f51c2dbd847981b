package engine

// Methods (R5.2-R5.8): call/method from script and Instance.Method
// from the host run the same admission: resolve the owner in the caller's
// pin, check the grant, check the ABI, validate the input, run the handler
// on the fold of the revision it observed, validate the output. A query
// records its result under the call id; a command folds its proposals
// through the reducer and appends them with its call record in one store
// Append that names the revision the handler observed. No lock is held
// across a handler: concurrent commands meet at the store as a stale
// revision or a reused call id.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// Refusers of method calls (R5.3), beside the tool chain's.
const (
	ByGrant = "grant"
	// ByHandler: the method's handler returned (refuse REASON).
	ByHandler   = "handler"
	ByABI       = "abi"
	BySchema    = "schema"
	ByAuthority = "authority"
)

// MethodCall is one call of a method by the host (R5.2). Host calls are not
// subject to grants; they carry host authority only when HostAuthority is
// set (R5.5, R6.4).
type MethodCall struct {
	Owner  string // NAME or NAME@SCOPE
	Method string
	Input  any
	// CallID names the call for replay (R5.6); empty: a fresh id.
	CallID        string
	HostAuthority bool
}

// MethodOutcome is the result of a method call. Status is "ok", "refused"
// (Reason, RefusedBy) or "failed" (Error, starting with its code:
// handler:, reducer:, revision:, call-id:, stale-revision:, owner:,
// method:, replay:).
type MethodOutcome struct {
	Status    Status
	Result    any
	Reason    string
	RefusedBy string
	Error     string
	// Revision is the owner revision after the call: the one a query
	// observed, the one a command produced; for a replayed call id, the
	// owner's current one (R5.6).
	Revision int64
	CallID   string
	// Diagnostics are failures of subscription handlers that ran after the
	// call's actions were appended (the actions stay appended).
	Diagnostics []string
	// Err is the error behind a refusal or failure (nil when ok): an
	// *Error whose Code is the refused_by word or the code Error starts
	// with (CodeStaleRevision, CodeCallID, ...).
	Err error
}

// methodCall is one call on its way through admission.
type methodCall struct {
	i      *Instance
	set    *regSet
	ctx    context.Context
	parent *frame     // the calling callback's frame; nil for the host
	caller *registry  // the calling registry; nil for the host
	c      MethodCall // CallID always set
	fresh  bool       // the call id was generated here: nothing can be recorded under it
	// unstorable: the input has no JSON form (a self-referencing map a
	// host built): it is refused, and journaled without its input, which
	// the journal could not write either
	unstorable bool
	// log is the owner's log once the owner resolved: an outcome that
	// carries no revision reports the owner's revision after the call
	log string
}

// Method runs one method call for the host (R5.2). When a turn is open the
// call is journaled, so a replay answers it from its call record (R3.10).
func (i *Instance) Method(ctx context.Context, c MethodCall) MethodOutcome {
	if err := ctx.Err(); err != nil { // a call the host gave up on never runs
		ce := cancelled(err)
		return MethodOutcome{Status: StatusFailed, Error: ce.Message, CallID: c.CallID, Err: ce}
	}
	set, err := i.live()
	if err != nil {
		return MethodOutcome{Status: StatusFailed, Error: err.Error(), CallID: c.CallID, Err: err}
	}
	defer set.release()
	if _, ok := c.Input.(leftOut); !ok { // a replay's stand-in for an input left out of the journal stays one
		c.Input = Plain(c.Input)
	}
	fresh := c.CallID == ""
	if fresh {
		c.CallID = i.newCallID()
	}
	mc := &methodCall{i: i, set: set, ctx: ctx, c: c, fresh: fresh}
	first := i.firstRevs(ctx, set)
	out := mc.run()
	if s := i.sess.Load(); s != nil {
		// also outside a turn, for recordings; written behind the call then
		// (durable by the next boundary), so with copies the host cannot
		// change before they are encoded
		in, res := c.Input, out.Result
		if !s.journaling.Load() {
			in, res = CopyPlain(in), CopyPlain(res)
		}
		notPlain := ""
		if mc.unstorable {
			in, notPlain = nil, "input"
		}
		s.journal(session.Entry{Type: session.Method, Owner: c.Owner, Name: c.Method, Value: in, CallID: out.CallID, Auth: c.HostAuthority,
			Status: out.Status, Result: res, Error: out.Error, Code: errCode(out.Err), Reason: out.Reason, RefusedBy: out.RefusedBy, Revs: first, NotPlain: notPlain, Rev: out.Revision})
	}
	if s := i.sess.Load(); s != nil && !s.journaling.Load() && s.rp == nil && s.j.Pending() >= maxUnflushed {
		s.j.WriteBehind() // outside a turn: durable by the next boundary
	} else if s != nil && s.journaling.Load() {
		if err := s.flush(ctx); err != nil && out.Status == StatusOK {
			out = MethodOutcome{Status: StatusFailed, Error: err.Error(), CallID: out.CallID, Revision: out.Revision, Err: wrapErr(CodeStore, err, "")}
		}
	}
	out.settle()
	return out
}

// fCallMethod is call/method OWNER METHOD INPUT from script: the result, or
// a throw whose text starts with the refusal's or failure's code right
// after the position prefix (docs/forms.md, call/method).
func fCallMethod(s *luabind.State) int {
	r := regOf(s)
	fr := r.top()
	owner := s.CheckString("call/method", 1)
	method := s.CheckString("call/method", 2)
	input, err := s.FromLua(s.L.Get(3))
	if err != nil {
		s.RaiseCoded(string(raiseCode(CodeSchema, err)), "schema: call/method %s %s: the input is not plain data: %v", owner, method, err)
	}
	set := r.set
	caller := r
	if r.command != nil {
		// A pack command runs on the host's behalf (someone typed /NAME):
		// like the host's own calls it needs no grant; it carries no host
		// authority unless the host gave it.
		caller = nil
	}
	mc := &methodCall{i: fr.inst, set: set, ctx: fr.ctx, parent: fr, caller: caller,
		c: MethodCall{Owner: owner, Method: method, Input: input, CallID: fr.childCallID()}}
	out := mc.run()
	switch out.Status {
	case StatusOK:
		s.L.Push(s.ToLua(out.Result))
		return 1
	case StatusRefused:
		s.RaiseCause(out.Err, out.RefusedBy, "%s: %s", out.RefusedBy, out.Reason)
	default:
		// the failure's error goes with the raise as data: its frames are
		// the call stack of the caller's failure (scriptErr)
		s.RaiseCause(out.Err, string(CodeOf(out.Err)), "%s", out.Error)
	}
	return 0
}

// fPropose is propose(action) inside a command method's handler.
func fPropose(s *luabind.State) int {
	r := regOf(s)
	fr := r.top()
	if fr == nil || fr.method == nil || fr.method.decl.kind != "command" {
		s.L.RaiseError("propose is only available inside a command method")
	}
	a, err := s.FromLua(s.L.Get(1))
	if err != nil {
		s.RaiseCoded(string(raiseCode("", err)), "propose: the action is not plain data: %v", err)
	}
	m, ok := a.(map[string]any)
	if !ok {
		s.L.RaiseError("propose: an action is a table with a string field type, got %s", luabind.KindOf(a))
	}
	if t, ok := m["type"].(string); !ok || t == "" {
		s.L.RaiseError("propose: an action is a table with a string field type")
	}
	if _, err := json.Marshal(m); err != nil {
		s.RaiseCoded(string(raiseCode("", err)), "propose: the action cannot be stored: %v", err)
	}
	fr.method.proposals = append(fr.method.proposals, m)
	return 0
}

func refused(by, reason string) MethodOutcome {
	return MethodOutcome{Status: StatusRefused, RefusedBy: by, Reason: reason}
}

// failed is a failure of code code with text msg (and cause err, if any).
func failed(code Code, msg string, err error) MethodOutcome {
	return MethodOutcome{Status: StatusFailed, Error: msg, Err: &Error{Code: code, Message: msg, Err: err}}
}

// failedWith is a failure whose text is err's, coded as err is (else code).
func failedWith(code Code, err error) MethodOutcome {
	return MethodOutcome{Status: StatusFailed, Error: err.Error(), Err: wrapErr(code, err, "")}
}

func (mc *methodCall) run() MethodOutcome {
	out := mc.admitAndRun()
	out.CallID = mc.c.CallID
	if out.Revision == 0 && out.Status != StatusOK && mc.log != "" {
		// refused before the fold (grant, ABI, schema, a reused call id):
		// the owner's revision after the call is still its revision
		if n, err := mc.i.e.st.Length(mc.ctx, mc.log); err == nil {
			out.Revision = n
		}
	}
	return out
}

// resolveMethod finds the method of an owner: OWNER@SCOPE.METHOD first,
// then OWNER.METHOD (which serves every scope).
func (s *regSet) resolveMethod(o ownerRef, method string) (*methodDecl, error) {
	if m, ok := s.methods[o.name+"@"+o.scope+"."+method]; ok {
		return m, nil
	}
	if m, ok := s.methods[o.name+"."+method]; ok {
		return m, nil
	}
	var have []string
	for _, m := range s.methods {
		if m.owner == o.name && (m.scope == "" || m.scope == o.scope) {
			have = append(have, m.name)
		}
	}
	sort.Strings(have)
	return nil, fmt.Errorf("method: owner %s has no method %s in the pin of instance %s (have: %v)", o.addr, method, s.instance, have)
}

// granted reports whether a script caller may call m on o (R5.2): calls
// from the owner's own program (the one that declares its reducer, or the
// method) need no grant; others need the grant the method requires: its
// :grant G when it names one (another grant, in place of the default),
// else OWNER.METHOD (OWNER as NAME, or as NAME@SCOPE for that scope only).
func (s *regSet) granted(caller *registry, o ownerRef, m *methodDecl) bool {
	if caller == o.rd.reg || caller == m.reg {
		return true
	}
	for _, g := range s.inst.bot.Grants {
		if m.grant != "" {
			if g == m.grant {
				return true
			}
			continue
		}
		if g == o.name+"."+m.name || g == o.addr+"."+m.name {
			return true
		}
	}
	return false
}

// grantNeeded names the grant a caller lacks, for the refusal.
func grantNeeded(o ownerRef, m *methodDecl) string {
	if m.grant != "" {
		return m.grant
	}
	return o.name + "." + m.name
}

func (mc *methodCall) admitAndRun() MethodOutcome {
	i, set, ctx, c := mc.i, mc.set, mc.ctx, mc.c
	if mc.parent != nil && mc.parent.depth >= maxDepth {
		return refused(ByReentry, fmt.Sprintf("calls nested deeper than %d", maxDepth))
	}
	o, err := set.resolveOwner(c.Owner)
	if err != nil {
		return failedWith(CodeOwner, err)
	}
	m, err := set.resolveMethod(o, c.Method)
	if err != nil {
		return failedWith(CodeMethod, err)
	}
	mc.log = o.log
	if mc.caller != nil && !set.granted(mc.caller, o, m) { // R5.2
		return refused(ByGrant, fmt.Sprintf("bot %s (program %s) has no grant %s", i.rec.Bot, mc.caller.program, grantNeeded(o, m)))
	}
	stored, err := i.e.openOwner(ctx, o) // R2.8, R2.9
	if err != nil {
		return failed(CodeOwner, "owner: "+err.Error(), err)
	}
	if why := abiRefusal(o, stored); why != "" {
		return refused(ByABI, why)
	}
	if lo, ok := c.Input.(leftOut); ok { // a replay of a call refused as not storable (below)
		mc.unstorable = true
		return refused(BySchema, string(lo))
	}
	if err := m.input.check("input", c.Input); err != nil { // R5.3
		return schemaRefused(err)
	}
	inJSON, err := canonicalJSON(map[string]any{"method": m.name, "input": c.Input})
	if err != nil {
		mc.unstorable = true
		if ee, ok := session.Encodable(c.Input).(*session.EncodeError); ok { // where, and what to do
			return refused(BySchema, "input: not storable: "+ee.What+" at key path "+ee.At("input")+"; "+hostValueRule)
		}
		return refused(BySchema, "input: not storable: "+err.Error())
	}
	if !mc.fresh { // R5.6: the call id first, without reading a newer fold
		if rec, ok := i.e.calls.get(o.log, c.CallID); ok {
			return mc.current(o, replayed(rec, inJSON, c.CallID))
		}
		rec, err := i.e.st.GetCall(ctx, o.log, c.CallID)
		switch {
		case err == nil:
			return mc.current(o, replayed(rec, inJSON, c.CallID))
		case !errors.Is(err, store.ErrNotFound):
			return failed(CodeOwner, "owner: "+err.Error(), err)
		}
	}
	gater, _ := i.e.st.(store.Gater)
	for attempt := 1; ; attempt++ {
		out, stale := mc.attempt(o, m, inJSON)
		if !stale || attempt >= maxCommandAttempts {
			return out
		}
		if gater != nil && attempt == 1 {
			// Writers of a shared store queue at the owner's gate
			// after their first stale attempt (store.Gater).
			release, err := gater.Gate(ctx, o.log)
			if err != nil {
				return out
			}
			defer release()
			continue
		}
		if !staleBackoff(ctx, attempt) {
			return out
		}
	}
}

// maxCommandAttempts bounds how often a pure command whose append found
// the owner moved on runs in all (see attempt): the first run and up to
// 63 more. On a shared store (store.Gater: PostgreSQL) the second attempt
// runs as soon as the command holds the owner's gate, where writers that
// met at one revision queue; every later one after a jittered backoff
// (staleBackoff), at most about 1.4 s of waiting in all. Only then does
// the caller see stale-revision.
const maxCommandAttempts = 64

// Backoff between attempts of a stale command: a uniformly random wait in
// [0, min(staleBackoffCap, staleBackoffBase·2^(attempt-1))], so writers
// that met at one revision spread out instead of meeting again.
const (
	staleBackoffBase = 100 * time.Microsecond
	staleBackoffCap  = 25 * time.Millisecond
)

// When the store cannot tell whether a command's append was committed
// (store.ErrOutcomeUnknown), the engine sends it again with the same call
// id up to unknownRetryCount times, after 100 ms, 400 ms and 1.6 s (about
// 2 s in all); then the caller gets outcome-unknown and calls again with
// the same call id.
const (
	unknownRetryFirst = 100 * time.Millisecond
	unknownRetryCount = 3
)

// staleBackoff waits before attempt+1; false when ctx ended first.
func staleBackoff(ctx context.Context, attempt int) bool {
	d := staleBackoffCap
	if attempt < 16 {
		d = min(d, staleBackoffBase<<(attempt-1))
	}
	return sleepCtx(ctx, rand.N(d+1))
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// attempt folds the owner, runs the handler on the state it observed and
// records or commits the result. stale reports a command whose append
// found the owner moved on while its handler did nothing but read its
// state and propose: nothing was recorded or appended and nothing else
// happened, so it may run again on the newer state.
func (mc *methodCall) attempt(o ownerRef, m *methodDecl, inJSON []byte) (out MethodOutcome, stale bool) {
	i, ctx, c := mc.i, mc.ctx, mc.c
	_, ref := i.e.owners.get(o.log, o.rd.foldKey) // taken before the fold: a rollback after it voids the commit's snapshot
	state, rev, err := i.e.fold(ctx, mc.parent, i, o, c.CallID)
	if err != nil {
		return foldFailure(err, rev), false
	}
	// the handler, on a copy of the state it observed
	r := m.reg
	fr := newFrame(mc.parent, ctx, i, r, &m.decl, c.CallID)
	if mc.parent == nil {
		fr.hostAuthority = c.HostAuthority
	}
	run := &methodRun{decl: m}
	fr.method = run
	st := r.st
	owned, err := r.lock(fr)
	if err != nil {
		return MethodOutcome{Status: StatusFailed, Error: "handler: " + errText(err), Revision: rev, Err: handlerErr(r, err)}, false
	}
	var result any
	v, reason := verdictOther, ""
	err = r.run(fr, luabind.Callback, m.fn, 1, fr.ctxTable(), st.ToLua(state), st.ToLua(c.Input))
	if err == nil {
		ret := st.L.Get(-1)
		st.L.Pop(1)
		if v, reason = guardVerdict(r, ret); v == verdictOther {
			result, err = st.FromLua(ret)
			if err != nil {
				err = &dataError{err}
			}
		}
	}
	r.unlock(owned)
	if v != verdictOther { // refuse, retry (and allow, ask, halt: no result either)
		// The handler refused (refuse REASON): nothing is recorded or
		// appended; the caller can try again with another input.
		if reason == "" {
			reason = fmt.Sprintf("method %s.%s (%s) refused", o.addr, m.name, m.pos)
		}
		out := refused(ByHandler, reason)
		out.Revision = rev
		return out, false
	}
	if err != nil && !isDataError(err) {
		return MethodOutcome{Status: StatusFailed, Error: "handler: " + errText(err), Revision: rev, Err: handlerErr(r, err)}, false
	}
	if err != nil {
		out := failed(CodeHandler, fmt.Sprintf("handler: method %s.%s (%s) returned a value that is not plain data: %v", o.addr, m.name, m.pos, err), err)
		out.Revision = rev
		return out, false
	}
	if err := m.output.check("output", result); err != nil {
		out := schemaRefused(err)
		out.Revision = rev
		return out, false
	}
	resJSON, err := json.Marshal(result)
	if err != nil {
		out := failed(CodeHandler, "handler: the result cannot be stored: "+err.Error(), err)
		out.Revision = rev
		return out, false
	}
	if s := i.sess.Load(); s != nil && s.rp != nil {
		// A replay re-runs a call the session recorded no result for (it
		// failed or was refused there), so it fails or refuses the same
		// way; one that succeeds now records and appends nothing (R3.10).
		return failed(CodeReplay, fmt.Sprintf("replay: method call %s (%s.%s) has no recorded result", c.CallID, o.addr, m.name), nil), false
	}
	call := &store.CallRecord{ID: c.CallID, Input: inJSON, Result: resJSON}
	if m.kind == "query" && mc.behind() {
		return mc.recordBehind(o, call, result, rev), false
	}
	if m.kind == "query" || len(run.proposals) == 0 {
		return mc.record(o, call, result, rev), false
	}
	out = mc.commit(fr, o, run.proposals, call, state, result, rev, ref)
	// Pure up to its proposals: no nested call drew a call id from the
	// handler's frame, and no note, host read or host library call ran.
	pure := fr.own == 0 && !run.effects
	return out, pure && out.Err != nil && errors.Is(out.Err, ErrStaleRevision)
}

// replayed answers a call id already recorded (R5.6).
func replayed(rec store.CallRecord, inJSON []byte, id string) MethodOutcome {
	if string(rec.Input) != string(inJSON) {
		return failed(CodeCallID, fmt.Sprintf("call-id: call id %s reused with a different input", id), nil)
	}
	var res any
	if len(rec.Result) > 0 {
		if err := json.Unmarshal(rec.Result, &res); err != nil {
			return failed(CodeCallID, fmt.Sprintf("call-id: call id %s: the recorded result cannot be read: %v", id, err), err)
		}
	}
	return MethodOutcome{Status: StatusOK, Result: res, Revision: rec.Revision}
}

// current reports the owner's current revision on a replayed call id
// (R5.6): the stored result is returned unchanged, the revision is the
// log's length now, read without folding.
func (mc *methodCall) current(o ownerRef, out MethodOutcome) MethodOutcome {
	if out.Status != StatusOK {
		return out
	}
	n, err := mc.i.e.st.Length(mc.ctx, o.log)
	if err != nil {
		f := failed(CodeOwner, "owner: "+err.Error(), err)
		f.CallID = out.CallID
		return f
	}
	out.Revision = n
	return out
}

func foldFailure(err error, rev int64) MethodOutcome {
	var fe *foldError
	if errors.As(err, &fe) {
		out := failed(fe.code(), fe.msg, nil)
		out.Revision = rev
		return out
	}
	out := failed(CodeReducer, "reducer: "+err.Error(), err)
	out.Revision = rev
	return out
}

// appendError turns a call-id answer of the store into an outcome; ok is
// false for other errors.
func appendError(err error, call *store.CallRecord) (MethodOutcome, bool) {
	var ce *store.CallExistsError
	if errors.As(err, &ce) {
		return replayed(ce.Record, call.Input, call.ID), true
	}
	if errors.Is(err, store.ErrCallConflict) {
		return failed(CodeCallID, fmt.Sprintf("call-id: call id %s reused with a different input", call.ID), nil), true
	}
	return MethodOutcome{}, false
}

// record stores a query's result under its call id and appends nothing
// (R5.4). A command that proposed nothing is recorded the same way.
func (mc *methodCall) record(o ownerRef, call *store.CallRecord, result any, rev int64) MethodOutcome {
	st := mc.i.e.st
	_, err := st.Append(mc.ctx, o.log, rev, nil, call)
	if errors.Is(err, store.ErrStale) { // the owner moved on: the result stands for rev
		_, err = st.Append(mc.ctx, o.log, store.Any, nil, call)
	}
	if err != nil {
		if out, ok := appendError(err, call); ok {
			return mc.current(o, out)
		}
		out := failed(CodeOwner, "owner: "+err.Error(), err)
		out.Revision = rev
		return out
	}
	return MethodOutcome{Status: StatusOK, Result: result, Revision: rev}
}

// behind reports whether a query's record may stay in memory, unwritten
// (callsbehind.go): no turn is open (a journaled call's record must be in
// the store for replay) and no replay runs.
func (mc *methodCall) behind() bool {
	s := mc.i.sess.Load()
	return s == nil || s.quiet()
}

// recordBehind records a query's result under its call id in memory
// only: a query outside a turn writes nothing (callsbehind.go).
func (mc *methodCall) recordBehind(o ownerRef, call *store.CallRecord, result any, rev int64) MethodOutcome {
	rec := *call
	rec.Revision = rev
	if err := mc.i.e.calls.add(o.log, rec); err != nil {
		if out, ok := appendError(err, call); ok {
			return mc.current(o, out)
		}
	}
	return MethodOutcome{Status: StatusOK, Result: result, Revision: rev}
}

// commit folds a command's proposals through the reducer, then appends
// them atomically with the call record, at the revision the handler
// observed (R5.5), then runs the subscriptions (R5.8).
func (mc *methodCall) commit(hfr *frame, o ownerRef, proposals []any, call *store.CallRecord, state, result any, rev int64, ref snapRef) MethodOutcome {
	e := mc.i.e
	if !hfr.hostAuthority { // R5.5, R6.4
		for _, p := range proposals {
			if t := p.(map[string]any)["type"].(string); o.rd.protected[t] {
				return MethodOutcome{Status: StatusRefused, RefusedBy: ByAuthority, Revision: rev,
					Reason: fmt.Sprintf("action %s of owner %s is protected: only a call with host authority appends it", t, o.addr)}
			}
		}
	}
	next, err := e.apply(mc.ctx, mc.parent, mc.i, o, call.ID, state, foldSource{proposals: proposals})
	if err != nil {
		return foldFailure(err, rev)
	}
	entries := make([][]byte, len(proposals))
	stamp := e.stamp(time.Now())
	for k, p := range proposals {
		if entries[k], err = encodeEntry(o.rd.revision, p, stamp); err != nil {
			out := failed(CodeHandler, "handler: a proposal cannot be stored: "+err.Error(), err)
			out.Revision = rev
			return out
		}
	}
	w := e.feed.begin(o.log)
	n, err := e.st.Append(mc.ctx, o.log, rev, entries, call)
	for k, d := 0, unknownRetryFirst; k < unknownRetryCount && errors.Is(err, store.ErrOutcomeUnknown); k, d = k+1, d*4 {
		// The commit may or may not have happened: the same append with
		// the same call id tells which, exactly once (R5.6): the stored
		// record if it happened, the append now if it did not.
		if !sleepCtx(mc.ctx, d) {
			break
		}
		n, err = e.st.Append(mc.ctx, o.log, rev, entries, call)
	}
	if err != nil {
		e.feed.end(w, 0, 0)
		if out, ok := appendError(err, call); ok {
			return mc.current(o, out)
		}
		if errors.Is(err, store.ErrStale) {
			msg := fmt.Sprintf("stale-revision: owner %s moved from revision %d to %d", o.addr, rev, n)
			return MethodOutcome{Status: StatusFailed, Revision: n, Error: msg, Err: &Error{Code: CodeStaleRevision, Message: msg, Err: err}}
		}
		if errors.Is(err, store.ErrOutcomeUnknown) {
			msg := fmt.Sprintf("outcome-unknown: command %s.%s (call id %s) may or may not have been committed: call again with the same call id, never a fresh one (%v)",
				o.addr, mc.c.Method, call.ID, err)
			return MethodOutcome{Status: StatusFailed, Revision: rev, CallID: call.ID, Error: msg, Err: &Error{Code: CodeOutcomeUnknown, Message: msg, Err: err}}
		}
		out := failed(CodeOwner, "owner: "+err.Error(), err)
		out.Revision = rev
		return out
	}
	e.owners.put(o.log, o.rd.foldKey, ref, &snapshot{state: next, rev: n})
	out := MethodOutcome{Status: StatusOK, Result: result, Revision: n}
	out.Diagnostics = mc.notify(o, proposals, call.ID)
	e.feed.end(w, n-int64(len(entries)), n) // the feed passes over these: run above
	return out
}

// subTarget is one subscription to run.
type subTarget struct {
	inst *Instance
	set  *regSet
	sub  *subDecl
}

// subscribes reports whether a subscription of a pin names owner o: by
// NAME@SCOPE, or by NAME (the pin's reducer's first scope; any scope when
// the pin declares no reducer of that name).
func (s *regSet) subscribes(sub *subDecl, o ownerRef) bool {
	name, scope, err := splitOwner(sub.owner)
	if err != nil || name != o.name {
		return false
	}
	if scope == "" {
		if rd, ok := s.reducers[name]; ok {
			scope = rd.scopes[0]
		} else {
			scope = o.scope
		}
	}
	return scope == o.scope
}

// notify runs the subscriptions to owner o in every live instance whose
// pin subscribes to its log (a session owner: the instances of that
// session), once per appended action, in append order, before the
// appending call returns (R5.8). Failures are returned as diagnostics: the
// actions are appended already. Subscribers in other engines (other
// processes) get the actions from the store's feed (feed.go).
func (mc *methodCall) notify(o ownerRef, actions []any, callID string) []string {
	targets, done := mc.i.e.subTargets(o, mc.i, mc.set)
	defer done()
	if len(targets) == 0 {
		return nil
	}
	return mc.i.e.runSubs(mc.ctx, mc.parent, mc.i, o, targets, actions, func(k int) string { return fmt.Sprintf("%s:sub%d", callID, k) })
}

// subTargets finds the subscriptions to owner o in the live instances
// (and self, with its set, even when it is not live: a replay's shadow;
// self may be nil), sorted by instance id. done releases the sets held.
func (e *Engine) subTargets(o ownerRef, self *Instance, selfSet *regSet) (targets []subTarget, done func()) {
	e.mu.Lock()
	insts := make([]*Instance, 0, len(e.instances))
	for _, in := range e.instances {
		insts = append(insts, in)
	}
	e.mu.Unlock()
	sort.Slice(insts, func(a, b int) bool { return insts[a].id < insts[b].id })
	if self != nil && !slices.Contains(insts, self) {
		insts = append(insts, self) // the caller itself, even when it is not live (a replay's shadow)
	}
	var held []*regSet
	for _, in := range insts {
		if o.scope == ScopeSession && in.rec.Session != o.key {
			continue
		}
		set := in.cur.Load()
		if in == self {
			set = selfSet
		}
		if set == nil || !set.acquire() {
			continue
		}
		n := len(targets)
		for _, sub := range set.subs {
			if set.subscribes(sub, o) {
				targets = append(targets, subTarget{inst: in, set: set, sub: sub})
			}
		}
		if len(targets) == n {
			set.release()
		} else {
			held = append(held, set)
		}
	}
	return targets, func() {
		for _, s := range held {
			s.release()
		}
	}
}

// runSubs runs every target once per action, in action order; id names
// the k-th run's frame. A target of the instance self runs under parent.
func (e *Engine) runSubs(ctx context.Context, parent *frame, self *Instance, o ownerRef, targets []subTarget, actions []any, id func(k int) string) []string {
	var diags []string
	seq := 0
	for _, a := range actions {
		for _, t := range targets {
			seq++
			r := t.sub.reg
			var fr *frame
			if t.inst == self && parent != nil {
				fr = newFrame(parent, ctx, t.inst, r, &t.sub.decl, id(seq))
			} else {
				fr = newFrame(nil, ctx, t.inst, r, &t.sub.decl, id(seq))
			}
			// The action and the ctx table are made with the registry
			// held: its state is not the caller's.
			owned, err := r.lock(fr)
			if err == nil {
				err = r.run(fr, luabind.Callback, t.sub.fn, 0, fr.ctxTable(), r.st.ToLua(a))
				r.unlock(owned)
			}
			if err != nil {
				msg := fmt.Sprintf("subscription %s (%s) in instance %s: %s", t.sub.owner, t.sub.pos, t.inst.id, errText(err))
				e.log.Warn("subscription failed", "owner", o.addr, "instance", t.inst.id, "error", errText(err))
				diags = append(diags, msg)
			}
		}
	}
	return diags
}

// replayMethod answers a journaled host method call in a replay: the call
// id is recorded, so the stored result comes back and nothing is appended
// (R3.10, R5.6).
func replayMethod(ctx context.Context, i *Instance, en session.Entry) MethodOutcome {
	in := en.Value
	if en.NotPlain == "input" { // refused as not storable: the replay refuses it the same way
		in = leftOut(en.Reason)
	}
	return i.Method(ctx, MethodCall{Owner: en.Owner, Method: en.Name, Input: in, CallID: en.CallID, HostAuthority: en.Auth})
}

// effect marks the method handler running in f, if one is, as having done
// something besides reading its state and proposing: it will not run again
// after a stale append (attempt).
func (f *frame) effect() {
	if f != nil && f.method != nil {
		f.method.effects = true
	}
}

// dataError marks a handler result that is not plain data.
type dataError struct{ err error }

func (e *dataError) Error() string { return e.err.Error() }

func isDataError(err error) bool {
	_, ok := err.(*dataError)
	return ok
}

// methodDecl is one define/method (R5.1, R5.2).
type methodDecl struct {
	decl
	owner  string
	scope  string // "" or the one scope of OWNER@SCOPE
	name   string
	fn     *lua.LFunction
	kind   string // "query" or "command"
	input  schema
	output schema
	grant  string
}

// methodRun is the state of a running method handler.
type methodRun struct {
	decl      *methodDecl
	proposals []any
	effects   bool // a note, host read or host library call ran (frame.effect)
}

func fDefineMethod(s *luabind.State) int {
	const form = "define/method"
	r := regOf(s)
	addr := s.CheckString(form, 1)
	owner, scope, err := splitOwner(addr)
	if err != nil {
		s.ArgError(form, 1, "%v", err)
	}
	name := s.CheckString(form, 2)
	if name == "" || strings.ContainsAny(name, "/@ \t\n") {
		s.ArgError(form, 2, "method name %q may not be empty or contain '/', '@' or spaces", name)
	}
	fn := s.CheckFunction(form, 3)
	o := s.OptTable(form, 4)
	checkOptions(s, form, o, "kind", "input", "output", "grant")
	m := &methodDecl{decl: r.newDecl(), owner: owner, scope: scope, name: name, fn: fn,
		kind:   optString(s, form, o, "kind", "query"),
		input:  optSchema(s, form, o, "input"),
		output: optSchema(s, form, o, "output"),
		grant:  optString(s, form, o, "grant", ""),
	}
	if m.kind != "query" && m.kind != "command" {
		s.L.RaiseError("%s: option kind: want \"query\" or \"command\", got %q", form, m.kind)
	}
	r.methods = append(r.methods, m)
	return 0
}
