package engine

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/session"
)

// Tracing a tool chain (what `attune explain` prints) and the lines
// behaviors print or log (what `attune test -v`, the hook's log file,
// serve's notifications and the inspector show).
//
// Both are off unless the host sets Options.Trace or Options.Print: the
// chain then tests one nil field per step and builds nothing, and the fast
// path stays without an allocation.

// Steps of a traced tool chain (TraceStep.Step).
const (
	TraceMatched  = "matched"   // the registrations the tool path matched, in pin order
	TraceCeiling  = "ceiling"   // the bot's ceiling refused the tool's effect
	TraceGuard    = "guard"     // a guard returned (Verdict: invoke, refuse, retry, error)
	TraceFloor    = "floor"     // the floor's verdict
	TracePre      = "pre"       // a hook's :pre ran
	TraceCore     = "core"      // the core ran (or was left to the agent: pending)
	TraceResults  = "results"   // the result guards judged the core's result
	TracePost     = "post"      // a hook's :post ran
	TracePostFail = "post-fail" // a hook's :post-fail ran
	TraceOutcome  = "outcome"   // the call's outcome (a boundary's: Path is the boundary)

	// Steps of a traced boundary (Path is "turn/start", "round/end"...).
	TraceBoundary = "boundary" // the boundary's guards and hooks, in pin order (Registrations)
	TraceHook     = "hook"     // a boundary hook ran (Verdict ok or error; Notes it emitted)
	TracePlaced   = "placed"   // the notes a round start placed into the round's model call
)

// TraceStep is one step of a tool chain, as Options.Trace hears it.
// Fields that do not apply are zero.
type TraceStep struct {
	Instance string
	CallID   string
	Path     string
	// Depth is 0 for a call from the host, 1 for a call/tool made by one of
	// its callbacks, and so on.
	Depth int
	Step  string
	// Registrations are what the path matched (Step matched).
	Registrations []Registration
	// Registration is the guard or hook of this step; Index its place
	// among the path's guards (guards) or hooks (hooks).
	Registration Registration
	Pattern      string
	Index        int
	// Verdict: a guard's invoke, refuse, retry or error; the floor's pass
	// or refuse; the core's and the outcome's status.
	Verdict     string
	Reason      string
	RefusedBy   string
	Error       string
	Marks       []string
	Diagnostics []string
	// Attempt counts the chain's attempts (a guard's retry starts another).
	Attempt int
	// Notes are the notes a boundary hook emitted (hook), or a round
	// start placed (placed).
	Notes []Note
	// Continue and HostContinue are a round end's decision (outcome of
	// "round/end"): whether the loop goes on, and whether the host asked.
	Continue, HostContinue bool
}

// Tracer hears the steps of every tool chain of an engine. It is called on
// the chain's goroutine: it must return quickly and not call into the
// engine.
type Tracer func(TraceStep)

// Printed is one line a behavior printed (Level "print") or logged with
// log (debug, info, warn, error).
type Printed struct {
	Instance string
	Session  string
	Program  string
	Level    string
	Text     string
	// CallID is the call or boundary whose callback wrote it ("" outside one).
	CallID string
	Turn   int
	Round  int
	// Cut is set when Text was cut to MaxTraceText bytes.
	Cut bool
}

// Bounds on what behaviors print and log (docs/limits.md).
const (
	// MaxTraceText is the most of one line kept, in bytes.
	MaxTraceText = 2048
	// MaxTracesPerCallback is how many lines one callback may write; the
	// rest are dropped, and one line says how many.
	MaxTracesPerCallback = 64
	// MaxTracesPerTurn is how many lines one turn journals; the rest still
	// reach the host's Print, not the journal.
	MaxTracesPerTurn = 1000
)

// LogLevels are the levels of log, in order.
var logLevels = [...]string{"debug", "info", "warn", "error"}

