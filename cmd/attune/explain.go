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
	"github.com/attune-dev/attune/store"
)

const explainUsage = `usage:
  attune explain DIALECT [--config FILE] < event.json   why attune hook answers this event as it does
  attune explain --session ID --call CALL_ID [--config FILE]   why a recorded call got its outcome
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
	sess := fs.String("session", "", "a recorded session (with --call)")
	callID := fs.String("call", "", "the call id of a recorded tool call (or the agent's tool_use_id)")
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
	if *sess != "" || *callID != "" {
		if dialect != "" || *sess == "" || *callID == "" {
			fmt.Fprintln(stderr, "attune explain: --session ID and --call CALL_ID go together, without a DIALECT")
			return 2
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
	rt, err := harness.New(ctx, cfg, harness.Options{Store: inspect.Scratch(base), DryRun: true, Stderr: &warn,
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
	if len(steps) == 0 {
		switch {
		case ev.Kind == harness.ToolPre || ev.Kind == harness.ToolPost || ev.Kind == harness.ToolFail:
			w.line("no tool chain ran: nothing of the session sees this call")
		default:
			w.line("no tool chain ran: this event is a boundary (turn or round), not a tool call")
		}
	}
	w.steps(steps)
	if s := strings.TrimSpace(warn.String()); s != "" {
		w.line("attune said: %s", strings.ReplaceAll(s, "\n", "\n  "))
	}
	w.line("answer: %s", strings.TrimSpace(string(d.Render(ev, a))))
	w.line("why: %s", why(a, steps))
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

// explainCall explains a recorded call: what the journal says of it, then
// the session replayed on a scratch copy with its chain traced.
func explainCall(ctx context.Context, cfgFlag, sess, callID string, stdout, stderr io.Writer) int {
	cwd, _ := os.Getwd()
	path, err := harness.FindConfig(cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	var cfg *config.Config
	if err == nil {
		cfg, err = config.Load(path)
	}
	if err != nil {
		fmt.Fprintln(stderr, "attune explain:", err)
		return 2
	}
	base, err := scratchBase(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "attune explain:", err)
		return 2
	}
	defer base.Close()
	t, err := inspect.Load(ctx, base, sess)
	if err != nil {
		fmt.Fprintln(stderr, "attune explain:", err)
		return 2
	}
	var call *inspect.Event
	for k := range t.Events {
		ev := &t.Events[k]
		if ev.Kind == inspect.KindCall && (ev.CallID == callID || (ev.Key != "" && ev.Key == callID)) {
			call = ev
			break
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
	w.line("call %s: %s in session %s, instance %s, turn %d round %d", call.CallID, call.Path, t.Session, call.Instance, call.Turn, call.Round)
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
			s := fmt.Sprintf("%s  guard %q at %s: %s", indent, g.Pattern, g.Registration.Pos, verdictText(g.Verdict))
			if len(g.Marks) > 0 {
				s += " (marks: " + strings.Join(g.Marks, ", ") + ")"
			}
			if g.Reason != "" {
				s += ": " + g.Reason
			}
			if g.Error != "" {
				s += ": " + g.Error
			}
			if g.Attempt > 1 {
				s += fmt.Sprintf(" [attempt %d]", g.Attempt)
			}
			x.line("%s", s)
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
