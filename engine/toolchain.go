package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/session"
)

// Refusers of the tool chain (R4.11): an Outcome's RefusedBy, and the Code
// of its Err.
const (
	ByCeiling     = "ceiling"
	ByGuard       = "guard"
	ByFloor       = "floor"
	ByReentry     = "reentry"
	ByRetryBudget = "retry-budget"
)

// Outcome is the result of one tool call (R4.11). Fields that do not apply
// are zero.
type Outcome struct {
	Status      Status
	Result      any
	Diagnostics []string
	Reason      string
	RefusedBy   string
	// RefusedAt is where the guard that refused was registered
	// ("protect.lua:12"), when a guard refused.
	RefusedAt string
	Error     string
	// Hidden is set when the refusal handed to :post-fail hooks was hidden
	// (the floor never saw the call).
	Hidden bool
	// Verdict is a tool guard's word to the harness about a call that goes
	// ahead: "" (none: the harness's own permission rules apply),
	// VerdictAllow or VerdictAsk; VerdictReason is the guard's reason. An
	// ask where the core runs in-process refuses the call (Verdict stays
	// "ask").
	Verdict       string
	VerdictReason string
	// Halt is set when a guard or hook called (halt REASON) during the
	// call: the host ends the agent's turn.
	Halt *Halt
	// Replaced is set when a result guard replaced the core's result
	// (Result is the new one).
	Replaced bool
	CallID   string
	// guards are the verdicts of the tool guards the call ran through,
	// journaled with it (nil when it is not journaled)
	guards *verdictList
	// Err is the error behind a refusal or failure (nil when ok): an
	// *Error whose Code is the refused_by word or the failure's kind, and
	// whose text is Reason or Error.
	Err error
}

// ToolCall is one call of a tool by the host.
type ToolCall struct {
	Path   string
	Args   any
	CallID string // empty: a fresh id
}

// toolEntry is what a pin resolves for one tool path, once (R4.2).
type toolEntry struct {
	path    string
	pathLV  lua.LValue // path, boxed once
	host    *HostTool
	def     *toolDecl
	effects []string
	allowed bool // every effect inside the bot's ceiling
	outside string
	guards  []*guardDecl
	hooks   []*hookDecl
	results []*guardDecl // result guards (resultguard.go)
	fast    bool
	// quick: fast, inside the ceiling, and the floor is the default one
	// (which cannot refuse an unmarked call): only the core runs.
	quick bool
	core  CoreFunc
}

type toolTable struct {
	gen  int64
	m    map[string]*toolEntry
	last atomic.Pointer[toolEntry] // the entry found last (a one-entry cache)
}

// toolTable returns the set's resolved tool table, rebuilding it when the
// host's tools changed.
func (s *regSet) toolTable() *toolTable {
	gen := s.engine.toolsGen.Load()
	if t := s.tools.Load(); t != nil && t.gen == gen {
		return t
	}
	t := &toolTable{gen: gen, m: map[string]*toolEntry{}}
	add := func(path string, host *HostTool, def *toolDecl, effects []string) {
		te := &toolEntry{path: path, pathLV: lua.LString(path), host: host, def: def, effects: effects, allowed: true}
		for _, eff := range effects {
			if !s.inst.ceiling[eff] {
				te.allowed = false
				te.outside = eff
				break
			}
		}
		for _, r := range s.regs {
			for _, g := range r.toolGuards {
				if match(g.pattern, path) {
					te.guards = append(te.guards, g)
				}
			}
			for _, h := range r.toolHooks {
				if match(h.pattern, path) {
					te.hooks = append(te.hooks, h)
				}
			}
			for _, g := range r.resultGuards {
				if match(g.pattern, path) {
					te.results = append(te.results, g)
				}
			}
		}
		te.fast = len(te.guards) == 0 && len(te.hooks) == 0 && len(te.results) == 0 && host != nil
		te.quick = te.fast && te.allowed && s.engine.markFloor
		if host != nil {
			te.core = host.Core
		}
		t.m[path] = te
	}
	for path, h := range s.engine.hostTools() {
		add(path, h, nil, h.Effects)
	}
	for _, r := range s.regs { // a define/tool of the pin wins over a host tool of the same path
		for _, d := range r.tools {
			add(d.path, nil, d, d.effects)
		}
	}
	s.tools.Store(t)
	return t
}

