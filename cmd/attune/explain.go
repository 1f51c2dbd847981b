package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/harness"
	"github.com/attune-dev/attune/inspect"
	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

const explainUsage = `usage:
  attune explain DIALECT [--config FILE] < event.json   why attune hook answers this event as it does
  attune explain --session ID --call CALL_ID [--config FILE]   why a recorded call got its outcome
  attune explain --session ID --turn N [--round M] [--config FILE]   why a recorded turn (or round) went as it did
DIALECT is claude, codex, cursor or gemini. The configuration is found as attune hook
finds it. Nothing is written to the store: the event runs against a scratch copy.
`

// explainCmd is `attune explain` (docs/inspect.md).
func explainCmd(args []string, stdout, stderr io.Writer) int {
	return explainMain(args, os.Stdin, stdout, stderr)
}

func explainMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var dialect string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dialect, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("attune explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, explainUsage); fs.PrintDefaults() }
	cfgFlag := fs.String("config", "", "the attune configuration")
	sess := fs.String("session", "", "a recorded session (with --call, or --turn)")
	callID := fs.String("call", "", "the call id of a recorded tool call (or the agent's tool_use_id)")
	turn := fs.Int("turn", 0, "a recorded turn's number (from 1): its start and end")
	round := fs.Int("round", 0, "with --turn: one of its rounds (from 1): its start and end")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "attune explain: unexpected argument %q\n", fs.Arg(0))
		fmt.Fprint(stderr, explainUsage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *sess != "" || *callID != "" || *turn != 0 || *round != 0 {
		switch {
		case dialect != "" || *sess == "" || (*callID == "") == (*turn == 0):
			fmt.Fprintln(stderr, "attune explain: --session ID goes with --call CALL_ID or with --turn N [--round M], without a DIALECT")
			return 2
		case *turn < 0 || *round < 0 || *round > 0 && *turn == 0:
			fmt.Fprintln(stderr, "attune explain: --turn N and --round M are numbers from 1, and --round goes with --turn")
			return 2
		case *turn > 0:
			return explainBoundaryRecorded(ctx, *cfgFlag, *sess, *turn, *round, stdout, stderr)
		}
		return explainCall(ctx, *cfgFlag, *sess, *callID, stdout, stderr)
	}
	if dialect == "" {
		fmt.Fprint(stderr, explainUsage)
		return 2
	}
	d, ok := harness.Dialects(dialect)
	if !ok {
		fmt.Fprintf(stderr, "attune explain: unknown dialect %q (want claude, codex, cursor or gemini)\n", dialect)
		return 2
	}
	return explainEvent(ctx, d, *cfgFlag, stdin, stdout, stderr)
}

