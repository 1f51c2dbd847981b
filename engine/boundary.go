package engine

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/session"
)

// Note is text a behavior added to the model's context.
type Note = session.Note

// TurnInput opens a turn.
type TurnInput struct {
	Input        any
	ContextFresh bool
}

// RoundEnd closes a round.
type RoundEnd struct {
	HostContinue bool
	// Output is the model's reply text; nil when the host gives none.
	Output *string
}

// BoundaryResult is what one boundary step returns.
type BoundaryResult struct {
	Status Status // ok, refused or failed
	Reason string
	Error  string
	Turn   int
	Round  int
	// Notes: for round-begin the notes placed into the round's call; for
	// the others the notes their hooks emitted, pin order then declaration.
	Notes []Note
	// Continue is the round-end decision: host OR any activating note (R3.6).
	Continue bool
	// LoopEnd joins the host's addenda with the turn's notes (turn end).
	LoopEnd *session.LoopEnd
	// RefusedBy is "guard" when a boundary guard refused.
	RefusedBy string
	// Halt is set when a guard or hook called (halt REASON) during the
	// step: the agent's turn is to end (a halted round end never continues).
	Halt *Halt
	// Err is the error behind a refusal or failure (nil when ok), an *Error.
	Err error
}

// bchain runs the guards of one boundary (R3.1).
type bchain struct {
	i      *Instance
	kind   string // turn or round
	ctx    context.Context
	guards []*guardDecl
	rec    map[string]any
	callID string
	thread thread
}

// step runs guard k, or past the last guard lets the boundary open.
func (b *bchain) step(k int) Outcome {
	if k >= len(b.guards) {
		return Outcome{Status: StatusOK}
	}
	g := b.guards[k]
	fr := newFrame(nil, b.ctx, b.i, g.reg, &g.decl, b.callID)
	fr.thread = &b.thread
	gr := &guardRun{chain: b, g: g, k: k}
	out := runGuard(fr, gr)
	if b.i.e.tracer != nil {
		b.traceGuard(gr, out)
	}
	return out
}

// The boundary chain as the guard runner sees it (guard.go).

func (b *bchain) guardRecord(r *registry, _ *guardRun) *lua.LTable {
	return boundaryTable(r, b.rec)
}

func (b *bchain) putRecord(r *registry, t *lua.LTable) { r.bounds.Put(t) }

func (b *bchain) invoke(_ *luabind.State, gr *guardRun) Outcome { return b.step(gr.k + 1) }

func (b *bchain) retrying() bool { return false }

func (b *bchain) proceeds(v verdict) bool { return v == verdictAllow }

func (b *bchain) proceed(_ *luabind.State, gr *guardRun) Outcome { return b.step(gr.k + 1) }

// verdict: allow lets the boundary open; ask is a tool guard's verdict only.
func (b *bchain) verdict(_ *guardRun, v verdict, reason string, out Outcome) Outcome {
	if v == verdictAsk {
		return Outcome{Status: StatusRefused, RefusedBy: ByGuard, Reason: "ask is for tool guards only; a boundary guard refused with it: " + reason}
	}
	return out
}

// committedOut: a boundary has no core to commit.
func (b *bchain) committedOut(*guardRun) (Outcome, bool) { return Outcome{}, false }

func (b *bchain) retryFrom(_ *guardRun, reason string) Outcome {
	return Outcome{Status: StatusRefused, RefusedBy: ByGuard, Reason: "retry is for tool guards only; a boundary guard refused with it: " + reason}
}

// boundaryTable fills a boundary record for one handler of registry r (each
// gets its own copy, R3.2) from the registry's pool of records: a record
// comes back when its handler returns (r.bounds.Put) and is reused unless the
// handler added keys of its own.
func boundaryTable(r *registry, rec map[string]any) *lua.LTable {
	st := r.st
	t := r.bounds.Get(st.L, boundaryFields)
	for _, k := range boundaryFields {
		v, ok := rec[k]
		if !ok {
			luabind.SetField(t, k, lua.LNil)
			continue
		}
		switch x := v.(type) {
		case lua.LValue:
			luabind.SetField(t, k, x)
		case bool:
			luabind.SetField(t, k, lua.LBool(x))
		case float64:
			if x >= 0 && x < float64(len(lvSmall)) && x == float64(int(x)) {
				luabind.SetField(t, k, lvSmall[int(x)])
			} else {
				t.RawSetString(k, lua.LNumber(x))
			}
		case string:
			t.RawSetString(k, lua.LString(x))
		default:
			t.RawSetString(k, st.ToLua(v))
		}
	}
	return t
}