// Tool runs one call through the tool chain (R4.1-R4.11).
func (i *Instance) Tool(ctx context.Context, c ToolCall) Outcome {
	if err := ctx.Err(); err != nil { // a call the host gave up on never runs
		ce := cancelled(err)
		return Outcome{Status: StatusFailed, Error: ce.Message, CallID: c.CallID, Err: ce}
	}
	// R4.2, the fast path: a host tool no guard or hook matches, inside
	// the ceiling, no turn to journal, and the default floor (which cannot
	// refuse an unmarked call): only the core runs. No script, no allocation.
	var found *toolEntry // and where, for the chain not to look again
	var in *toolTable
	if set := i.cur.Load(); set != nil {
		if t := set.tools.Load(); t != nil && t.gen == i.e.toolsGen.Load() {
			te := t.last.Load() // hosts call one tool many times in a row
			if te == nil || te.path != c.Path {
				if te = t.m[c.Path]; te != nil {
					t.last.Store(te)
				}
			}
			found, in = te, t
			if te != nil && te.quick && i.e.tracer == nil {
				ss := i.sess.Load()
				if ss.quiet() {
					res, err := i.callCore(ctx, te.core, c.CallID, c.Path, c.Args, nil)
					return hostOutcome(res, err, c.CallID)
				}
				if ss.rp == nil {
					return i.quickInTurn(ctx, ss, te, c)
				}
			}
		}
	}
	out := i.tool(ctx, c, found, in)
	out.settle()
	out.Halt = i.sess.Load().takeHalt()
	return out
}

// hostOutcome is the outcome of a host core that returned res, err. It is
// small enough to inline into the fast path; the failure is built apart.
func hostOutcome(res any, err error, callID string) Outcome {
	if err != nil {
		return coreFailure(err, callID)
	}
	return Outcome{Status: StatusOK, Result: res, CallID: callID}
}

// coreFailure is the outcome of a host core that failed with err.
func coreFailure(err error, callID string) Outcome {
	return Outcome{Status: StatusFailed, Error: err.Error(), Err: withStatus(StatusFailed, coreErr(err)), CallID: callID}
}

// lookupTool finds a tool of the set for this instance and checks it
// against the bot's ceiling (R4.1); when it is not to run, the outcome
// says why.
func (i *Instance) lookupTool(set *regSet, path string) (*toolEntry, Outcome) {
	return i.checkTool(set.toolTable().m[path], path)
}

// checkTool is lookupTool for the entry te found for path (nil: none).
func (i *Instance) checkTool(te *toolEntry, path string) (*toolEntry, Outcome) {
	if te == nil {
		msg := "no tool named " + path + " (neither a host tool nor a define/tool of this pin)"
		return nil, Outcome{Status: StatusFailed, Error: msg, Err: &Error{Code: CodeUnknownTool, Message: msg}}
	}
	if !te.allowed {
		out := Outcome{Status: StatusRefused, RefusedBy: ByCeiling, Reason: "effect " + te.outside + " is outside the ceiling of bot " + i.rec.Bot}
		i.traceCeiling(path, out)
		return nil, out
	}
	return te, Outcome{}
}

// coreErr classifies the error a host core returned.
func coreErr(err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	code := CodeCore
	if c := ctxCode(err); c != "" {
		code = c
	}
	return &Error{Code: code, Message: err.Error(), Err: err}
}

// tool is every other call: the ceiling, the floor, the chain, the journal.
// found is the entry Tool found for the call in table in, if any: it holds
// when the set held is the one whose current table that is.
func (i *Instance) tool(ctx context.Context, c ToolCall, found *toolEntry, in *toolTable) Outcome {
	// the set is held for the whole call: a hydration or re-attunement may
	// release it meanwhile, and its registries close with the last holder
	set, err := i.live()
	if err != nil {
		return Outcome{Status: StatusFailed, Error: err.Error(), Err: err}
	}
	defer set.release()
	if found == nil || set.tools.Load() != in || in.gen != i.e.toolsGen.Load() {
		found = set.toolTable().m[c.Path]
	}
	te, refusal := i.checkTool(found, c.Path)
	if te == nil {
		return refusal
	}
	if c.CallID == "" {
		c.CallID = i.newCallID()
	}
	ss := i.sess.Load()
	var args any
	if ss.delivering() { // journaled, or replayed: arguments the journal cannot record fail the call first
		if lo, ok := c.Args.(leftOut); ok { // a replay of a call whose arguments were left out: it fails as it did
			ne := &Error{Code: CodeNotPlain, Message: string(lo)}
			return Outcome{Status: StatusFailed, Error: ne.Message, Err: ne, CallID: c.CallID}
		}
		args = CopyPlain(c.Args)
		if err := session.Encodable(args); err != nil {
			return i.argsNotPlain(ss, te.path, c.CallID, err, false)
		}
	}
	out := i.runChain(ctx, set, te, c, nil, nil)
	if ss.journaling.Load() {
		en := journalTool(c.Path, args, out)
		en.Harness = harnessOf(ctx)
		ss.journalBehind(en)
	}
	out.guards = out.guards.release() // the journal encoded them: the list goes back
	return out
}

