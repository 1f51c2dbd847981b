package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/pin"
)

// ScratchPack is the name of the pack a scenario's [programs] are written
// into (it shows in pins and in shadowing warnings).
const ScratchPack = "scenario"

// Result is the outcome of one scenario run.
type Result struct {
	Name     string
	File     string
	Passed   bool
	Duration time.Duration
	// Steps is how many steps ran (the failing one included).
	Steps int
	// Failure is the full report of a failed scenario, one problem a line:
	// "FILE:LINE: step N (OP): KEY: want W, got G". Empty when it passed.
	Failure string
	// Expected is the failure a fails_with scenario produced as it should.
	Expected string
	// Fail is the step that failed, with what it expected and observed;
	// nil when the scenario passed or failed before its first step.
	Fail *StepFailure
	// Trace is every step that ran with its observed outcome, when
	// RunOptions.Trace asked for it.
	Trace []StepTrace
}

// StepFailure is the step a scenario failed at.
type StepFailure struct {
	Index int    // 1-based
	Op    string // the step's op
	File  string // the scenario file
	Line  int    // the line of its [[step]] header
	// Mismatches are the expectations that did not hold, each with the
	// line of its expect key.
	Mismatches []Mismatch
}

// StepTrace is one step that ran and what it observed.
type StepTrace struct {
	Index    int
	Op       string
	Line     int
	Label    string // the op and its subject: "tool fs/read", "method tasks.add"
	Observed string // the outcome, compactly: "ok, result = 3"
	Got      *Got
	// Printed are the lines behaviors printed or logged during the step
	// ("[print] tasks: text", "[warn] goal: text").
	Printed []string
}

// RunOptions tune one run.
type RunOptions struct {
	// Trace keeps every step's observed outcome in Result.Trace.
	Trace bool
	// Cover, when set, counts which registrations of the scenario's
	// programs ran (behavior coverage); one Coverage may serve many runs.
	Cover *Coverage
}

// Run runs a scenario with its own engine, store, scratch pack and fake
// host, and checks every step's expectations; it stops at the first step
// that fails.
func Run(ctx context.Context, sc *Scenario) Result {
	return RunWith(ctx, sc, RunOptions{})
}

// RunWith is Run with options.
func RunWith(ctx context.Context, sc *Scenario, o RunOptions) Result {
	start := time.Now()
	r := &runner{sc: sc, host: newFakeHost(sc), started: map[string]bool{}, opts: o}
	failure := r.run(ctx)
	res := Result{Name: sc.Name, File: sc.File, Steps: r.steps, Duration: time.Since(start), Trace: r.trace}
	if len(sc.FailsWith) == 0 {
		res.Fail = r.fail
	}
	if len(sc.FailsWith) == 0 {
		res.Passed, res.Failure = failure == "", failure
		return res
	}
	if failure == "" {
		res.Failure = fmt.Sprintf("%s: the scenario passed, but fails_with says it must fail with %s", sc.File, Format(sc.FailsWith))
		return res
	}
	for _, want := range sc.FailsWith {
		if !strings.Contains(failure, want) {
			res.Failure = fmt.Sprintf("%s: the scenario failed, but not with %q (fails_with); its failure:\n%s", sc.File, want, failure)
			return res
		}
	}
	res.Passed, res.Expected = true, failure
	return res
}

// runner is the state of one run.
type runner struct {
	sc       *Scenario
	host     *fakeHost
	eng      *engine.Engine
	dir      string // the scratch pack
	started  map[string]bool
	order    []string // instance ids in the order they were first started
	lastNote string
	steps    int
	opts     RunOptions
	trace    []StepTrace
	fail     *StepFailure

	pmu     sync.Mutex
	printed []string // lines printed during the current step (opts.Trace)
}

// print keeps a line a behavior printed, for the step's trace.
func (r *runner) print(p engine.Printed) {
	r.pmu.Lock()
	r.printed = append(r.printed, "["+p.Level+"] "+p.Program+": "+p.Text)
	r.pmu.Unlock()
}