// boundaryFields are the fields of a boundary record (docs/forms.md, Records), in sorted
// order: a record iterates under pairs() in the order it was primed.
var boundaryFields = []string{"activated", "bot", "context_fresh", "harness", "host_continue", "input",
	"instance", "kind", "output", "phase", "round", "session", "source", "turn"}

// Words of the boundary record, boxed once for every state.
var (
	lvTurn  lua.LValue = lua.LString("turn")
	lvRound lua.LValue = lua.LString("round")
	lvStart lua.LValue = lua.LString("start")
	lvEnd   lua.LValue = lua.LString("end")
	lvSess  lua.LValue = lua.LString("session")
)

func boxedWord(s string) lua.LValue {
	switch s {
	case "turn":
		return lvTurn
	case "round":
		return lvRound
	case "start":
		return lvStart
	case "end":
		return lvEnd
	case "session":
		return lvSess
	}
	return lua.LString(s)
}

// boundaryRecord builds the boundary record (docs/forms.md) as plain data.
func (s *sessionState) boundaryRecord(kind, phase string) map[string]any {
	i := s.i
	m := map[string]any{
		"kind": boxedWord(kind), "phase": boxedWord(phase), "turn": float64(s.turn), "round": float64(s.round),
		"instance": i.idLV, "session": i.sessLV, "bot": i.botLV,
		"context_fresh": s.fresh, "activated": false,
	}
	if s.input != nil {
		m["input"] = s.input
	}
	if kind == "round" {
		m["activated"] = s.activated
	}
	return m
}

// hookSpread is how long the boundary's caller runs the hooks of several
// registries alone before pooled workers join in.
const hookSpread = 50 * time.Microsecond

// runHooks runs the hooks of one boundary phase in parallel across
// registries (R3.2), each with its own copy of the record, and returns the
// notes in pin order then declaration order, and the first failure.
func (i *Instance) runHooks(ctx context.Context, set *regSet, kind, phase string, rec map[string]any, callID string) ([]session.Note, *Error) {
	hooks := set.hooks[kind+"/"+phase]
	if i.e.tracer != nil && phase == "end" { // a start's guards told of it (beginBoundary)
		i.traceBoundary(set, kind, phase, callID)
	}
	if len(hooks) == 0 {
		return nil, nil
	}
	type result struct {
		sink noteSink
		err  error
	}
	results := make([]result, len(hooks))
	run := func(k int) {
		h := hooks[k]
		r := h.reg
		fr := newFrame(nil, ctx, i, r, &h.decl, callID+":"+strconv.Itoa(k))
		results[k].sink.phase = kind + "/" + phase
		fr.notes = &results[k].sink
		owned, err := r.lock(fr)
		if err == nil {
			rt := boundaryTable(r, rec)
			err = r.run(fr, luabind.Callback, h.fn, 0, rt)
			r.bounds.Put(rt)
			r.unlock(owned)
		}
		results[k].err = err
	}
	// group by registry: hooks of one registry in order (a few registries:
	// a linear search beats a map)
	var groups [][]int
	regs := make([]*registry, 0, 4)
	for k, h := range hooks {
		g := slices.Index(regs, h.reg)
		if g < 0 {
			g = len(groups)
			regs = append(regs, h.reg)
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], k)
	}
	if len(groups) == 1 {
		for _, k := range groups[0] {
			run(k)
		}
	} else {
		// The caller runs the groups itself, one after another: hooks that
		// return at once cost no hand-over between goroutines. When the
		// groups are still running after hookSpread (a hook blocks, or works
		// long), pooled workers (no goroutine started per registry) take the
		// groups the caller has not reached, so hooks still run side by side.
		// The caller waits for the groups to finish, not for the workers:
		// a worker that starts after the caller took every group finds
		// nothing to do, and no one waits for it to be scheduled.
		var next atomic.Int32
		var wg sync.WaitGroup
		wg.Add(len(groups))
		work := func() {
			for g := int(next.Add(1)) - 1; g < len(groups); g = int(next.Add(1)) - 1 {
				for _, k := range groups[g] {
					run(k)
				}
				wg.Done()
			}
		}
		spread := time.AfterFunc(hookSpread, func() {
			for range len(groups) - int(next.Load()) { // the groups no one took yet
				if !i.e.workers.TryGo(work) {
					break
				}
			}
		})
		work()
		spread.Stop()
		wg.Wait()
	}
	var notes []session.Note
	var failure *Error
	for k, res := range results {
		notes = append(notes, res.sink.notes...)
		if i.e.tracer != nil {
			i.traceHookRun(kind, phase, callID, k, hooks[k], res.sink.notes, res.err)
		}
		if res.err != nil {
			if failure == nil {
				failure = scriptErr(hooks[k].reg, res.err)
			}
			i.postFailBoundary(ctx, hooks[k], rec, Outcome{Status: StatusFailed, Error: errText(res.err)}, callID)
		}
	}
	return notes, failure
}