// quickInTurn is the fast path inside a turn (R4.2, R3.10): only the core
// runs, and the journal gets what the chain would have recorded (the
// default floor's verdict, the core's outcome, the call and its outcome),
// written behind the call. Arguments the journal could not record fail the
// call before the core runs; a result it cannot record fails it after
// (notplain.go).
func (i *Instance) quickInTurn(ctx context.Context, ss *sessionState, te *toolEntry, c ToolCall) Outcome {
	callID := c.CallID
	if callID == "" {
		callID = i.newCallID()
	}
	args := CopyPlain(c.Args)
	if err := session.Encodable(args); err != nil {
		return i.argsNotPlain(ss, te.path, callID, err, false)
	}
	res, err := i.callCore(ctx, te.core, callID, te.path, c.Args, nil) // the host ctx as is, as on the fast path outside a turn
	out := hostOutcome(res, err, callID)
	// the journal encodes the values before this returns and keeps none:
	// the result is converted where not plain, not copied (the arguments
	// were copied before the core ran: it may change them)
	q := session.QuickCall{Path: te.path, CallID: callID, Status: out.Status, Error: out.Error, Code: errCode(out.Err), Args: args}
	if err == nil {
		q.Result = Plain(res)
	}
	if jerr := ss.journalQuick(&q); jerr != nil { // nothing of it was journaled
		return i.resultNotPlain(ss, &q, jerr)
	}
	return out
}

// argsNotPlain fails a call whose arguments have no JSON form (err, from
// session.Encodable) before anything runs, and journals the failure: the
// call without its arguments, NotPlain naming them.
func (i *Instance) argsNotPlain(ss *sessionState, path, callID string, err error, always bool) Outcome {
	ne := notPlainErr("tool "+path+": the arguments", "args", err.(*session.EncodeError))
	if always || ss.journaling.Load() {
		ss.journalBehind(session.Entry{Type: session.Tool, Path: path, CallID: callID, Status: StatusFailed, Error: ne.Message, Code: string(CodeNotPlain), NotPlain: "args"})
	}
	ne.Status = StatusFailed
	return Outcome{Status: StatusFailed, Error: ne.Message, Err: ne, CallID: callID}
}

// resultNotPlain fails a fast-path call q whose core's result has no JSON
// form (err, from journaling q, which journaled nothing of it): the call is
// journaled as failed, the core's answer as that failure.
func (i *Instance) resultNotPlain(ss *sessionState, q *session.QuickCall, err error) Outcome {
	var ee *session.EncodeError
	if !errors.As(err, &ee) {
		ee = &session.EncodeError{What: err.Error(), Err: err}
	}
	ne := notPlainErr("tool "+q.Path+": the core's result", "result", ee)
	q.Status, q.Error, q.Result = StatusFailed, ne.Message, nil
	_ = ss.journalQuick(q) // its arguments were checked, and it holds no other host value
	ne.Status = StatusFailed
	return Outcome{Status: StatusFailed, Error: ne.Message, Err: ne, CallID: q.CallID}
}

// chain is one call's walk through guards, floor, hooks and core.
type chain struct {
	chainState
	grs [3]guardRun // the first guards' runs, without an allocation each
	frs [5]frame    // the first frames of the chain, likewise
	// verdicts are the guards' verdicts, for the call's journal entry;
	// keepVerdicts is set when that entry will be written (runChain), so
	// a call outside a turn, or nested, spends nothing on them
	verdicts     []session.GuardVerdict
	keepVerdicts bool
}

// chainState is what a chain starts from afresh; its runs and frames are
// each set when used, so a recycled chain does not clear them (about 2 KB).
type chainState struct {
	i      *Instance
	set    *regSet
	te     *toolEntry
	ctx    context.Context
	parent *frame
	callID string
	// args is the call's argument as plain data (the host's value itself
	// when it is plain already): what the first guard is given, never
	// changed by the engine
	args    any
	attempt int
	marks   []string

	seq       int64 // nested call ids under callID
	noted     int64 // bytes of the notes its callbacks emitted (frame.noted)
	thread    *thread
	callIDLV  lua.LValue
	argsLV    lua.LValue // a string argument, boxed once (argsValue)
	nfrs      int
	floorSaw  bool
	floorArgs any
	retry     bool
	retryWhy  string
	// retries spent on the lineage: the parent's counter, or ownRetries
	retries    *int
	ownRetries int
	// plug is the chain's core when it is not the tool's own (a host
	// tool's core, or a define/tool's function): external.go's, which
	// stops at the core of a call the harness runs (ToolBegin), or gives
	// the outcome the harness reports (ToolEnd); nil: the tool's own
	plug coreStep
	// scope is what a call from the host allocated for its chain (nil for
	// a nested one); hostAt, when set, is when the last guard's invoke
	// stopped its script's clock, which is when the core's host work
	// begins if nothing but engine code runs before it
	scope  *callScope
	hostAt time.Time
	// harness is the harness data the call's records carry (harness.go)
	harness any
	// tails counts the guards of this attempt that passed the call on
	// with "return invoke(...)" (their outcome is invoke's, unseen);
	// committed: the core committed its success (Commit)
	tails     int
	committed bool
}

// callScope is made once for a call from the host: the thread its chain
// runs on, and the ctx its host core gets. Neither is ever used again for
// another call (a host may keep the ctx, another thread may still look at
// the thread), so scopes are carved from blocks (scopeSlab), one
// allocation per block instead of one per call.
type callScope struct {
	thread thread
	core   lazyDeadline
	used   bool // core was handed out
}