// explainEvent runs one hook event against a scratch copy of the store,
// tracing every tool chain, and prints the decision path.
func explainEvent(ctx context.Context, d harness.Dialect, cfgFlag string, stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := io.ReadAll(io.LimitReader(stdin, harness.MaxEvent+1))
	if err == nil && len(data) > harness.MaxEvent {
		err = fmt.Errorf("the event is larger than %d bytes", harness.MaxEvent)
	}
	var ev harness.Event
	if err == nil {
		ev, err = d.Parse(data)
	}
	if err != nil {
		fmt.Fprintf(stderr, "attune explain %s: %v\n", d.Name(), err)
		return 2
	}
	cwd, _ := os.Getwd()
	path, err := harness.FindConfig(cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	var cfg *config.Config
	if err == nil {
		cfg, err = config.Load(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "attune explain %s: %v\n", d.Name(), err)
		return 2
	}
	base, err := scratchBase(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "attune explain %s: %v\n", d.Name(), err)
		return 2
	}
	defer base.Close()
	var mu sync.Mutex
	var steps []engine.TraceStep
	var warn strings.Builder
	rt, err := harness.New(ctx, cfg, harness.Options{Store: engine.ScratchStore(base), DryRun: true, Stderr: &warn,
		Trace: func(s engine.TraceStep) { mu.Lock(); steps = append(steps, s); mu.Unlock() }})
	if err != nil {
		fmt.Fprintf(stderr, "attune explain %s: %v\n", d.Name(), err)
		return 2
	}
	a := rt.Handle(ctx, d, ev)
	rt.Close()
	w := &explainer{w: stdout}
	w.line("event: %s %s, session %s", d.Name(), ev.Name, ev.Session)
	if ev.Tool != "" {
		w.line("tool: %s", ev.Tool)
	}
	w.line("configuration: %s (bot %s)", relPath(path), cfg.Hook(d.Name()).Bot)
	bsteps, tsteps := splitBoundary(steps)
	if ev.Kind == harness.ToolPre || ev.Kind == harness.ToolPost || ev.Kind == harness.ToolFail {
		bsteps = quietBoundariesOut(bsteps) // the turn and round a call opens, when nothing is registered on them
	}
	if len(steps) == 0 {
		switch {
		case ev.Kind == harness.ToolPre || ev.Kind == harness.ToolPost || ev.Kind == harness.ToolFail:
			w.line("no tool chain ran: nothing of the session sees this call")
		default:
			w.line("no turn or round of the session ran: attune has nothing to say about this event")
		}
	}
	w.boundaries(bsteps)
	w.steps(tsteps)
	if s := strings.TrimSpace(warn.String()); s != "" {
		w.line("attune said: %s", strings.ReplaceAll(s, "\n", "\n  "))
	}
	w.line("answer: %s", strings.TrimSpace(string(d.Render(ev, a))))
	if len(bsteps) > 0 && len(tsteps) == 0 {
		w.line("why: %s", whyBoundary(a, bsteps))
	} else {
		w.line("why: %s", why(a, tsteps))
	}
	w.line("(run against a scratch copy of the store: nothing was changed)")
	return 0
}

// scratchBase opens the configured store to read from (a store that does
// not exist yet is an empty one).
func scratchBase(ctx context.Context, cfg *config.Config) (store.Store, error) {
	kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir)
	if err != nil {
		return nil, err
	}
	if kind == config.StoreSQLite {
		if _, err := os.Stat(target); errors.Is(err, os.ErrNotExist) {
			return store.NewMemory(), nil
		}
	}
	return store.Open(ctx, kind, target)
}