func slogLevel(level string) slog.Level {
	switch level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// fLog is log(LEVEL, TEXT) from script (docs/forms.md).
func fLog(s *luabind.State) int {
	level := s.CheckString("log", 1)
	ok := false
	for _, l := range logLevels {
		ok = ok || l == level
	}
	if !ok {
		s.L.RaiseError("log: level %q is not one of debug, info, warn, error", level)
	}
	text := s.CheckString("log", 2)
	regOf(s).trace(level, text)
	return 0
}

// trace routes one printed or logged line: to the engine's logger, to
// Options.Print, and into the journal of the open turn (bounded).
func (r *registry) trace(level, text string) {
	e := r.set.engine
	fr := r.top()
	if fr != nil {
		fr.prints++
		if fr.prints > MaxTracesPerCallback {
			if fr.prints == MaxTracesPerCallback+1 {
				text, level = "(further lines of this callback dropped: at most 64 per callback)", "warn"
			} else {
				return
			}
		}
	}
	cut := false
	if len(text) > MaxTraceText {
		n := MaxTraceText
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text, cut = text[:n], true
	}
	inst := r.set.inst
	msg := "print"
	if level != "print" {
		msg = "log"
	}
	e.log.Log(context.Background(), slogLevel(level), msg, "program", r.program, "instance", r.set.instance, "text", text)
	var ss *sessionState
	if inst != nil {
		ss = inst.sess.Load()
	}
	p := Printed{Instance: r.set.instance, Program: r.program, Level: level, Text: text, Cut: cut}
	if fr != nil {
		p.CallID = fr.callID
	}
	if inst != nil {
		p.Session = inst.rec.Session
	}
	if ss != nil {
		ss.mu.Lock()
		p.Turn, p.Round = ss.turn, ss.round
		journal := ss.journaling.Load() && ss.rp == nil && ss.traces < MaxTracesPerTurn
		if journal {
			ss.traces++
		}
		ss.mu.Unlock()
		if journal {
			ss.journalBehind(session.Entry{Type: session.Trace, Kind: level, Name: r.program, CallID: p.CallID, Key: text, Turn: p.Turn, Round: p.Round})
		}
	}
	if e.onPrint != nil && (ss == nil || ss.rp == nil) {
		e.onPrint(p)
	}
}

func (c *chain) depth() int {
	if c.parent == nil {
		return 0
	}
	return c.parent.depth + 1
}

func (c *chain) traceStep(st TraceStep) {
	st.Instance, st.CallID, st.Path, st.Depth, st.Attempt = c.i.id, c.callID, c.te.path, c.depth(), c.attempt
	c.i.e.tracer(st)
}

func (c *chain) traceMatched() {
	regs := make([]Registration, 0, len(c.te.guards)+len(c.te.hooks))
	for _, g := range c.te.guards {
		rg := g.decl.registration()
		rg.Form = "guard/tool"
		rg.Pattern = g.pattern
		regs = append(regs, rg)
	}
	for _, h := range c.te.hooks {
		rg := h.decl.registration()
		rg.Form = "hook/tool"
		rg.Pattern = h.pattern
		regs = append(regs, rg)
	}
	if c.te.def != nil {
		rg := c.te.def.decl.registration()
		rg.Form = "define/tool"
		rg.Pattern = c.te.def.path
		regs = append(regs, rg)
	}
	c.traceStep(TraceStep{Step: TraceMatched, Registrations: regs})
}

// traceGuard tells what guard k made of the call, out being what its run
// returned.
func (c *chain) traceGuard(gr *guardRun, out Outcome) {
	st := TraceStep{Step: TraceGuard, Index: gr.k, Pattern: gr.g.pattern, Marks: append([]string{}, c.marks...)}
	st.Registration = gr.g.decl.registration()
	st.Registration.Form, st.Registration.Pattern = "guard/tool", gr.g.pattern
	st.Verdict, st.Reason, st.Error = c.guardVerdict(gr, out)
	if st.Verdict == "refuse" {
		st.RefusedBy = out.RefusedBy
	}
	c.traceStep(st)
}

// guardVerdict is what guard gr made of the call, out being what its run
// returned: invoke (the rest of the chain ran and its outcome stands),
// refuse, retry or error, with the reason or error.
func (c *chain) guardVerdict(gr *guardRun, out Outcome) (verdict, reason, errText string) {
	switch {
	case c.retry && !gr.invoked:
		return "retry", c.retryWhy, ""
	case gr.invoked && out.Status == gr.out.Status && out.Reason == gr.out.Reason && out.Error == gr.out.Error:
		return "invoke", "", ""
	case out.Status == StatusFailed:
		return "error", "", out.Error
	case out.Status == StatusRefused:
		return "refuse", out.Reason, ""
	}
	return "invoke", "", ""
}

// Bounds on the guards' verdicts a call's journal entry holds.
const (
	// MaxJournaledGuards is how many guards' verdicts one call journals
	// (over all its attempts); the rest are left out.
	MaxJournaledGuards = 16
	// MaxJournaledVerdictText is the most of a verdict's reason or error
	// journaled, in bytes; MaxJournaledMarks how many of its marks.
	MaxJournaledVerdictText = 512
	MaxJournaledMarks       = 16
)

// noteVerdict keeps guard gr's verdict for the call's journal entry
// (bounded), out being what its run returned.
func (c *chain) noteVerdict(gr *guardRun, out Outcome) {
	if !c.keepVerdicts || len(c.verdicts) >= MaxJournaledGuards {
		return
	}
	v := session.GuardVerdict{At: gr.g.pos, Pattern: gr.g.pattern}
	v.Verdict, v.Reason, v.Error = c.guardVerdict(gr, out)
	v.Reason, v.Error = cutText(v.Reason, MaxJournaledVerdictText), cutText(v.Error, MaxJournaledVerdictText)
	if len(c.marks) > 0 {
		v.Marks = append([]string(nil), c.marks[:min(len(c.marks), MaxJournaledMarks)]...)
	}
	if c.attempt > 1 {
		v.Attempt = c.attempt
	}
	c.verdicts = append(c.verdicts, v)
}

// journaledVerdicts is a copy of the verdicts a chain kept, in pin order
// within each attempt (a guard returns after the guards it invoked, so
// they were kept innermost first).
func (c *chain) journaledVerdicts() *verdictList {
	if len(c.verdicts) == 0 {
		return nil
	}
	l := verdictLists.Get().(*verdictList)
	l.vs = append(l.vs[:0], c.verdicts...)
	out := l.vs
	for from := 0; from < len(out); {
		to := from + 1
		for to < len(out) && out[to].Attempt == out[from].Attempt {
			to++
		}
		slices.Reverse(out[from:to])
		from = to
	}
	clear(c.verdicts) // the pooled chain keeps no strings of this call
	c.verdicts = c.verdicts[:0]
	return l
}

// verdictList is a call's journaled verdicts (Outcome.guards).
type verdictList struct{ vs []session.GuardVerdict }

// verdictLists are recycled: a call from the host gives its list back
// once the journal has encoded its entry (tool), so a guarded call inside
// a turn allocates none; a list not given back is collected.
var verdictLists = sync.Pool{New: func() any { return new(verdictList) }}

// list is l's verdicts (nil for none).
func (l *verdictList) list() []session.GuardVerdict {
	if l == nil {
		return nil
	}
	return l.vs
}

// release gives l back to verdictLists, holding no strings of its call,
// and returns nil, for the outcome's field; nothing may use l after.
func (l *verdictList) release() *verdictList {
	if l != nil && cap(l.vs) <= MaxJournaledGuards {
		clear(l.vs)
		l.vs = l.vs[:0]
		verdictLists.Put(l)
	}
	return nil
}

// cutText is s cut to at most n bytes, at a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (c *chain) traceHook(step string, h *hookDecl, k int, err error, diag string) {
	st := TraceStep{Step: step, Index: k, Pattern: h.pattern, Verdict: string(StatusOK)}
	st.Registration = h.decl.registration()
	st.Registration.Form, st.Registration.Pattern = "hook/tool", h.pattern
	if err != nil {
		st.Verdict, st.Error = "error", errText(err)
	}
	if diag != "" {
		st.Diagnostics = []string{diag}
	}
	c.traceStep(st)
}