// scopeBlockLen is how many call scopes one block holds (about 4.6 KB,
// kept alive while any of its scopes is: a host that keeps a core's ctx
// keeps that much).
const scopeBlockLen = 32

type scopeBlock struct {
	next   atomic.Int32 // the first scope not handed out (may run past the end)
	scopes [scopeBlockLen]callScope
}

// scopeSlab hands out call scopes, each once, from its current block; any
// goroutine may ask.
type scopeSlab struct {
	cur atomic.Pointer[scopeBlock]
}

func (sl *scopeSlab) get() *callScope {
	for {
		b := sl.cur.Load()
		if b != nil {
			if k := b.next.Add(1) - 1; k < scopeBlockLen {
				return &b.scopes[k]
			}
		}
		nb := new(scopeBlock)
		nb.next.Store(1)
		if sl.cur.CompareAndSwap(b, nb) {
			return &nb.scopes[0]
		}
	}
}

// chains are recycled: a chain is about 2 KB (its first frames and guard
// runs live in it), and nothing refers to it once its call has returned.
var chains = sync.Pool{New: func() any { return new(chain) }}

// coreStep is a pluggable core of the chain: what its core step runs in
// place of the tool's own core (external.go).
type coreStep interface {
	runCore(c *chain, args any) Outcome
}

// runChain is the chain entered from its first step (R4.1-R4.11): a host
// call past the quick path, call/tool (parent is the calling frame), and,
// with a core of its own (plug), a harness's ToolBegin.
func (i *Instance) runChain(ctx context.Context, set *regSet, te *toolEntry, c ToolCall, parent *frame, plug coreStep) Outcome {
	ch := i.enterChain(ctx, set, te, c.CallID, parent, plug)
	defer chains.Put(ch)
	// a call from the host is journaled inside a turn; one the harness
	// runs (plug, ToolBegin) always; a nested call is part of its caller's
	ch.keepVerdicts = parent == nil && (plug != nil || i.sess.Load().journaling.Load())
	ch.args = luabind.Plain(c.Args)
	if i.e.tracer != nil {
		ch.traceMatched()
	}
	out := ch.run()
	out.CallID = ch.callID
	if i.e.tracer != nil {
		ch.traceOut(TraceOutcome, out)
	}
	return out
}

// enterChain is a chain from the pool, set up for one call of te (callID
// "": a fresh id); every entry into the chain starts here. The caller puts
// it back in chains once the call has returned.
func (i *Instance) enterChain(ctx context.Context, set *regSet, te *toolEntry, callID string, parent *frame, plug coreStep) *chain {
	ch := chains.Get().(*chain)
	marks := ch.marks[:0] // the list, not its labels, outlives a call
	ch.chainState = chainState{i: i, set: set, te: te, ctx: ctx, parent: parent, callID: callID, plug: plug, marks: marks, harness: harnessOf(ctx)}
	ch.retries = &ch.ownRetries
	if parent != nil && parent.retries != nil {
		ch.retries = parent.retries // one retry budget per lineage (R5.7)
	}
	if parent != nil {
		ch.thread = parent.thread
	} else {
		// a thread of its own, never recycled: other threads may still be
		// looking at it (registry.lock) after this chain is done
		ch.scope = i.scopes.get()
		ch.thread = &ch.scope.thread
	}
	if ch.callID == "" {
		if parent != nil {
			ch.callID = parent.childCallID()
		} else {
			ch.callID = i.newCallID()
		}
	}
	ch.verdicts, ch.keepVerdicts = ch.verdicts[:0], false
	return ch
}

func (c *chain) run() Outcome {
	if parentDepth(c.parent) >= maxDepth {
		return Outcome{Status: StatusRefused, RefusedBy: ByReentry, Reason: fmt.Sprintf("calls nested deeper than %d", maxDepth)}
	}
	if d, n := c.reentered(); d != nil { // R4.9
		return Outcome{Status: StatusRefused, RefusedBy: ByReentry,
			Reason: fmt.Sprintf("the registration at %s is already on the lineage %d time(s); its :reentrant-depth allows %d", d.pos, n, n-1)}
	}
	budget := c.i.bot.RetryBudget
	var out Outcome
	for c.attempt = 1; ; c.attempt++ {
		c.marks = c.marks[:0]
		c.retry, c.floorSaw, c.floorArgs, c.tails = false, false, nil, 0
		out = c.step(0, c.args)
		if !c.retry {
			break
		}
		// R4.10: N re-entries (attempts 1..N+1); R5.7: counted over the
		// lineage, nested chains included
		if *c.retries++; *c.retries > budget {
			out = Outcome{Status: StatusRefused, RefusedBy: ByRetryBudget,
				Reason: fmt.Sprintf("retry budget of %d spent on this lineage (last retry: %s)", budget, c.retryWhy)}
			break
		}
	}
	if out.Status != StatusOK && out.Status != StatusPending {
		out = c.postFail(out)
	}
	out.guards = c.journaledVerdicts()
	return out
}