func (r *runner) run(ctx context.Context) string {
	sc := r.sc
	if sc.Config == nil {
		return sc.File + ": no configuration"
	}
	dir, err := os.MkdirTemp("", "attune-scenario-")
	if err != nil {
		return sc.File + ": scratch pack: " + err.Error()
	}
	defer os.RemoveAll(dir)
	r.dir = dir
	for _, p := range sc.Programs {
		if err := r.write(p.File, p.Source); err != nil {
			return sc.File + ": scratch pack: " + err.Error()
		}
	}
	var obs engine.Observer
	var cov *observer
	if r.opts.Cover != nil {
		cov = r.opts.Cover.observer(sc)
		obs = cov
	}
	var print func(engine.Printed)
	if r.opts.Trace {
		print = r.print
	}
	eng, err := engine.New(ctx, engine.Options{
		Config:     sc.Config,
		PacksFirst: []pin.Pack{{Name: ScratchPack, FS: os.DirFS(dir)}},
		Read:       r.host.read,
		Floor:      r.host.floor,
		Observer:   obs,
		Print:      print,
	})
	if err != nil {
		for i, dir := range sc.Config.Engine.Packs { // the usual cause of a program no pack holds
			if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
				err = fmt.Errorf("%w; %w", err, sc.Config.Errorf(fmt.Sprintf("engine.packs[%d]", i+1), "pack folder %s does not exist", dir))
			}
		}
		return sc.File + ": engine: " + err.Error()
	}
	defer eng.Close()
	r.eng = eng
	if cov != nil {
		defer r.coverCommands(ctx, cov) // before the engine closes its store
	}
	for _, o := range sc.Owners {
		if err := eng.SeedOwner(ctx, o.Owner, o.Entries); err != nil {
			return sc.File + ": owners." + o.Owner + ": " + err.Error()
		}
	}
	for _, t := range sc.Host.Tools {
		if err := eng.RegisterTool(r.host.tool(t)); err != nil {
			return sc.File + ": host tool " + t.Path + ": " + err.Error()
		}
	}
	for _, s := range sc.Steps {
		if err := ctx.Err(); err != nil {
			return fmt.Sprintf("%s: step %d (%s): %v", r.where(s, ""), s.Index, s.Op, err)
		}
		r.steps++
		r.host.beginStep()
		g := r.safeStep(ctx, s)
		r.host.observe(g)
		if len(g.Notes) > 0 {
			r.lastNote = g.Notes[len(g.Notes)-1].ID
		}
		if r.opts.Trace {
			r.pmu.Lock()
			printed := r.printed
			r.printed = nil
			r.pmu.Unlock()
			r.trace = append(r.trace, StepTrace{Index: s.Index, Op: s.Op, Line: s.Line, Label: stepLabel(s), Observed: Observed(s, g), Got: g, Printed: printed})
		}
		if ms := r.check(s, g); len(ms) > 0 {
			r.fail = &StepFailure{Index: s.Index, Op: s.Op, File: sc.File, Line: s.Line}
			var lines []string
			for _, m := range ms {
				if m.Line = s.ExpectLines[m.Key]; m.Line == 0 {
					m.Line = s.Line
				}
				r.fail.Mismatches = append(r.fail.Mismatches, m)
				lines = append(lines, fmt.Sprintf("%s: step %d (%s): %s", r.where(s, m.Key), s.Index, s.Op, m))
				for _, d := range m.Diff {
					lines = append(lines, "    "+d)
				}
			}
			return strings.Join(lines, "\n")
		}
	}
	return ""
}

// coverCommands counts the command files the instances pinned.
func (r *runner) coverCommands(ctx context.Context, o *observer) {
	if r.eng == nil {
		return
	}
	for _, id := range r.order {
		if p, err := pin.Load(ctx, r.eng.Store(), id); err == nil {
			r.opts.Cover.pinned(ctx, o, r.eng.Store(), p)
		}
	}
}