func (c *chain) traceOut(step string, out Outcome) {
	c.traceStep(TraceStep{Step: step, Verdict: string(out.Status), Reason: out.Reason, RefusedBy: out.RefusedBy, Error: out.Error,
		Diagnostics: out.Diagnostics, Marks: append([]string{}, c.marks...)})
}

// traceCeiling tells of a call the ceiling refused before any chain ran.
func (i *Instance) traceCeiling(path string, out Outcome) {
	if i.e.tracer == nil {
		return
	}
	i.e.tracer(TraceStep{Instance: i.id, Path: path, Step: TraceCeiling, Verdict: string(out.Status), Reason: out.Reason, RefusedBy: out.RefusedBy, Error: out.Error})
}

// traceBoundary tells of the registrations a boundary phase runs: its
// guards (at a start) and its hooks, in pin order.
func (i *Instance) traceBoundary(set *regSet, kind, phase, callID string) {
	var regs []Registration
	if phase == "start" {
		for _, g := range set.guards[kind] {
			rg := g.decl.registration()
			rg.Form = "guard/" + kind
			regs = append(regs, rg)
		}
	}
	for _, h := range set.hooks[kind+"/"+phase] {
		rg := h.decl.registration()
		rg.Form, rg.Pattern = "hook/"+kind, phase
		regs = append(regs, rg)
	}
	i.e.tracer(TraceStep{Instance: i.id, CallID: callID, Path: kind + "/" + phase, Step: TraceBoundary, Registrations: regs})
}