// loadRecorded finds the configuration, opens the store it names (read
// only through a scratch copy's base) and loads session sess from it; the
// caller closes base.
func loadRecorded(ctx context.Context, cfgFlag, sess string) (*config.Config, engine.Store, *inspect.Timeline, error) {
	cwd, _ := os.Getwd()
	path, err := harness.FindConfig(cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	var cfg *config.Config
	if err == nil {
		cfg, err = config.Load(path)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	base, err := scratchBase(ctx, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := inspect.Load(ctx, base, sess)
	if err != nil {
		base.Close()
		return nil, nil, nil, err
	}
	return cfg, base, t, nil
}

// explainCall explains a recorded call: what the journal says of it, then
// the session replayed on a scratch copy with its chain traced.
func explainCall(ctx context.Context, cfgFlag, sess, callID string, stdout, stderr io.Writer) int {
	cfg, base, t, err := loadRecorded(ctx, cfgFlag, sess)
	if err != nil {
		fmt.Fprintln(stderr, "attune explain:", err)
		return 2
	}
	defer base.Close()
	var call *inspect.Event
	for k := range t.Events {
		ev := &t.Events[k]
		if ev.Kind == inspect.KindCall && (ev.CallID == callID || (ev.Key != "" && ev.Key == callID) || (ev.ToolUseID != "" && ev.ToolUseID == callID)) {
			call = ev
			break
		}
	}
	if call == nil { // a turn's or round's id (the call_id of its timeline event)?
		for _, ev := range t.Events {
			if ev.CallID != callID {
				continue
			}
			switch ev.Kind {
			case inspect.KindTurn, inspect.KindTurnEnd:
				return explainBoundaryRecorded(ctx, cfgFlag, sess, ev.Turn, 0, stdout, stderr)
			case inspect.KindRound, inspect.KindRoundEnd:
				return explainBoundaryRecorded(ctx, cfgFlag, sess, ev.Turn, ev.Round, stdout, stderr)
			}
		}
	}
	if call == nil {
		var ids []string
		for _, ev := range t.Events {
			if ev.Kind == inspect.KindCall {
				ids = append(ids, ev.CallID)
			}
		}
		if len(ids) > 8 {
			ids = append(ids[:8], "...")
		}
		fmt.Fprintf(stderr, "attune explain: session %s has no tool call %q (its calls: %s)\n", t.Session, callID, strings.Join(ids, ", "))
		return 2
	}
	w := &explainer{w: stdout}
	agent := ""
	if call.ToolUseID != "" {
		agent = " (the agent's " + call.ToolUseID + ")"
	}
	w.line("call %s%s: %s in session %s, instance %s, turn %d round %d", call.CallID, agent, call.Path, t.Session, call.Instance, call.Turn, call.Round)
	w.line("recorded in the journal:")
	for _, st := range call.Chain {
		s := "  " + st.Step + ": " + st.Verdict
		if st.At != "" {
			s += " (the guard at " + st.At + ")"
		}
		if len(st.Marks) > 0 {
			s += " marks " + strings.Join(st.Marks, ", ")
		}
		if st.Reason != "" {
			s += ": " + st.Reason
		}
		if st.Error != "" {
			s += ": " + st.Error
		}
		if !st.Recorded {
			s += " (not journaled; follows from the outcome)"
		}
		w.line("%s", s)
		for _, g := range st.Guards {
			w.line("%s", guardLine("    ", g.Pattern, g.At, g.Verdict, g.Marks, g.Reason, g.Error, g.Attempt))
		}
	}
	// the replay, traced, on a scratch copy
	var mu sync.Mutex
	var steps []engine.TraceStep
	rep, err := inspect.ReplayOn(ctx, cfg, base, t, func(s engine.TraceStep) { mu.Lock(); steps = append(steps, s); mu.Unlock() })
	if err == nil {
		for _, ri := range rep.Instances {
			if ri.ID == call.Instance && ri.Error != "" {
				err = errors.New(ri.Error)
			}
		}
		if rep.FirstDivergence != "" && err == nil {
			w.line("the replay diverged from the journal: %s", rep.FirstDivergence)
		}
	}
	if err != nil {
		w.line("the session could not be replayed to trace each guard: %v", err)
	} else {
		var mine []engine.TraceStep
		for _, s := range steps {
			if s.CallID == call.CallID || strings.HasPrefix(s.CallID, call.CallID+"/") {
				mine = append(mine, s)
			}
		}
		if len(mine) == 0 {
			w.line("the replay ran no chain for this call")
		} else {
			w.line("replayed against the session's pin:")
			w.steps(mine)
		}
	}
	w.line("outcome: %s", explainOutcome(string(call.Status), call.RefusedBy, call.RefusedAt, call.Reason, call.Error))
	return 0
}

type explainer struct{ w io.Writer }

func (x *explainer) line(format string, a ...any) { fmt.Fprintf(x.w, format+"\n", a...) }

// steps prints traced chains: per call, the registrations matched, then
// the guards in pin order, the floor, hooks and core, and the outcome.
func (x *explainer) steps(steps []engine.TraceStep) {
	type callSteps struct {
		first  engine.TraceStep
		guards []engine.TraceStep
		rest   []engine.TraceStep
		out    *engine.TraceStep
	}
	var order []string
	by := map[string]*callSteps{}
	for _, s := range steps {
		key := s.CallID + "\x00" + s.Path
		c := by[key]
		if c == nil {
			c = &callSteps{first: s}
			by[key] = c
			order = append(order, key)
		}
		switch s.Step {
		case engine.TraceGuard:
			c.guards = append(c.guards, s)
		case engine.TraceOutcome, engine.TraceCeiling:
			s := s
			c.out = &s
		case engine.TraceMatched:
		default:
			c.rest = append(c.rest, s)
		}
		if s.Step == engine.TraceMatched {
			c.first = s
		}
	}
	for _, key := range order {
		c := by[key]
		indent := strings.Repeat("  ", c.first.Depth)
		x.line("%scall %s (%s):", indent, c.first.Path, c.first.CallID)
		if c.out != nil && c.out.Step == engine.TraceCeiling {
			x.line("%s  ceiling: refused: %s", indent, c.out.Reason)
			continue
		}
		x.line("%s  ceiling: the tool's effects are inside the bot's ceiling", indent)
		if len(c.first.Registrations) == 0 {
			x.line("%s  registrations matching %s: none", indent, c.first.Path)
		} else {
			x.line("%s  registrations matching %s, in pin order:", indent, c.first.Path)
			for k, r := range c.first.Registrations {
				x.line("%s    %d. %s %q of %s at %s", indent, k+1, r.Form, r.Pattern, r.Program, r.Pos)
			}
		}
		// guards end innermost first: told in pin order
		for k := len(c.guards) - 1; k >= 0; k-- {
			g := c.guards[k]
			x.line("%s", guardLine(indent+"  ", g.Pattern, g.Registration.Pos, g.Verdict, g.Marks, g.Reason, g.Error, g.Attempt))
		}
		for _, s := range c.rest {
			line := indent + "  " + s.Step
			if s.Registration.Pos != "" {
				line += fmt.Sprintf(" of hook %q at %s", s.Pattern, s.Registration.Pos)
			}
			line += ": " + s.Verdict
			if len(s.Marks) > 0 && s.Step == engine.TraceFloor {
				line += " (marks: " + strings.Join(s.Marks, ", ") + ")"
			}
			for _, t := range []string{s.Reason, s.Error, strings.Join(s.Diagnostics, "; ")} {
				if t != "" {
					line += ": " + t
				}
			}
			x.line("%s", line)
		}
		if c.out != nil {
			x.line("%s  outcome: %s", indent, explainOutcome(c.out.Verdict, c.out.RefusedBy, refusedAt(c.guards), c.out.Reason, c.out.Error))
		}
	}
}

func refusedAt(guards []engine.TraceStep) string {
	for _, g := range guards {
		if g.Verdict == "refuse" {
			return g.Registration.Pos
		}
	}
	return ""
}

func verdictText(v string) string {
	switch v {
	case "invoke":
		return "invoked the rest of the chain"
	case "refuse":
		return "refused"
	case "retry":
		return "asked for a retry"
	case "error":
		return "threw"
	}
	return v
}

func explainOutcome(status, by, at, reason, errText string) string {
	switch status {
	case string(engine.StatusRefused):
		s := "refused by the " + by
		if at != "" {
			s += " at " + at
		}
		return s + ": " + reason
	case string(engine.StatusFailed):
		return "failed: " + errText
	case string(engine.StatusPending):
		return "allowed: the agent runs the tool"
	}
	return status
}

// why says in a sentence why the answer is what it is.
func why(a harness.Answer, steps []engine.TraceStep) string {
	var out *engine.TraceStep
	at := ""
	for k := range steps {
		s := &steps[k]
		if s.Depth != 0 {
			continue
		}
		switch s.Step {
		case engine.TraceOutcome, engine.TraceCeiling:
			out = s
		case engine.TraceGuard:
			if s.Verdict == "refuse" {
				at = s.Registration.Pos
			}
		}
	}
	switch {
	case a.Decision == "deny" && out != nil && out.RefusedBy == engine.ByGuard:
		return fmt.Sprintf("the guard at %s refused the call, so the agent is told to deny it, with the guard's reason", at)
	case a.Decision == "deny" && out != nil && out.RefusedBy != "":
		return fmt.Sprintf("the %s refused the call, so the agent is told to deny it", out.RefusedBy)
	case a.Decision == "deny":
		return "attune could not judge the call, and a call it cannot judge is denied"
	case a.Decision == "ask":
		return "a guard marked the call with a mark the harness's ask_marks lists, so the agent asks the user"
	case a.Decision == "allow":
		return "a guard rewrote the arguments, so the agent runs the call with the new ones"
	case a.Decision == "block":
		return "a behavior refused the prompt, or an activating note asks the agent to continue"
	case out != nil && out.Verdict == string(engine.StatusPending):
		return "every guard invoked the rest of the chain and the floor let it through: attune has no objection, the agent decides as it would without attune"
	}
	return "no behavior objected: attune gives no decision"
}

// relPath is path relative to the working directory when it is inside it.
func relPath(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// splitBoundary parts traced steps into a boundary's (a turn's or round's
// guards, hooks, placed notes and outcome) and tool chains'.
func splitBoundary(steps []engine.TraceStep) (boundary, tools []engine.TraceStep) {
	ids := map[string]string{} // boundary call id -> its path
	for _, s := range steps {
		if s.Step == engine.TraceBoundary {
			ids[s.CallID] = s.Path
		}
	}
	for _, s := range steps {
		if p, ok := ids[s.CallID]; ok && p == s.Path {
			boundary = append(boundary, s)
		} else {
			tools = append(tools, s)
		}
	}
	return boundary, tools
}

// quietBoundariesOut leaves out the boundaries that ran no registration
// and opened as asked.
func quietBoundariesOut(steps []engine.TraceStep) []engine.TraceStep {
	quiet := map[string]bool{}
	for _, s := range steps {
		if s.Step == engine.TraceBoundary && len(s.Registrations) == 0 {
			quiet[s.CallID] = true
		}
		if s.Step == engine.TraceOutcome && s.Verdict != string(engine.StatusOK) || s.Step == engine.TracePlaced && len(s.Notes) > 0 {
			delete(quiet, s.CallID)
		}
	}
	var out []engine.TraceStep
	for _, s := range steps {
		if !quiet[s.CallID] {
			out = append(out, s)
		}
	}
	return out
}

// boundaries prints traced boundaries step by step: the registrations of
// each phase in pin order, what each guard and hook did, the notes placed,
// and the outcome.
func (x *explainer) boundaries(steps []engine.TraceStep) {
	for _, s := range steps {
		switch s.Step {
		case engine.TraceBoundary:
			x.line("%s (%s):", s.Path, s.CallID)
			if len(s.Registrations) == 0 {
				x.line("  registrations of %s: none", s.Path)
				continue
			}
			x.line("  registrations of %s, in pin order:", s.Path)
			for k, r := range s.Registrations {
				what := r.Form
				if r.Pattern != "" {
					what += fmt.Sprintf(" %q", r.Pattern)
				}
				x.line("    %d. %s of %s at %s", k+1, what, r.Program, r.Pos)
			}
		case engine.TraceGuard:
			line := fmt.Sprintf("  %s of %s at %s: %s", s.Registration.Form, s.Registration.Program, s.Registration.Pos, verdictText(s.Verdict))
			for _, t := range []string{s.Reason, s.Error} {
				if t != "" {
					line += ": " + t
				}
			}
			x.line("%s", line)
		case engine.TraceHook:
			line := fmt.Sprintf("  hook %q of %s at %s: ", s.Registration.Pattern, s.Registration.Program, s.Registration.Pos)
			switch {
			case s.Error != "":
				line += "threw: " + s.Error
			case len(s.Notes) == 0:
				line += "ran, emitted no note"
			default:
				line += "ran, emitted " + notesText(s.Notes)
			}
			x.line("%s", line)
		case engine.TracePlaced:
			if len(s.Notes) == 0 {
				x.line("  placed into the round's model call: no note (none of the turn was waiting)")
			} else {
				x.line("  placed into the round's model call: %s", notesText(s.Notes))
			}
		case engine.TraceOutcome:
			x.line("  outcome: %s", boundaryOutcome(s))
		}
	}
}

// notesText names notes: `1 note: ambient "text" (from prog)`.
func notesText(ns []engine.Note) string {
	parts := make([]string, len(ns))
	for k, n := range ns {
		parts[k] = fmt.Sprintf("%s %q", n.Kind, n.Text)
		if n.Program != "" {
			parts[k] += " (from " + n.Program + ")"
		}
	}
	word := "notes"
	if len(ns) == 1 {
		word = "note"
	}
	return fmt.Sprintf("%d %s: %s", len(ns), word, strings.Join(parts, "; "))
}

func boundaryOutcome(s engine.TraceStep) string {
	kind, phase, _ := strings.Cut(s.Path, "/")
	switch {
	case s.Verdict == string(engine.StatusRefused):
		return fmt.Sprintf("refused by the %s: %s (the %s does not open)", s.RefusedBy, s.Reason, kind)
	case s.Verdict == string(engine.StatusFailed):
		return "failed: " + s.Error
	case kind == "round" && phase == "end" && s.Continue && s.HostContinue:
		return "ok; the loop continues: the host asked to"
	case kind == "round" && phase == "end" && s.Continue:
		return "ok; the loop continues: an activating note of this round end asks for it"
	case kind == "round" && phase == "end":
		return "ok; the loop may stop: the host did not ask to continue and no activating note was emitted"
	case phase == "start":
		return "ok: the " + kind + " opens"
	}
	return "ok: the " + kind + " ends"
}

// whyBoundary says in a sentence why a boundary event's answer is what it
// is.
func whyBoundary(a harness.Answer, steps []engine.TraceStep) string {
	var refused, cont *engine.TraceStep
	var activating []string
	placed, emitted := 0, 0
	for k := range steps {
		s := &steps[k]
		switch s.Step {
		case engine.TraceOutcome:
			if s.Verdict == string(engine.StatusRefused) && refused == nil {
				refused = s
			}
			if s.Continue {
				cont = s
			}
		case engine.TraceGuard:
			if s.Verdict == "refuse" && refused == nil {
				refused = s
			}
		case engine.TracePlaced:
			placed += len(s.Notes)
		case engine.TraceHook:
			emitted += len(s.Notes)
			for _, n := range s.Notes {
				if n.Kind == session.Activating && strings.HasSuffix(s.Path, "/end") {
					activating = append(activating, n.Program)
				}
			}
		}
	}
	switch {
	case refused != nil && a.Decision == "block":
		at := refused.Registration.Pos
		if at == "" {
			return fmt.Sprintf("the %s refused the %s, so the agent is told to block it, with the reason", refused.RefusedBy, refused.Path)
		}
		return fmt.Sprintf("the %s at %s refused %s, so the agent is told to block it, with the guard's reason", refused.Registration.Form, at, refused.Path)
	case cont != nil && !cont.HostContinue && a.Decision == "block":
		return fmt.Sprintf("an activating note of the round end (from %s) asks the loop to continue, so the agent is told not to stop, with the note's text", strings.Join(activating, ", "))
	case a.Decision == "block":
		return "a behavior refused the event or asks the agent to continue"
	case a.Context != "" && placed > 0:
		return fmt.Sprintf("the round start placed %d note(s) into the model's context: the agent adds them as context; nothing refused the event", placed)
	case a.Context != "":
		return "behaviors' notes reach the model as context; nothing refused the event"
	case emitted > 0:
		return fmt.Sprintf("every guard let the event through; the hooks emitted %d note(s), which wait for the next model call", emitted)
	}
	return "every guard let the event through and no hook emitted a note: attune gives no decision"
}

// explainBoundaryRecorded explains a recorded turn (or one of its rounds):
// what the journal holds of its boundaries, then the session replayed on
// a scratch copy with its boundaries traced.
func explainBoundaryRecorded(ctx context.Context, cfgFlag, sess string, turn, round int, stdout, stderr io.Writer) int {
	cfg, base, t, err := loadRecorded(ctx, cfgFlag, sess)
	if err != nil {
		fmt.Fprintln(stderr, "attune explain:", err)
		return 2
	}
	defer base.Close()
	// the boundaries asked for, and the notes of their phases
	ids := map[string]bool{}
	var mine []*inspect.Event
	inst, turns := "", 0
	for k := range t.Events {
		ev := &t.Events[k]
		if ev.Kind == inspect.KindTurn && ev.Status == engine.StatusOK {
			turns = max(turns, ev.Turn)
		}
		if ev.Turn != turn || inst != "" && ev.Instance != inst {
			continue
		}
		var take bool
		switch ev.Kind {
		case inspect.KindTurn, inspect.KindTurnEnd:
			take = round == 0
		case inspect.KindRound, inspect.KindRoundEnd:
			take = round == 0 || ev.Round == round
		case inspect.KindNote:
			take = ids[ev.CallID] || round == 0 || ev.Round == round
		}
		if take {
			if inst == "" {
				inst = ev.Instance
			}
			if ev.Kind != inspect.KindNote {
				ids[ev.CallID] = true
			}
			mine = append(mine, ev)
		}
	}
	if len(ids) == 0 {
		what := fmt.Sprintf("turn %d", turn)
		if round > 0 {
			what += fmt.Sprintf(" round %d", round)
		}
		fmt.Fprintf(stderr, "attune explain: session %s has no %s (its turns: %d)\n", t.Session, what, turns)
		return 2
	}
	w := &explainer{w: stdout}
	what := fmt.Sprintf("turn %d", turn)
	if round > 0 {
		what += fmt.Sprintf(" round %d", round)
	}
	w.line("%s of session %s, instance %s", what, t.Session, inst)
	w.line("recorded in the journal:")
	for _, ev := range mine {
		switch ev.Kind {
		case inspect.KindNote:
			n := ev.Note
			state := n.State
			if n.State == "consumed" {
				state = "reached the model at " + n.ConsumedAt
			}
			w.line("    note (%s, from %s at %s): %q: %s", n.Kind, n.Program, n.Phase, n.Text, state)
			continue
		}
		line := "  " + boundaryName(ev) + ": " + string(ev.Status)
		switch {
		case ev.Status == engine.StatusRefused:
			line += " by the " + ev.RefusedBy + ": " + ev.Reason
		case ev.Error != "":
			line += ": " + ev.Error
		}
		if ev.Kind == inspect.KindRoundEnd {
			switch {
			case ev.Continue && ev.HostContinue:
				line += "; the loop continued (the host asked)"
			case ev.Continue:
				line += "; the loop continued (an activating note asked)"
			default:
				line += "; the loop could stop"
			}
		}
		w.line("%s", line)
	}
	var mu sync.Mutex
	var steps []engine.TraceStep
	rep, err := inspect.ReplayOn(ctx, cfg, base, t, func(s engine.TraceStep) { mu.Lock(); steps = append(steps, s); mu.Unlock() })
	if err == nil {
		for _, ri := range rep.Instances {
			if ri.ID == inst && ri.Error != "" {
				err = errors.New(ri.Error)
			}
		}
		if rep.FirstDivergence != "" && err == nil {
			w.line("the replay diverged from the journal: %s", rep.FirstDivergence)
		}
	}
	if err != nil {
		w.line("the session could not be replayed to trace each guard and hook: %v", err)
		return 0
	}
	bsteps, _ := splitBoundary(steps)
	var traced []engine.TraceStep
	for _, s := range bsteps {
		if ids[s.CallID] && s.Instance == inst {
			traced = append(traced, s)
		}
	}
	if len(traced) == 0 {
		w.line("the replay ran none of these boundaries")
		return 0
	}
	w.line("replayed against the session's pin:")
	w.boundaries(traced)
	return 0
}

func boundaryName(ev *inspect.Event) string {
	switch ev.Kind {
	case inspect.KindTurn:
		return fmt.Sprintf("turn %d start", ev.Turn)
	case inspect.KindTurnEnd:
		return fmt.Sprintf("turn %d end", ev.Turn)
	case inspect.KindRound:
		return fmt.Sprintf("round %d start", ev.Round)
	}
	return fmt.Sprintf("round %d end", ev.Round)
}

// guardLine is one guard's verdict as explain prints it, journaled or
// traced: where it is, what it said, the marks it left, its attempt.
func guardLine(indent, pattern, at, verdict string, marks []string, reason, errText string, attempt int) string {
	s := fmt.Sprintf("%sguard %q at %s: %s", indent, pattern, at, verdictText(verdict))
	if len(marks) > 0 {
		s += " (marks: " + strings.Join(marks, ", ") + ")"
	}
	if reason != "" {
		s += ": " + reason
	}
	if errText != "" {
		s += ": " + errText
	}
	if attempt > 1 {
		s += fmt.Sprintf(" [attempt %d]", attempt)
	}
	return s
}