// postFailBoundary runs one boundary hook's :post-fail handler (R3.3).
func (i *Instance) postFailBoundary(ctx context.Context, h *hookDecl, rec map[string]any, out Outcome, callID string) {
	if h.postFail == nil {
		return
	}
	r := h.reg
	st := r.st
	fr := newFrame(nil, ctx, i, r, &h.decl, callID+":post-fail")
	owned, err := r.lock(fr)
	if err != nil {
		i.e.log.Warn("post-fail hook failed", "program", r.program, "error", err)
		return
	}
	defer r.unlock(owned)
	rt := boundaryTable(r, rec)
	defer r.bounds.Put(rt)
	if err := r.run(fr, luabind.Callback, h.postFail, 0, rt, failureTable(st, out, false)); err != nil {
		i.e.log.Warn("post-fail hook failed", "program", r.program, "error", err)
	}
}

// refuseBoundary runs the :post-fail handlers of a boundary kind's hooks
// after a guard refused (R3.3).
func (i *Instance) refuseBoundary(ctx context.Context, set *regSet, kind string, rec map[string]any, out Outcome, callID string) {
	for _, phase := range []string{"start", "end"} {
		for _, h := range set.hooks[kind+"/"+phase] {
			i.postFailBoundary(ctx, h, rec, out, callID)
		}
	}
}

// statusOf is a boundary's status given the failure of its hooks, if any.
func statusOf(failure *Error) Status {
	if failure != nil {
		return StatusFailed
	}
	return StatusOK
}

// failText is the text of a boundary's hook failure ("" when none).
func failText(failure *Error) string {
	if failure == nil {
		return ""
	}
	return failure.Error()
}

// failCode is the code of a boundary's failure for its journal entry.
func failCode(failure *Error) string {
	if failure == nil {
		return ""
	}
	return string(failure.Code)
}

func refusedResult(out Outcome) BoundaryResult {
	r := BoundaryResult{Status: out.Status, Reason: out.Reason, Error: out.Error, RefusedBy: out.RefusedBy, Err: out.Err}
	r.settle()
	return r
}

// failedWith marks a boundary result failed by its first hook failure.
func (r *BoundaryResult) failedWith(failure *Error) {
	if failure != nil {
		r.Status, r.Error, r.Err = StatusFailed, failure.Error(), failure
	}
}