// traceBoundaryGuard tells what boundary guard k made of the boundary,
// out being what its run returned.
func (b *bchain) traceGuard(gr *guardRun, out Outcome) {
	st := TraceStep{Instance: b.i.id, CallID: b.callID, Path: b.kind + "/start", Step: TraceGuard, Index: gr.k}
	st.Registration = gr.g.decl.registration()
	st.Registration.Form = "guard/" + b.kind
	switch {
	case gr.invoked && out.Status == gr.out.Status && out.Reason == gr.out.Reason && out.Error == gr.out.Error:
		st.Verdict = "invoke"
	case out.Status == StatusFailed:
		st.Verdict, st.Error = "error", out.Error
	case out.Status == StatusRefused:
		st.Verdict, st.Reason, st.RefusedBy = "refuse", out.Reason, out.RefusedBy
	default:
		st.Verdict = "invoke"
	}
	b.i.e.tracer(st)
}

// traceHookRun tells what boundary hook h did: the notes it emitted, or
// the error it threw.
func (i *Instance) traceHookRun(kind, phase, callID string, k int, h *hookDecl, notes []Note, err error) {
	st := TraceStep{Instance: i.id, CallID: callID, Path: kind + "/" + phase, Step: TraceHook, Index: k, Verdict: string(StatusOK), Notes: notes}
	st.Registration = h.decl.registration()
	st.Registration.Form, st.Registration.Pattern = "hook/"+kind, phase
	if err != nil {
		st.Verdict, st.Error = "error", errText(err)
	}
	i.e.tracer(st)
}

// traceBoundaryOut tells a boundary phase's outcome.
func (i *Instance) traceBoundaryOut(kind, phase, callID string, res BoundaryResult, hostContinue bool) {
	if i.e.tracer == nil {
		return
	}
	if kind == "round" && phase == "start" && res.Status == StatusOK && i.sess.Load().rp == nil { // a replay places nothing
		i.e.tracer(TraceStep{Instance: i.id, CallID: callID, Path: "round/start", Step: TracePlaced, Notes: res.Notes})
	}
	i.e.tracer(TraceStep{Instance: i.id, CallID: callID, Path: kind + "/" + phase, Step: TraceOutcome, Verdict: string(res.Status),
		Reason: res.Reason, RefusedBy: res.RefusedBy, Error: res.Error, Continue: res.Continue, HostContinue: hostContinue})
}