// frame returns the frame of one registration of this chain; the first
// ones come from the chain itself (a frame lives no longer than its call).
func (c *chain) frame(r *registry, d *decl) *frame {
	var fr *frame
	if c.nfrs < len(c.frs) {
		fr = &c.frs[c.nfrs]
		c.nfrs++
	} else {
		fr = new(frame)
	}
	*fr = frame{ctx: c.ctx, inst: c.i, reg: r, decl: d, callID: c.callID, seq: &c.seq}
	if c.i.e.obs != nil {
		c.i.e.ran(d)
	}
	c.parent.enter(fr)
	fr.thread = c.thread
	fr.retries = c.retries
	if fr.noted == nil {
		fr.noted = &c.noted
	}
	return fr
}

func parentDepth(f *frame) int {
	if f == nil {
		return 0
	}
	return f.depth
}

// reentered returns a registration of this chain already on the lineage
// more often than its depth allows.
func (c *chain) reentered() (*decl, int) {
	base := c.i.rec.Lineage
	check := func(d *decl, depth int) (*decl, int) {
		if n := c.parent.onLineage(d.id, base); n > depth {
			return d, n
		}
		return nil, 0
	}
	for _, g := range c.te.guards {
		if d, n := check(&g.decl, g.depth); d != nil {
			return d, n
		}
	}
	for _, h := range c.te.hooks {
		if d, n := check(&h.decl, h.depth); d != nil {
			return d, n
		}
	}
	if c.te.def != nil {
		if d, n := check(&c.te.def.decl, 0); d != nil {
			return d, n
		}
	}
	return nil, 0
}

// step runs guard k, or past the last guard the floor, hooks and core.
func (c *chain) step(k int, args any) Outcome {
	if k >= len(c.te.guards) {
		return c.inner(args)
	}
	g := c.te.guards[k]
	fr := c.frame(g.reg, &g.decl)
	var gr *guardRun
	if k < len(c.grs) {
		gr = &c.grs[k]
	} else {
		gr = new(guardRun)
	}
	*gr = guardRun{chain: c, g: g, k: k, args: args}
	out := runGuard(fr, gr)
	c.noteVerdict(gr, out)
	if c.i.e.tracer != nil {
		c.traceGuard(gr, out)
	}
	return out
}

// The tool chain as the guard runner sees it (guard.go).

func (c *chain) guardRecord(r *registry, gr *guardRun) *lua.LTable {
	t := c.callRecord(r, gr.args)
	gr.argsLV = t.PeekRecordAt(callArgs, "args") // a lazy one stays so
	return t
}

func (c *chain) putRecord(r *registry, t *lua.LTable) { r.calls.Put(t) }

func (c *chain) retrying() bool { return c.retry }

func (c *chain) retryFrom(gr *guardRun, reason string) Outcome {
	if gr.invoked {
		return gr.out // the rest of the chain ran: a retry would run the core twice
	}
	c.retry = true
	c.retryWhy = reason
	return Outcome{}
}

// invoke passes invoke's argument, or the guard's call.args as it is now,
// down the chain (R4.3).
func (c *chain) invoke(s *luabind.State, gr *guardRun) Outcome {
	var v lua.LValue
	if s.L.GetTop() >= 1 {
		v = s.L.Get(1)
	} else {
		v = gr.call.PeekRecordAt(callArgs, "args")
	}
	if gr.k+1 == len(c.te.guards) {
		c.hostAt = s.HostSince()
	}
	if gr.tail {
		c.tails++
	}
	return c.invokeWith(s, gr, v)
}

// final reports that nothing after the core step can change a successful
// outcome of this chain (Commit): every guard passed the call on
// with "return invoke(...)", no result guard or :post hook follows, the
// call is the host's own, and no trace is taken.
func (c *chain) final() bool {
	if c.parent != nil || c.plug != nil || c.i.e.tracer != nil || len(c.te.results) > 0 || c.tails != len(c.te.guards) {
		return false
	}
	for _, h := range c.te.hooks {
		if h.post != nil {
			return false
		}
	}
	return true
}

// committedOut is what a guard of a committed chain returns: the
// committed success, whatever ended its callback after the core.
func (c *chain) committedOut(gr *guardRun) (Outcome, bool) {
	if c.committed && gr.invoked && gr.tail && gr.out.Status == StatusOK {
		return gr.out, true
	}
	return Outcome{}, false
}

// proceed is invoke() for a guard that returned (allow REASON) or (ask
// REASON) without calling it: call.args as the guard left it goes on.
func (c *chain) proceed(s *luabind.State, gr *guardRun) Outcome {
	return c.invokeWith(s, gr, gr.call.PeekRecordAt(callArgs, "args"))
}