// where is FILE:LINE of a step's expectation key (of the step when the
// key is not written).
func (r *runner) where(s *Step, key string) string {
	if ln := s.ExpectLines[key]; ln > 0 {
		return fmt.Sprintf("%s:%d", r.sc.File, ln)
	}
	if s.Line > 0 {
		return fmt.Sprintf("%s:%d", r.sc.File, s.Line)
	}
	return r.sc.File
}

// check returns the expectations of s that g does not meet; a step whose
// status is not ok needs expect.status to say it.
func (r *runner) check(s *Step, g *Got) []Mismatch {
	e := s.Expect
	if e == nil {
		e = &Expect{}
	}
	var ms []Mismatch
	if e.Status == "" && g.Status != "ok" {
		ms = append(ms, Mismatch{Key: "status", Want: "ok", Got: statusText(g)})
	}
	return append(ms, e.Check(g)...)
}

// write puts a file into the scratch pack.
func (r *runner) write(name, src string) error {
	p := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(src), 0o644)
}

func failed(format string, args ...any) *Got {
	return &Got{Status: "failed", Error: fmt.Sprintf(format, args...)}
}

func failedErr(err error) *Got { return &Got{Status: "failed", Error: err.Error()} }

// live returns a running instance, or the failed step of one that is not.
func (r *runner) live(id string) (*engine.Instance, *Got) {
	inst, ok := r.eng.Instance(id)
	if !ok {
		return nil, failed("instance %s is not running", id)
	}
	return inst, nil
}

func (r *runner) track(id string) {
	if !r.started[id] {
		r.started[id] = true
		r.order = append(r.order, id)
	}
}

// safeStep runs one step; an engine panic fails the step (and the
// scenario) instead of the whole run.
func (r *runner) safeStep(ctx context.Context, s *Step) (g *Got) {
	defer func() {
		if p := recover(); p != nil {
			stack := string(debug.Stack())
			if k := strings.Index(stack, "\npanic("); k >= 0 {
				stack = stack[k+1:] // from the panicking frame on
			}
			if len(stack) > 2000 {
				stack = stack[:2000] + "..."
			}
			g = failed("engine panic: %v\n%s", p, stack)
		}
	}()
	return r.step(ctx, s)
}