// BeginTurn opens a turn: the re-attuned pin applies now (R2.5), turn
// guards run, then turn-start hooks.
func (i *Instance) BeginTurn(ctx context.Context, in TurnInput) (BoundaryResult, error) {
	if err := ctx.Err(); err != nil {
		return BoundaryResult{}, cancelled(err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closed.Load() {
		return BoundaryResult{}, errorf(CodeNotRunning, "instance %s is not running", i.id)
	}
	s := i.sess.Load()
	if s.inTurn {
		return BoundaryResult{}, errorf(CodeStillOpen, "turn %d of %s is still open: end it first", s.turn, i.id)
	}
	if ne := turnInputNotPlain(in.Input, s.turn+1); ne != nil {
		return i.turnInputNotPlain(ctx, s, in, ne)
	}
	if i.pending != nil {
		if err := i.e.promotePending(ctx, i.id, i.pending.pin); err != nil {
			return BoundaryResult{}, err
		}
		i.applyPending()
		s.journal(session.Entry{Type: session.Repin})
	}
	set, err := i.live()
	if err != nil {
		return BoundaryResult{}, err
	}
	s.mu.Lock()
	s.turn++
	s.round = 0
	s.traces = 0
	s.input, s.fresh, s.activated = in.Input, in.ContextFresh, false
	s.mu.Unlock()
	rec := s.boundaryRecord("turn", "start")
	if h := harnessOf(ctx); h != nil {
		rec["harness"] = h
	}
	callID := s.boundaryID("turn", "start")
	s.journaling.Store(true)
	b := &bchain{i: i, kind: "turn", ctx: ctx, guards: set.guards["turn"], rec: rec, callID: callID}
	if i.e.tracer != nil {
		i.traceBoundary(set, "turn", "start", callID)
	}
	out := b.step(0)
	entry := session.Entry{Type: session.TurnBegin, Turn: s.turn, Input: in.Input, ContextFresh: in.ContextFresh, Status: out.Status,
		CallID: callID, Reason: out.Reason, RefusedBy: out.RefusedBy, Error: out.Error, Code: errCode(out.Err), Engine: Version, Harness: rec["harness"]}
	if s.rp == nil {
		if entry.Pin, err = set.pinBlob(ctx); err != nil {
			set.release()
			return BoundaryResult{}, err
		}
		entry.Revs = i.firstRevs(ctx, set)
	}
	if out.Status != StatusOK {
		i.refuseBoundary(ctx, set, "turn", rec, out, callID)
		s.journal(entry)
		s.mu.Lock()
		s.turn--
		s.mu.Unlock()
		s.journaling.Store(false)
		set.release()
		res := refusedResult(out)
		res.Halt = s.takeHalt()
		i.traceBoundaryOut("turn", "start", callID, res, false)
		return res, s.flush(ctx)
	}
	s.mu.Lock()
	s.inTurn = true
	s.mu.Unlock()
	i.turnSet = set
	notes, failure := i.runHooks(ctx, set, "turn", "start", rec, callID)
	s.emit(notes, callID)
	// a step's entry follows what happened during it (deliveries, notes)
	entry.Error, entry.Code = failText(failure), failCode(failure)
	s.journal(entry)
	res := BoundaryResult{Status: StatusOK, Turn: s.turn, Notes: notes, Halt: s.takeHalt()}
	res.failedWith(failure)
	i.traceBoundaryOut("turn", "start", callID, res, false)
	return res, s.flush(ctx)
}

// turnInputNotPlain refuses a turn whose input has no JSON form before
// anything runs (R3.10): no pin is applied, no guard or hook runs, no turn
// opens. The failure is journaled without the input (NotPlain names it),
// and returned both as the result and as the error.
func (i *Instance) turnInputNotPlain(ctx context.Context, s *sessionState, in TurnInput, ne *Error) (BoundaryResult, error) {
	s.mu.Lock()
	s.turn++
	callID := s.boundaryID("turn", "start")
	turn := s.turn
	s.turn--
	s.mu.Unlock()
	entry := session.Entry{Type: session.TurnBegin, Turn: turn, ContextFresh: in.ContextFresh, Status: StatusFailed,
		CallID: callID, Error: ne.Message, NotPlain: "input", Engine: Version}
	if s.rp == nil {
		set, err := i.live()
		if err != nil {
			return BoundaryResult{}, err
		}
		entry.Pin, err = set.pinBlob(ctx)
		if err == nil {
			entry.Revs = i.firstRevs(ctx, set)
		}
		set.release()
		if err != nil {
			return BoundaryResult{}, err
		}
	}
	s.journal(entry)
	res := BoundaryResult{Status: StatusFailed, Error: ne.Message, Err: ne}
	if err := s.flush(ctx); err != nil {
		return res, err
	}
	return res, ne
}

// BeginRound opens a round: round guards, round-start hooks, then every
// note of the turn not yet placed is placed into this round's call (R3.7).
func (i *Instance) BeginRound(ctx context.Context) (BoundaryResult, error) {
	if err := ctx.Err(); err != nil {
		return BoundaryResult{}, cancelled(err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	s := i.sess.Load()
	if !s.inTurn {
		return BoundaryResult{}, errorf(CodeNoOpenTurn, "%s has no open turn: begin a turn first", i.id)
	}
	if s.inRound {
		return BoundaryResult{}, errorf(CodeStillOpen, "round %d of turn %d is still open: end it first", s.round, s.turn)
	}
	set := i.turnSet
	s.mu.Lock()
	s.round++
	s.mu.Unlock()
	rec := s.boundaryRecord("round", "start")
	if h := harnessOf(ctx); h != nil {
		rec["harness"] = h
	}
	callID := s.boundaryID("round", "start")
	b := &bchain{i: i, kind: "round", ctx: ctx, guards: set.guards["round"], rec: rec, callID: callID}
	if i.e.tracer != nil {
		i.traceBoundary(set, "round", "start", callID)
	}
	out := b.step(0)
	entry := session.Entry{Type: session.RoundBegin, Turn: s.turn, Round: s.round, Status: out.Status,
		CallID: callID, Reason: out.Reason, RefusedBy: out.RefusedBy, Error: out.Error, Code: errCode(out.Err), Harness: rec["harness"]}
	if out.Status != StatusOK {
		i.refuseBoundary(ctx, set, "round", rec, out, callID)
		s.journal(entry)
		s.mu.Lock()
		s.round--
		s.mu.Unlock()
		res := refusedResult(out)
		res.Halt = s.takeHalt()
		i.traceBoundaryOut("round", "start", callID, res, false)
		return res, s.flush(ctx)
	}
	s.inRound = true
	notes, failure := i.runHooks(ctx, set, "round", "start", rec, callID)
	s.emit(notes, callID)
	entry.Error, entry.Code = failText(failure), failCode(failure)
	s.journal(entry)
	var placed []Note
	if s.rp == nil {
		placed = s.book.Place()
		for _, n := range placed {
			s.journal(session.Entry{Type: session.Consume, ID: n.ID})
		}
	}
	res := BoundaryResult{Status: StatusOK, Turn: s.turn, Round: s.round, Notes: placed, Halt: s.takeHalt()}
	res.failedWith(failure)
	i.traceBoundaryOut("round", "start", callID, res, false)
	return res, s.flush(ctx)
}

// EndRound closes a round: round-end hooks finish, then the continuation
// decision is made: the host's wish OR any activating note of this round
// end (R3.4, R3.6).
func (i *Instance) EndRound(ctx context.Context, in RoundEnd) (BoundaryResult, error) {
	if err := ctx.Err(); err != nil {
		return BoundaryResult{}, cancelled(err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.endRound(ctx, in)
}

func (i *Instance) endRound(ctx context.Context, in RoundEnd) (BoundaryResult, error) {
	s := i.sess.Load()
	if !s.inRound {
		return BoundaryResult{}, errorf(CodeNoOpenRound, "%s has no open round", i.id)
	}
	set := i.turnSet
	rec := s.boundaryRecord("round", "end")
	if h := harnessOf(ctx); h != nil {
		rec["harness"] = h
	}
	rec["host_continue"] = in.HostContinue
	if in.Output != nil {
		rec["output"] = *in.Output
	}
	callID := s.boundaryID("round", "end")
	notes, failure := i.runHooks(ctx, set, "round", "end", rec, callID)
	s.emit(notes, callID)
	cont := in.HostContinue
	for _, n := range notes {
		if n.Kind == session.Activating {
			cont = true
		}
	}
	halt := s.takeHalt()
	if halt != nil { // the turn ends here (halt.go)
		cont = false
	}
	s.inRound = false
	s.activated = cont && !in.HostContinue
	s.journal(session.Entry{Type: session.RoundEnd, Turn: s.turn, Round: s.round, HostContinue: in.HostContinue, Output: in.Output, Continue: cont,
		CallID: callID, Status: statusOf(failure), Error: failText(failure), Code: failCode(failure), Harness: rec["harness"]})
	res := BoundaryResult{Status: StatusOK, Turn: s.turn, Round: s.round, Notes: notes, Continue: cont, Halt: halt}
	res.failedWith(failure)
	i.traceBoundaryOut("round", "end", callID, res, in.HostContinue)
	return res, s.flush(ctx)
}

// EndTurn closes (and seals) the turn: an open round is ended first (with
// host_continue false), turn-end hooks run after the last round (R3.4),
// notes never placed expire (R3.7), and the loop-end result joins the
// host's addenda with the turn's notes (R3.8).
func (i *Instance) EndTurn(ctx context.Context, addenda ...string) (BoundaryResult, error) {
	if err := ctx.Err(); err != nil {
		return BoundaryResult{}, cancelled(err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	s := i.sess.Load()
	if !s.inTurn {
		return BoundaryResult{}, errorf(CodeNoOpenTurn, "%s has no open turn", i.id)
	}
	var early []Note
	var halt *Halt
	if s.inRound {
		r, err := i.endRound(ctx, RoundEnd{})
		if err != nil {
			return r, err
		}
		early, halt = r.Notes, r.Halt
	}
	set := i.turnSet
	rec := s.boundaryRecord("turn", "end")
	if h := harnessOf(ctx); h != nil {
		rec["harness"] = h
	}
	callID := s.boundaryID("turn", "end")
	notes, failure := i.runHooks(ctx, set, "turn", "end", rec, callID)
	s.emit(notes, callID)
	sealed := s.book.Seal()
	revs, err := i.sessionRevs(ctx)
	if err != nil {
		return BoundaryResult{}, err
	}
	s.journal(session.Entry{Type: session.TurnEnd, Turn: s.turn, Revs: revs, CallID: callID, Status: statusOf(failure), Error: failText(failure), Code: failCode(failure), Harness: rec["harness"]})
	s.mu.Lock()
	s.inTurn = false
	s.mu.Unlock()
	s.journaling.Store(false)
	i.turnSet = nil
	set.release()
	var turnNotes []Note
	for _, n := range sealed {
		if n.Turn == s.turn {
			turnNotes = append(turnNotes, n)
		}
	}
	le := session.Merge(addenda, turnNotes)
	if h := s.takeHalt(); halt == nil {
		halt = h
	}
	res := BoundaryResult{Status: StatusOK, Turn: s.turn, Notes: append(early, notes...), LoopEnd: &le, Halt: halt}
	res.failedWith(failure)
	if i.e.tracer != nil {
		out := res
		out.Notes = notes
		i.traceBoundaryOut("turn", "end", callID, out, false)
	}
	return res, s.flush(ctx)
}

// Consume places one note into a model call on the host's behalf;
// a consumed or expired note is an error (R3.7).
func (i *Instance) Consume(ctx context.Context, id string) error {
	s := i.sess.Load()
	if err := s.book.Consume(id); err != nil {
		return wrapErr(CodeNote, err, "")
	}
	s.journal(session.Entry{Type: session.Consume, ID: id})
	return s.flush(ctx)
}

// TurnState is where an instance stands in its loop.
type TurnState struct {
	// Turn and Round are the numbers of the current (or last) turn and
	// round of the turn; 0 before the first.
	Turn, Round int
	// InTurn and InRound report an open turn and an open round.
	InTurn, InRound bool
}

// Turn reports the open turn and round.
func (i *Instance) Turn() TurnState {
	s := i.sess.Load()
	s.mu.Lock()
	defer s.mu.Unlock()
	return TurnState{Turn: s.turn, Round: s.round, InTurn: s.inTurn, InRound: s.inRound}
}