// proceeds: allow lets the call go on; ask only where a harness can ask
// its user first: it runs the core (ToolBegin), or the call came from one
// (a replay of a harness's call). Otherwise no one is there to ask, and
// the call is refused (verdict).
func (c *chain) proceeds(v verdict) bool { return v == verdictAllow || c.askable() }

func (c *chain) askable() bool { return c.plug != nil || c.harness != nil }

// verdict sets the harness's verdict on a call that goes ahead, the
// strictest of the chain's guards holding (ask over allow); a refusal or
// failure stays as it is.
func (c *chain) verdict(gr *guardRun, v verdict, reason string, out Outcome) Outcome {
	if v == verdictAsk && !c.askable() {
		if reason == "" {
			reason = "the guard at " + gr.g.pos + " asks for approval"
		}
		return Outcome{Status: StatusRefused, RefusedBy: ByGuard, Verdict: VerdictAsk, VerdictReason: reason,
			Reason: reason + " (no one to ask: the core runs in this host)"}
	}
	if out.Status != StatusOK && out.Status != StatusPending {
		return out
	}
	if w := verdictWord(v); stricter(w, out.Verdict) {
		out.Verdict, out.VerdictReason = w, reason
	}
	return out
}

func (c *chain) invokeWith(s *luabind.State, gr *guardRun, v lua.LValue) Outcome {
	args := gr.args
	placed := gr.argsLV
	if l, ok := placed.(*lua.LLazy); ok {
		if v == placed { // never read, so unchanged
			return c.step(gr.k+1, args)
		}
		placed = l.Made() // what the guard read (nil: it replaced call.args unread)
	}
	if v != placed || !s.Unchanged(v, args) {
		// the guard passed something else, or changed what it was given
		var err error
		if args, err = s.FromLua(v); err != nil {
			s.L.RaiseError("invoke: the argument is not plain data: %v", err)
		}
	}
	return c.step(gr.k+1, args)
}

// inner runs past the guards: floor (R4.4), :pre (R4.5), core (R4.6), :post (R4.7).
func (c *chain) inner(args any) Outcome {
	c.floorSaw, c.floorArgs = true, args
	if !c.i.e.markFloor { // the host's floor runs first: the core begins later
		c.hostAt = time.Time{}
	}
	if c.i.e.markFloor && len(c.marks) == 0 && !c.i.sess.Load().delivering() {
		// the default floor cannot refuse an unmarked call, and no verdict
		// is journaled: it is not asked (as on the fast path)
		if c.i.e.tracer != nil {
			c.traceStep(TraceStep{Step: TraceFloor, Verdict: "pass", Reason: "the default floor refuses only marked calls, and this one carries no mark"})
		}
	} else if reason, refused, ferr := c.i.floorVerdict(c.ctx, FloorCall{Instance: c.i.id, Session: c.i.rec.Session, CallID: c.callID, Path: c.te.path, Args: args, Marks: append([]string(nil), c.marks...)}); refused {
		out := Outcome{Status: StatusRefused, RefusedBy: ByFloor, Reason: reason, Err: ferr}
		if c.i.e.tracer != nil {
			c.traceStep(TraceStep{Step: TraceFloor, Verdict: "refuse", Reason: reason, RefusedBy: ByFloor, Marks: append([]string{}, c.marks...)})
		}
		return out
	} else if c.i.e.tracer != nil {
		c.traceStep(TraceStep{Step: TraceFloor, Verdict: "pass", Marks: append([]string{}, c.marks...)})
	}
	for k, h := range c.te.hooks {
		if h.pre == nil {
			continue
		}
		c.hostAt = time.Time{} // a script runs before the core
		r := h.reg
		fr := c.frame(r, &h.decl)
		owned, err := r.lock(fr)
		if err == nil {
			rec := c.callRecord(r, args)
			err = r.run(fr, luabind.Callback, h.pre, 0, rec)
			r.calls.Put(rec)
			r.unlock(owned)
		}
		if c.i.e.tracer != nil {
			c.traceHook(TracePre, h, k, err, "")
		}
		if err != nil {
			return failedOut(r, err)
		}
	}
	return c.fromCore(args)
}

// fromCore is the chain from its core step on: the core (R4.6), result
// guards, :post (R4.7). ToolEnd enters the chain here (resume).
func (c *chain) fromCore(args any) Outcome {
	out := c.core(args)
	if c.i.e.tracer != nil {
		c.traceOut(TraceCore, out)
	}
	if out.Status == StatusOK && len(c.te.results) > 0 {
		out = c.results(args, out)
		if c.i.e.tracer != nil {
			c.traceOut(TraceResults, out)
		}
	}
	if out.Status != StatusOK || len(c.te.hooks) == 0 { // no :post to run: out as it is, not copied through post
		return out
	}
	return c.post(args, out)
}