// step runs one step.
func (r *runner) step(ctx context.Context, s *Step) *Got {
	switch s.Op {
	case "start":
		inst, err := r.eng.Start(ctx, engine.StartOptions{ID: s.Instance, Bot: s.Bot, Kind: s.Kind, Session: s.Session, Parent: s.Parent})
		r.track(s.Instance)
		if err != nil {
			return failedErr(err)
		}
		return &Got{Status: "ok", Result: instanceInfo(inst)}
	case "restart":
		inst, err := r.eng.Restart(ctx, s.Instance)
		r.track(s.Instance)
		if err != nil {
			return failedErr(err)
		}
		return &Got{Status: "ok", Result: instanceInfo(inst)}
	case "edit":
		if err := r.write(s.Program, s.Source); err != nil {
			return failedErr(err)
		}
		return &Got{Status: "ok"}
	case "forget":
		return r.forget(ctx, s.Program)
	case "set-read":
		r.host.setRead(s.Key, luabind.CopyPlain(s.Value))
		return &Got{Status: "ok"}
	case "spawn":
		parent, g := r.live(s.Instance)
		if g != nil {
			return g
		}
		child, err := parent.Spawn(ctx, engine.SpawnOptions{ID: s.Child, Bot: s.Bot, Role: s.Kind})
		r.track(s.Child)
		if err != nil {
			return failedErr(err)
		}
		return &Got{Status: "ok", Result: instanceInfo(child)}
	}
	inst, g := r.live(s.Instance)
	if g != nil {
		return g
	}
	if s.Harness != nil { // the step came from a harness (a recorded hook session)
		ctx = engine.WithHarnessData(ctx, luabind.CopyPlain(s.Harness))
	}
	switch s.Op {
	case "attune":
		if err := inst.Attune(ctx); err != nil {
			return failedErr(err)
		}
		return &Got{Status: "ok"}
	case "turn-begin":
		return boundary(inst.BeginTurn(ctx, engine.TurnInput{Input: luabind.CopyPlain(s.Input), ContextFresh: s.ContextFresh}))
	case "round-begin":
		return boundary(inst.BeginRound(ctx))
	case "round-end":
		return boundary(inst.EndRound(ctx, engine.RoundEnd{HostContinue: s.HostContinue, Output: s.Output}))
	case "turn-end":
		res, err := inst.EndTurn(ctx, s.Addenda...)
		g := boundary(res, err)
		if err == nil && res.LoopEnd != nil {
			g.Result = map[string]any{"addenda": stringsAny(res.LoopEnd.Addenda), "notes": notesAny(res.LoopEnd.Notes)}
		}
		return g
	case "tool":
		return outcome(inst.Tool(ctx, engine.ToolCall{Path: s.Path, Args: luabind.CopyPlain(s.Args), CallID: s.CallID}))
	case "turn":
		return r.turn(ctx, inst, s)
	case "method":
		return r.method(ctx, inst, s)
	case "state":
		return r.state(ctx, inst, s.Owner)
	case "reset":
		return r.reset(ctx, inst, s.Owner)
	case "command":
		res := inst.Command(ctx, s.Name, s.Text)
		return &Got{Status: string(res.Status), Error: res.Error, Notes: notesGot(res.Notes)}
	case "consume":
		id := s.Note
		if id == "last" {
			if r.lastNote == "" {
				return failed("consume: no earlier step returned a note")
			}
			id = r.lastNote
		}
		if err := inst.Consume(ctx, id); err != nil {
			return failedErr(err)
		}
		return &Got{Status: "ok", Result: id}
	case "replay":
		res, err := inst.Replay(ctx)
		if err != nil {
			return failedErr(err)
		}
		return replayGot(res, s.Expect)
	case "hydrate":
		if err := inst.Hydrate(ctx); err != nil {
			return failedErr(err)
		}
		return &Got{Status: "ok"}
	case "rollback":
		if err := inst.Rollback(ctx, s.ToTurn); err != nil {
			return failedErr(err)
		}
		return &Got{Status: "ok"}
	}
	return failed("unknown op %s", s.Op)
}

// forget deletes the stored blob of every hash that the scenario's
// instances pinned for a scratch pack file.
func (r *runner) forget(ctx context.Context, file string) *Got {
	st := r.eng.Store()
	deleted := map[string]bool{}
	for _, id := range r.order {
		p, err := pin.Load(ctx, st, id)
		if err != nil {
			continue // never pinned (its start failed before)
		}
		var shas []string
		for _, pr := range p.Programs {
			if pr.Pack == ScratchPack && pr.File == file {
				shas = append(shas, pr.SHA256)
			}
		}
		for _, c := range p.Commands {
			if c.Pack == ScratchPack && c.File == file {
				shas = append(shas, c.SHA256)
			}
		}
		for _, sha := range shas {
			if deleted[sha] {
				continue
			}
			if err := st.DeleteBlob(ctx, sha); err != nil {
				return failedErr(err)
			}
			deleted[sha] = true
		}
	}
	if len(deleted) == 0 {
		return failed("forget: no instance of this scenario pinned %s of the scratch pack", file)
	}
	return &Got{Status: "ok"}
}