// post runs the :post hooks of a call whose core succeeded (R4.7).
func (c *chain) post(args any, out Outcome) Outcome {
	for k, h := range c.te.hooks {
		if h.post == nil {
			continue
		}
		r := h.reg
		fr := c.frame(r, &h.decl)
		owned, err := r.lock(fr)
		if err != nil {
			return failedOut(r, err)
		}
		rec, orec := c.callRecord(r, args), outcomeRecord(r, out)
		err = r.run(fr, luabind.Callback, h.post, 1, rec, orec)
		r.calls.Put(rec)
		r.outs.Put(orec)
		var d lua.LValue = lua.LNil
		if err == nil {
			d = r.st.L.Get(-1)
			r.st.L.Pop(1)
		}
		r.unlock(owned)
		if c.i.e.tracer != nil {
			s, _ := d.(lua.LString)
			c.traceHook(TracePost, h, k, err, string(s))
		}
		if err != nil {
			return failedOut(r, err)
		}
		if s, ok := d.(lua.LString); ok {
			out.Diagnostics = append(out.Diagnostics, string(s))
		}
	}
	return out
}

// resume is the chain entered at its core step, for a call whose guards,
// floor and :pre ran before (ToolBegin): fromCore, then :post-fail when
// the call did not succeed (R4.8).
func (c *chain) resume(args any) Outcome {
	out := c.fromCore(args)
	if out.Status != StatusOK {
		out = c.postFail(out)
	}
	return out
}

// core runs the tool's core exactly once (R4.6): the plugged one, or the
// tool's own.
func (c *chain) core(args any) Outcome {
	if c.plug != nil {
		return c.plug.runCore(c, args)
	}
	te := c.te
	if te.host != nil {
		var in *lazyDeadline
		if c.scope != nil && !c.scope.used {
			c.scope.used = true
			in = &c.scope.core
		}
		at := c.hostAt
		c.hostAt = time.Time{}
		res, err := c.i.hostCore(c.ctx, te, c.callID, args, append([]string(nil), c.marks...), in, at, c)
		return hostOutcome(res, err, "")
	}
	d := te.def
	if err := d.input.check("input", args); err != nil {
		return Outcome{Status: StatusRefused, RefusedBy: BySchema, Reason: err.Error(), Err: &Error{Code: CodeSchema, Message: err.Error(), Err: err}}
	}
	r := d.reg
	fr := c.frame(r, &d.decl)
	st := r.st
	owned, err := r.lock(fr)
	if err != nil {
		return failedOut(r, err)
	}
	var res any
	if err = r.run(fr, luabind.Callback, d.fn, 1, fr.ctxTable(), st.ToLua(args)); err == nil {
		v := st.L.Get(-1)
		st.L.Pop(1)
		res, err = st.FromLua(v)
		if err != nil {
			err = fmt.Errorf("tool %s (%s) returned %v", d.path, d.pos, err)
		}
	}
	r.unlock(owned)
	if err != nil {
		return failedOut(r, err)
	}
	if err := d.output.check("output", res); err != nil {
		return Outcome{Status: StatusRefused, RefusedBy: BySchema, Reason: err.Error(), Err: &Error{Code: CodeSchema, Message: err.Error(), Err: err}}
	}
	return Outcome{Status: StatusOK, Result: res}
}

// postFail runs the :post-fail hooks of a failed chain (R4.8).
func (c *chain) postFail(out Outcome) Outcome {
	// hidden: the floor never saw the call, whether a guard refused it or
	// threw (R4.8)
	hidden := !c.floorSaw
	if out.Status == StatusRefused && (out.RefusedBy == ByCeiling || out.RefusedBy == ByReentry) {
		return out
	}
	out.Hidden = hidden
	for k, h := range c.te.hooks {
		if h.postFail == nil {
			continue
		}
		r := h.reg
		st := r.st
		fr := c.frame(r, &h.decl)
		owned, err := r.lock(fr)
		if err != nil {
			out.Diagnostics = append(out.Diagnostics, "post-fail hook failed: "+errText(err))
			continue
		}
		var call *lua.LTable
		if hidden {
			call = c.callRecord(r, nil)
		} else {
			call = c.callRecord(r, c.floorArgs)
		}
		err = r.run(fr, luabind.Callback, h.postFail, 0, call, failureTable(st, out, hidden))
		r.calls.Put(call)
		r.unlock(owned)
		if c.i.e.tracer != nil {
			c.traceHook(TracePostFail, h, k, err, "")
		}
		if err != nil {
			out.Diagnostics = append(out.Diagnostics, "post-fail hook failed: "+errText(err))
		}
	}
	return out
}

// failureTable is the failure record a :post-fail handler gets (docs/forms.md):
// reason, by (the refused_by words; "error" when a step threw), code (the
// failure's code, as data), hidden, error; fields that do not apply are
// absent.
func failureTable(st *luabind.State, out Outcome, hidden bool) *lua.LTable {
	f := st.L.CreateTable(0, 5)
	// keys in sorted order, so pairs() visits them identically everywhere
	by := out.RefusedBy
	if out.Status == StatusFailed {
		by = "error"
	}
	f.RawSetString("by", lua.LString(by))
	if c := outcomeCode(out); c != "" {
		f.RawSetString("code", lua.LString(string(c)))
	}
	if out.Error != "" {
		f.RawSetString("error", lua.LString(out.Error))
	}
	f.RawSetString("hidden", lua.LBool(hidden))
	if out.Reason != "" {
		f.RawSetString("reason", lua.LString(out.Reason))
	}
	return f
}

// outcomeTable converts an outcome for script; absent fields stay nil.
func outcomeTable(st *luabind.State, o Outcome) *lua.LTable {
	L := st.L
	t := L.CreateTable(0, 5)
	// keys in sorted order, so pairs() visits them identically everywhere
	if c := outcomeCode(o); c != "" {
		t.RawSetString("code", lua.LString(string(c)))
	}
	if o.Status == StatusOK {
		d := st.NewList()
		for _, s := range o.Diagnostics {
			d.Append(lua.LString(s))
		}
		t.RawSetString("diagnostics", d)
	}
	if o.Error != "" {
		t.RawSetString("error", lua.LString(o.Error))
	}
	if o.Reason != "" {
		t.RawSetString("reason", lua.LString(o.Reason))
	}
	if o.RefusedBy != "" {
		t.RawSetString("refused_by", lua.LString(o.RefusedBy))
	}
	if o.Result != nil {
		t.RawSetString("result", st.ToLua(o.Result))
	}
	t.RawSetString("status", statusLV(o.Status))
	return t
}

// toolGuardOf returns the chain of the running tool guard.
func toolGuardOf(s *luabind.State, name string) *chain {
	fr := regOf(s).top()
	if fr != nil && fr.guard != nil {
		if c, ok := fr.guard.chain.(*chain); ok {
			return c
		}
	}
	s.L.RaiseError("%s is only for tool guards", name)
	return nil
}

func fMark(s *luabind.State) int {
	c := toolGuardOf(s, "mark")
	label := s.CheckString("mark", 2)
	for _, m := range c.marks {
		if m == label {
			return 0
		}
	}
	c.marks = append(c.marks, label)
	syncMarks(s, c)
	return 0
}

func fUnmark(s *luabind.State) int {
	c := toolGuardOf(s, "unmark")
	label := s.CheckString("unmark", 2)
	for k, m := range c.marks {
		if m == label {
			c.marks = append(c.marks[:k], c.marks[k+1:]...)
			break
		}
	}
	syncMarks(s, c)
	return 0
}

// syncMarks refreshes call.marks of the call table the guard was given.
func syncMarks(s *luabind.State, c *chain) {
	if t, ok := s.L.Get(1).(*lua.LTable); ok {
		marks := s.NewListCap(len(c.marks))
		for _, m := range c.marks {
			marks.Append(s.L.StringValue(m))
		}
		t.RawSetString("marks", marks)
	}
}

// fCallTool is call/tool PATH ARGS from script: never throws (docs/forms.md).
func fCallTool(s *luabind.State) int {
	r := regOf(s)
	fr := r.top()
	path := s.CheckString("call/tool", 1)
	args, err := s.FromLua(s.L.Get(2))
	var out Outcome
	if err != nil {
		out = Outcome{Status: StatusFailed, Error: "call/tool: the argument is not plain data: " + err.Error()}
	} else {
		out = fr.inst.toolFrom(fr, path, args)
	}
	s.L.Push(outcomeTable(s, out))
	return 1
}

// toolFrom runs a nested call from a callback: it carries the caller's
// lineage (R4.9) and never takes the fast path's shortcut past re-entry.
func (i *Instance) toolFrom(fr *frame, path string, args any) Outcome {
	set := fr.reg.set
	if set.inst != i {
		set = i.cur.Load()
	}
	if set == nil {
		return Outcome{Status: StatusFailed, Error: "instance " + i.id + " is not running"}
	}
	te, refusal := i.lookupTool(set, path)
	if te == nil {
		return refusal
	}
	return i.runChain(fr.ctx, set, te, ToolCall{Path: path, Args: args}, fr, nil)
}

// errText is the text of a script failure.
func errText(err error) string {
	return err.Error()
}

// Boxed values shared by every state: a Lua string or number stored in an
// interface costs an allocation, so the chain's constant ones are boxed once.
var (
	lvOK      lua.LValue = lua.LString(StatusOK)
	lvRefused lua.LValue = lua.LString(StatusRefused)
	lvFailed  lua.LValue = lua.LString(StatusFailed)
	lvSmall              = func() (out [16]lua.LValue) {
		for k := range out {
			out[k] = lua.LNumber(k)
		}
		return
	}()
)

func statusLV(s Status) lua.LValue {
	switch s {
	case StatusOK:
		return lvOK
	case StatusRefused:
		return lvRefused
	case StatusFailed:
		return lvFailed
	}
	return lua.LString(string(s))
}

func number(n int) lua.LValue {
	if n >= 0 && n < len(lvSmall) {
		return lvSmall[n]
	}
	return lua.LNumber(n)
}