// turn runs a whole turn following the continuation decision.
func (r *runner) turn(ctx context.Context, inst *engine.Instance, s *Step) *Got {
	g := &Got{Status: "ok"}
	var tools []any
	var notes []engine.Note
	first := func(status engine.Status, errText, reason string) {
		if g.Status == "ok" && status != "ok" {
			g.Status, g.Error, g.Reason = string(status), errText, reason
			if status == "refused" {
				g.RefusedBy = "guard"
			}
		}
	}
	finish := func() *Got {
		g.Result = map[string]any{"tools": orEmpty(tools), "notes": notesAny(notes), "addenda": []any{}}
		g.Notes = notesGot(notes)
		return g
	}
	res, err := inst.BeginTurn(ctx, engine.TurnInput{Input: luabind.CopyPlain(s.Input), ContextFresh: s.ContextFresh})
	if err != nil {
		first("failed", err.Error(), "")
		return finish()
	}
	first(res.Status, res.Error, res.Reason)
	notes = append(notes, res.Notes...)
	if !inst.Turn().InTurn {
		return finish() // refused: the turn never opened
	}
	for n := 0; n < s.MaxRounds; n++ {
		rb, err := inst.BeginRound(ctx)
		if err != nil {
			first("failed", err.Error(), "")
			break
		}
		first(rb.Status, rb.Error, rb.Reason)
		if !inst.Turn().InRound {
			break // a round guard refused: the round never opened
		}
		g.Rounds++
		var spec Round
		if n < len(s.Rounds) {
			spec = s.Rounds[n]
		}
		for _, tc := range spec.Tools {
			tools = append(tools, inst.Tool(ctx, engine.ToolCall{Path: tc.Path, Args: luabind.CopyPlain(tc.Args)}).Record())
		}
		re, err := inst.EndRound(ctx, engine.RoundEnd{HostContinue: spec.HostContinue, Output: spec.Output})
		if err != nil {
			first("failed", err.Error(), "")
			break
		}
		first(re.Status, re.Error, re.Reason)
		g.Continue = re.Continue
		if !re.Continue {
			break
		}
	}
	te, err := inst.EndTurn(ctx)
	if err != nil {
		first("failed", err.Error(), "")
		return finish()
	}
	first(te.Status, te.Error, te.Reason)
	if te.LoopEnd != nil {
		notes = te.LoopEnd.Notes
	}
	return finish()
}

// boundary reads a boundary step's result.
func boundary(res engine.BoundaryResult, err error) *Got {
	if err != nil {
		return failedErr(err)
	}
	g := &Got{Status: string(res.Status), Error: res.Error, Reason: res.Reason, Continue: res.Continue, Notes: notesGot(res.Notes)}
	if res.Halt != nil {
		g.Halted, g.HaltReason = true, res.Halt.Reason
	}
	if res.Status == "refused" {
		g.RefusedBy = "guard" // only guards refuse a boundary (R3.3)
	}
	return g
}

// outcome reads a tool call's outcome.
func outcome(o engine.Outcome) *Got {
	g := &Got{Status: string(o.Status), Error: o.Error, Reason: o.Reason, RefusedBy: o.RefusedBy,
		Hidden: o.Hidden, Result: o.Result, Diagnostics: o.Diagnostics, Verdict: o.Verdict}
	if o.Halt != nil {
		g.Halted, g.HaltReason = true, o.Halt.Reason
	}
	return g
}

func instanceInfo(inst *engine.Instance) map[string]any {
	m := map[string]any{"instance": inst.ID(), "session": inst.Session(), "bot": inst.Bot()}
	programs := []any{}
	if p := inst.Pin(); p != nil {
		for _, pr := range p.Programs {
			programs = append(programs, pr.Name)
		}
	}
	m["programs"] = programs
	return m
}

func notesGot(ns []engine.Note) []NoteGot {
	out := make([]NoteGot, len(ns))
	for i, n := range ns {
		out[i] = NoteGot{ID: n.ID, Kind: n.Kind, Text: n.Text}
	}
	return out
}

func notesAny(ns []engine.Note) []any {
	out := make([]any, len(ns))
	for i, n := range ns {
		out[i] = map[string]any{"id": n.ID, "kind": n.Kind, "text": n.Text, "program": n.Program}
	}
	return out
}

func stringsAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func orEmpty(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

// replayGot is a replay step's outcome: a replay that diverged fails,
// unless the step expects divergences (R3.10).
func replayGot(res engine.ReplayResult, e *Expect) *Got {
	g := &Got{Status: "ok", Notes: notesGot(res.Notes)}
	for _, d := range res.Diverged {
		g.Diverged = append(g.Diverged, d.String())
	}
	if len(g.Diverged) > 0 && (e == nil || !e.HasDiverged) {
		g.Status = "failed"
		g.Error = "replay diverged from the journal: " + strings.Join(g.Diverged, "; ")
	}
	return g
}
