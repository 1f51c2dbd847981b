package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
)

// DefaultTimeout bounds one event: waiting for the session's lock
// included. Claude Code's own default hook timeout is 60 s.
const DefaultTimeout = 30 * time.Second

// ErrNoConfig: no configuration was found (--config, $ATTUNE_CONFIG,
// attune.toml in the project or the working directory).
var ErrNoConfig = errors.New("no attune configuration found")

// FindConfig returns the configuration file of a hook: flag when given,
// else $ATTUNE_CONFIG, else attune.toml in projectDir (Claude Code's
// $CLAUDE_PROJECT_DIR), else attune.toml in cwd.
func FindConfig(flag string, getenv func(string) string, projectDir, cwd string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if p := getenv("ATTUNE_CONFIG"); p != "" {
		return p, nil
	}
	var tried []string
	for _, dir := range []string{projectDir, cwd} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, config.DefaultFile)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", fmt.Errorf("%w (tried --config, $ATTUNE_CONFIG, %s): pass --config FILE", ErrNoConfig, strings.Join(tried, ", "))
}

// Runtime answers hook events with one engine. Safe for concurrent use:
// the events of one session are serialized by a lock that holds across
// processes, so parallel hook processes never interleave inside a session.
type Runtime struct {
	cfg   *config.Config
	e     *engine.Engine
	dir   string // lock folder
	store string // the SQLite file, "" for another store (quick.go)
	warm  bool
	log   io.Writer
	tlog  *traceLog // what behaviors print (tracelog.go)
	tmp   string    // a DryRun's lock folder, removed by Close

	mu    sync.Mutex
	tools map[string]string // path -> effects registered, joined
	cwds  map[string]string // instance id -> the session's working folder (reads run there)

	warmSet warmSet   // hook serve's warm sessions (serve.go)
	work    workers   // a warm runtime's answers run here (Go)
	locks   lockFiles // a warm runtime's session lock files, kept open
}

// Options open a Runtime.
type Options struct {
	// Warm keeps instances live between events (hook serve); otherwise
	// each event brings its instance back from the store and stops it.
	Warm bool
	// Stderr receives what scripts print and the runtime's warnings.
	Stderr io.Writer
	// Store overrides the configured store (tests).
	Store engine.Store
	// Trace hears each step of every tool chain (attune explain).
	Trace engine.Tracer
	// DryRun answers without leaving anything beside the store: no reach
	// files, no log files, locks in a folder of their own (attune explain,
	// which also gives a scratch Store).
	DryRun bool
	// Getenv reads ATTUNE_DEBUG (nil: os.Getenv).
	Getenv func(string) string
}

// Open loads the configuration at path and builds the engine.
func Open(ctx context.Context, path string, o Options) (*Runtime, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	return New(ctx, cfg, o)
}

// New builds a runtime on a loaded configuration.
func New(ctx context.Context, cfg *config.Config, o Options) (*Runtime, error) {
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	tl := newTraceLog(cfg, o.Stderr, o.Getenv)
	if o.DryRun {
		tl.dir = ""
	}
	rt := &Runtime{cfg: cfg, dir: lockDir(cfg), store: storeFile(cfg), warm: o.Warm, log: o.Stderr, tlog: tl, tools: map[string]string{}, cwds: map[string]string{}}
	rt.work.max = maxIdleWorkers
	if o.DryRun { // locks in a folder of this runtime's own, removed by Close
		dir, err := os.MkdirTemp("", "attune-explain-")
		if err != nil {
			return nil, err
		}
		rt.store, rt.dir, rt.tmp = "", dir, dir
	}
	// attune is the host here: it answers admit/read itself ([harness.reads])
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: o.Store, Trace: o.Trace, Print: tl.print,
		Logger: slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Read:   HostReads(cfg, rt.cwdOf)})
	if err != nil {
		if rt.tmp != "" {
			os.RemoveAll(rt.tmp)
		}
		return nil, withMissingPacks(err, cfg)
	}
	rt.e = e
	return rt, nil
}

// cwdOf is the working folder of the session of instance id (a child's is
// its session's), "" when no event named one.
func (r *Runtime) cwdOf(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.cwds[id]; ok {
		return c
	}
	for k, c := range r.cwds {
		if strings.HasPrefix(id, k+"/") {
			return c
		}
	}
	return ""
}

// withMissingPacks adds to an engine's error the pack folders of the
// configuration that do not exist (as attune check says them), the usual
// cause of a program no pack holds.
func withMissingPacks(err error, cfg *config.Config) error {
	for i, dir := range cfg.Engine.Packs {
		if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
			err = fmt.Errorf("%w; %w", err, cfg.Errorf(fmt.Sprintf("engine.packs[%d]", i+1), "pack folder %s does not exist", dir))
		}
	}
	return err
}

// Close closes the engine.
func (r *Runtime) Close() error {
	r.work.close()
	r.locks.close()
	err := r.e.Close()
	r.tlog.close()
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
	return err
}

// Go runs f off the caller's goroutine, as Responder.Go: a warm runtime
// runs it on a goroutine kept from one event to the next (workers), whose
// stack has grown to an answer's depth already; another starts one for f.
func (r *Runtime) Go(f func()) {
	if !r.warm {
		go f()
		return
	}
	r.work.run(f)
}

// Log is where the runtime says what went wrong (Options.Stderr).
func (r *Runtime) Log() io.Writer { return r.log }

// Engine returns the runtime's engine.
func (r *Runtime) Engine() *engine.Engine { return r.e }

// Handle answers one event read by d. It never fails: a problem is written
// to the runtime's stderr and answered safely (Failure).
//
// fail_open is about script errors only (toolPre): an event the runtime
// itself could not handle (its store, its lock, its time, a crash) is a
// tool call nothing judged, denied whatever fail_open says.
func (r *Runtime) Handle(ctx context.Context, d Dialect, ev Event) (a Answer) {
	h := r.cfg.Hook(d.Name())
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("internal error: %v", p)
			fmt.Fprintf(r.log, "attune hook %s: %s: %v\n", d.Name(), ev.Name, err)
			a = Failure(ev, err, false)
		}
	}()
	// every record of the event's steps carries harness = {name, event}
	ctx = engine.WithHarness(ctx, engine.Harness{Name: d.Name(), Event: ev.fields()})
	a, err := r.handle(ctx, d, h, ev)
	if err != nil {
		fmt.Fprintf(r.log, "attune hook %s: %s: %v\n", d.Name(), ev.Name, err)
		return Failure(ev, err, false)
	}
	return tighten(d.Caps(), ev, a)
}

// Failure is the safe answer to an event attune could not handle: a
// refused tool call unless failOpen (then a warning for the user); callers
// pass failOpen only for a script's error.
func Failure(ev Event, err error, failOpen bool) Answer {
	msg := "attune: " + err.Error()
	if ev.Kind == ToolPre && !failOpen {
		return Answer{Decision: "deny", Reason: msg + " (attune fails closed)"}
	}
	return Answer{SystemMessage: msg}
}

// BadEvent is the answer to input the dialect cannot read as an event (ev
// is what Read says it names): a tool call it names (PreToolUse with no
// session_id, a field of the wrong type, input too deep, too large or not
// JSON) is denied, since attune cannot judge it (fail closed), and so is
// input that names no event at all (Read gives Strict); an event of
// another kind gets no decision.
func BadEvent(ev Event, err error) Answer {
	if ev.Kind == ToolPre {
		return Failure(ev, err, false)
	}
	return Answer{}
}

func (r *Runtime) handle(ctx context.Context, d Dialect, h *config.HookHarness, ev Event) (Answer, error) {
	if ev.Kind == Other {
		return Answer{}, nil
	}
	id, main, _ := instanceID(d, h, ev)
	unlock, err := r.lockSession(ctx, main)
	if err != nil {
		return Answer{}, err
	}
	defer unlock()
	if r.store != "" { // quick.go: a process killed from here on leaves no reach
		if err := dropReach(r.dir, id); err != nil {
			return Answer{}, err
		}
	}
	inst, a, err := r.dispatch(ctx, d, h, main, ev)
	if inst == nil {
		return a, err
	}
	if ev.Kind == SessionStart && !r.warm && a.SystemMessage == "" {
		if kind, _, _ := config.ParseStore(r.cfg.Engine.Store, r.cfg.Dir); kind == config.StoreMemory {
			a.SystemMessage = fmt.Sprintf(`attune: %s has store = "memory:", and each hook event runs in a process of its own, so nothing is kept from one event to the next (owner state, the session, its turns); remove the store line for the SQLite default, or answer from one process with attune hook serve`, r.cfg.File)
		}
	}
	// hook serve keeps no reach: its instances change with every event, and
	// writing the file each time would cost more than the event; a command
	// hook of the same session takes the full path and leaves one, which the
	// next event here removes again
	if err == nil && r.store != "" && ev.Kind != SessionEnd && !r.warm {
		if err := keepReach(ctx, r.dir, r.store, id, inst); err != nil {
			fmt.Fprintf(r.log, "attune hook %s: %v (the next event takes the full path)\n", d.Name(), err)
		}
	}
	if !r.warm || ev.Kind == SessionEnd {
		inst.Stop()
	}
	if r.warm && ev.Kind == SessionEnd && id == main {
		r.forgetWarm(main)
	} else if r.warm {
		r.touchWarm(main, id)
	}
	return a, err
}

// dispatch brings the event's instance back and runs the event; the
// caller holds the session's lock and stops the instance.
func (r *Runtime) dispatch(ctx context.Context, d Dialect, h *config.HookHarness, main string, ev Event) (*engine.Instance, Answer, error) {
	if ev.Kind == Compact || (ev.Kind == SessionStart && (ev.Source == "clear" || ev.Source == "compact")) {
		if err := r.e.SetFlag(ctx, main, engine.FlagFresh, "1"); err != nil {
			return nil, Answer{}, err
		}
	}
	inst, err := r.instance(ctx, d, h, ev)
	if err != nil {
		return nil, Answer{}, err
	}
	if ev.Cwd != "" {
		r.mu.Lock()
		r.cwds[inst.ID()] = ev.Cwd
		r.mu.Unlock()
	}
	var a Answer
	switch ev.Kind {
	case Prompt:
		a, err = r.prompt(ctx, inst, main, ev)
	case ToolPre:
		a, err = r.toolPre(ctx, d, h, inst, ev)
	case ToolPost, ToolFail:
		a, err = r.toolPost(ctx, d, h, inst, ev)
	case Stop, SubagentStop:
		a, err = r.stop(ctx, inst, main, ev)
	case SessionStart:
		a, err = r.session(ctx, inst, "start", ev.Source)
	case SubagentStart:
		a, err = r.session(ctx, inst, "start", "subagent")
		if err == nil { // the child's turn opens: what it places goes to the subagent
			var placed string
			if placed, err = ensureTurn(ctx, inst); err == nil {
				a.Context = joinText(a.Context, placed)
			}
		}
	case SessionEnd:
		if inst.Turn().InTurn {
			_, err = inst.EndTurn(ctx)
		}
		if err == nil {
			a, err = r.session(ctx, inst, "end", ev.Reason)
		}
	}
	if err == nil { // (notify TEXT "user"), from any step of the event: the user only
		a.SystemMessage = joinText(a.SystemMessage, userText(inst.TakeUserNotes()))
	}
	return inst, a, err
}

// instance brings back (or starts) the session's instance, or the child
// instance of the subagent the event comes from.
func (r *Runtime) instance(ctx context.Context, d Dialect, h *config.HookHarness, ev Event) (*engine.Instance, error) {
	id, main, bot := instanceID(d, h, ev)
	kind, parent := engine.KindForeground, ""
	if id != main {
		kind, parent = engine.KindChild, main
	}
	if i, ok := r.e.Instance(id); ok {
		// a warm instance (hook serve): another process may have handled
		// events of the session since; then it is brought back
		moved, err := i.Stale(ctx)
		if err != nil {
			return nil, err
		}
		if !moved {
			return i, nil
		}
		return r.e.Restart(ctx, id)
	}
	o := engine.StartOptions{ID: id, Kind: kind, Parent: parent}
	if stored, err := r.e.Stored(ctx, id); err == nil && !stored {
		o.Bot = bot // a new instance; a stored one keeps its bot and pin
		if r.cfg.Bots[bot] == nil {
			names := slices.Sorted(maps.Keys(r.cfg.Bots))
			return nil, fmt.Errorf("start %s: no bot named %q in %s: set [harness.%s] bot = %q (the bots are %s)",
				id, bot, r.cfg.File, d.Name(), append(names, "main")[0], strings.Join(names, ", "))
		}
	} else if err != nil {
		return nil, err
	}
	i, err := r.e.Start(ctx, o)
	if err != nil {
		if i, ok := r.e.Instance(id); ok { // another goroutine of this process started it
			return i, nil
		}
		return nil, err
	}
	return i, nil
}

// session runs the session hooks of phase: the notes they emit go to the
// agent now (SessionStart additionalContext).
func (r *Runtime) session(ctx context.Context, inst *engine.Instance, phase, source string) (Answer, error) {
	res, err := inst.SessionBoundary(ctx, phase, source)
	if err != nil {
		return Answer{}, err
	}
	r.warnFailed(res)
	a := Answer{Context: noteText(res.Notes)}
	halted(&a, res.Halt)
	return a, nil
}

// placeNow adds to a the notes of the turn not yet placed (a guard's, a
// tool hook's, a :post-fail's): an answer that carries context gives them
// to the model now rather than at the next round.
func placeNow(ctx context.Context, inst *engine.Instance, a *Answer) error {
	notes, err := inst.PlaceNotes(ctx)
	if err != nil {
		return err
	}
	a.Context = joinText(a.Context, noteText(notes))
	return nil
}

// prompt: turn begin, then round begin; a refusal blocks the prompt. The
// prompt a harness submits itself after a blocked stop (Gemini CLI, Copilot
// CLI: the stop's reason as the next user message) continues the turn in
// the round that stop activated.
func (r *Runtime) prompt(ctx context.Context, inst *engine.Instance, main string, ev Event) (Answer, error) {
	if rec, ok, err := r.e.Flag(ctx, main, engine.FlagContinued); err == nil && ok {
		_ = r.e.ClearFlag(ctx, main, engine.FlagContinued)
		want := strings.TrimSpace(rec)
		if ts := inst.Turn(); ts.InTurn && ts.InRound && want != "" && strings.Contains(ev.Prompt, want) {
			return Answer{}, nil
		}
	}
	if inst.Turn().InTurn { // the last turn never saw its Stop
		if _, err := inst.EndTurn(ctx); err != nil {
			return Answer{}, err
		}
	}
	_, fresh, _ := r.e.Flag(ctx, main, engine.FlagFresh)
	tb, err := inst.BeginTurn(ctx, engine.TurnInput{Input: ev.Prompt, ContextFresh: fresh})
	if err != nil {
		return Answer{}, err
	}
	if !inst.Turn().InTurn {
		a := Answer{Decision: "block", Reason: refusal(tb)}
		halted(&a, tb.Halt)
		return a, nil
	}
	if fresh {
		_ = r.e.ClearFlag(ctx, main, engine.FlagFresh)
	}
	r.warnFailed(tb)
	var said string
	if name, text, ok := packCommand(inst, ev.Prompt); ok {
		// a pack command from the prompt (/goal TEXT) runs in the turn; its
		// notes are placed into the round, for the model
		cr := inst.Command(ctx, name, text)
		if cr.Status != engine.StatusOK {
			fmt.Fprintf(r.log, "attune: /%s failed: %s\n", name, cr.Error)
			said = "attune: /" + name + " failed: " + cr.Error
		}
	}
	rb, err := inst.BeginRound(ctx)
	if err != nil {
		return Answer{}, err
	}
	if !inst.Turn().InRound {
		_, _ = inst.EndTurn(ctx)
		a := Answer{Decision: "block", Reason: refusal(rb)}
		halted(&a, tb.Halt, rb.Halt)
		return a, nil
	}
	r.warnFailed(rb)
	a := Answer{Context: noteText(rb.Notes), SystemMessage: said}
	halted(&a, tb.Halt, rb.Halt)
	return a, nil
}

// packCommand reads a prompt "/NAME TEXT" that names a command of the
// instance's pinned packs.
func packCommand(inst *engine.Instance, prompt string) (name, text string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(prompt), "/")
	if !ok {
		return "", "", false
	}
	name, text, _ = strings.Cut(rest, " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, text = name[:i], rest[i+1:]
	}
	p := inst.Pin()
	if p == nil {
		return "", "", false
	}
	if _, ok := p.Command(name); !ok {
		return "", "", false
	}
	return name, strings.TrimSpace(text), true
}

func refusal(b engine.BoundaryResult) string {
	if b.Reason != "" {
		return b.Reason
	}
	if b.Error != "" {
		return "attune: " + b.Error
	}
	return "refused by attune"
}

func (r *Runtime) warnFailed(b engine.BoundaryResult) {
	if b.Status == engine.StatusFailed && b.Error != "" {
		fmt.Fprintf(r.log, "attune: a hook failed: %s\n", b.Error)
	}
}

// noteText joins the texts of the notes for the model (a user's note is
// said apart, TakeUserNotes).
func noteText(notes []engine.Note) string {
	var texts []string
	for _, n := range notes {
		if n.Kind != "user" {
			texts = append(texts, n.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// ensureTurn opens a turn and a round for an event that comes without
// one (a subagent's first tool call; hooks installed mid-session) and
// returns the notes placed.
func ensureTurn(ctx context.Context, inst *engine.Instance) (string, error) {
	ts := inst.Turn()
	inTurn, inRound := ts.InTurn, ts.InRound
	if !inTurn {
		tb, err := inst.BeginTurn(ctx, engine.TurnInput{})
		if err != nil {
			return "", err
		}
		if !inst.Turn().InTurn {
			return "", errors.New(refusal(tb))
		}
	}
	if !inRound {
		rb, err := inst.BeginRound(ctx)
		if err != nil {
			return "", err
		}
		if !inst.Turn().InRound {
			return "", errors.New(refusal(rb))
		}
		return noteText(rb.Notes), nil
	}
	return "", nil
}

// tool registers the agent's tool with the engine (its core runs in the
// agent) and returns its path.
func (r *Runtime) tool(d Dialect, h *config.HookHarness, name string) (string, error) {
	path := d.ToolPath(name)
	effects, ok := h.Tools[name]
	if !ok {
		effects = d.Effects(name)
	}
	key := strings.Join(effects, ",")
	r.mu.Lock()
	defer r.mu.Unlock()
	if have, ok := r.tools[path]; ok && have == key {
		return path, nil
	}
	err := r.e.RegisterTool(engine.HostTool{Path: path, Effects: effects, Core: outside})
	if err == nil {
		r.tools[path] = key
	}
	return path, err
}

func outside(context.Context, engine.CoreCall) (any, error) {
	return nil, errors.New("this tool runs in the agent, not in attune")
}

func (r *Runtime) toolPre(ctx context.Context, d Dialect, h *config.HookHarness, inst *engine.Instance, ev Event) (Answer, error) {
	if ev.Tool == "" {
		return Answer{}, fmt.Errorf("%w: %s without tool_name", ErrBadEvent, ev.Name)
	}
	placed, err := ensureTurn(ctx, inst)
	if err != nil {
		return Answer{Decision: "deny", Reason: err.Error()}, nil
	}
	path, err := r.tool(d, h, ev.Tool)
	if err != nil {
		return Answer{}, err
	}
	args := map[string]any{}
	if ev.ToolInput != nil {
		args = ev.ToolInput
	}
	op := inst.ToolBegin(ctx, engine.ToolCall{Path: path, Args: args}, ev.ToolUseID)
	a := Answer{Context: placed}
	switch op.Status {
	case engine.StatusPending:
		var asks []string
		for _, m := range op.Marks {
			if slices.Contains(h.AskMarks, m) {
				asks = append(asks, m)
			}
		}
		switch {
		case op.Verdict == engine.VerdictAsk:
			a.Decision, a.Reason = "ask", op.VerdictReason
		case len(asks) > 0:
			a.Decision, a.Reason = "ask", "attune: the call is marked "+strings.Join(asks, ", ")
		case op.Verdict == engine.VerdictAllow:
			a.Decision, a.Reason = "allow", op.VerdictReason
		}
		if !reflect.DeepEqual(op.Args, any(args)) {
			m, ok := op.Args.(map[string]any)
			if !ok {
				return Answer{}, fmt.Errorf("a guard rewrote the input of %s into %T; the agent needs an object", ev.Tool, op.Args)
			}
			a.UpdatedInput = m
			if c := d.Caps(); a.Decision == "" && !c.RewriteAlone {
				// a rewrite no guard gave a verdict: not an approval (that
				// would skip the agent's permission rules); the agent
				// needs a decision to apply it, and gets the stricter one
				switch {
				case c.RewriteAllow:
					a.Decision, a.Reason = "allow", "attune: arguments rewritten by a guard"
				case c.Ask:
					a.Decision, a.Reason = "ask", "attune: arguments rewritten by a guard"
				default:
					a.Decision, a.Reason = "deny", "attune rewrote this call to "+string(marshal(m))+"; run that instead"
				}
			}
		}
		halted(&a, op.Halt)
		return a, placeNow(ctx, inst, &a)
	case engine.StatusRefused:
		a.Decision, a.Reason = "deny", op.Reason
		halted(&a, op.Halt)
		return a, placeNow(ctx, inst, &a)
	}
	err = errors.New(op.Error)
	fmt.Fprintf(r.log, "attune hook %s: %s %s: %v\n", d.Name(), ev.Name, ev.Tool, err)
	if h.FailOpen {
		a.SystemMessage = "attune: " + op.Error + " (attune fails open: the call goes ahead)"
		return a, nil
	}
	a.Decision, a.Reason = "deny", "attune: "+op.Error+" (attune fails closed)"
	return a, nil
}

func (r *Runtime) toolPost(ctx context.Context, d Dialect, h *config.HookHarness, inst *engine.Instance, ev Event) (Answer, error) {
	if ev.Tool == "" {
		return Answer{}, fmt.Errorf("%w: %s without tool_name", ErrBadEvent, ev.Name)
	}
	placed, err := ensureTurn(ctx, inst)
	if err != nil {
		return Answer{}, err
	}
	path, err := r.tool(d, h, ev.Tool)
	if err != nil {
		return Answer{}, err
	}
	failure := ""
	if ev.Kind == ToolFail {
		failure = ev.Error
	}
	out, err := inst.ToolEnd(ctx, engine.ToolCall{Path: path, Args: ev.ToolInput}, ev.ToolUseID, ev.ToolResponse, failure)
	if err != nil && !errors.Is(err, engine.ErrNoOpenCall) {
		return Answer{}, err
	}
	texts := out.Diagnostics
	if placed != "" {
		texts = append([]string{placed}, texts...)
	}
	a := Answer{Context: strings.Join(texts, "\n\n")}
	if ev.Kind == ToolPost {
		resultAnswer(&a, ev, out)
		if out.Status == engine.StatusFailed {
			fmt.Fprintf(r.log, "attune hook %s: %s %s: %s\n", d.Name(), ev.Name, ev.Tool, out.Error)
			a.SystemMessage = "attune: " + out.Error
		}
	}
	halted(&a, out.Halt)
	return a, placeNow(ctx, inst, &a)
}

// stop: round end with host_continue false; an activating note opens the
// next round and the agent continues with the notes placed into it (kept,
// to know the prompt a harness may submit with them: prompt).
func (r *Runtime) stop(ctx context.Context, inst *engine.Instance, main string, ev Event) (Answer, error) {
	ts := inst.Turn()
	inTurn, inRound := ts.InTurn, ts.InRound
	if !inTurn {
		if ev.Kind != SubagentStop {
			return Answer{}, nil
		}
		if _, err := ensureTurn(ctx, inst); err != nil {
			return Answer{}, err
		}
		inRound = true
	}
	var ended []engine.Note
	var halt *engine.Halt
	if inRound {
		end, err := inst.EndRound(ctx, engine.RoundEnd{HostContinue: false, Output: ev.LastMessage})
		if err != nil {
			return Answer{}, err
		}
		r.warnFailed(end)
		halt = end.Halt
		if end.Continue {
			rb, err := inst.BeginRound(ctx)
			if err != nil {
				return Answer{}, err
			}
			if inst.Turn().InRound {
				text := noteText(rb.Notes)
				if text == "" {
					text = activating(end.Notes)
				}
				if ev.Kind == Stop {
					if err := r.e.SetFlag(ctx, main, engine.FlagContinued, text); err != nil {
						return Answer{}, err
					}
				}
				return Answer{Decision: "block", Reason: text}, nil
			}
			fmt.Fprintf(r.log, "attune: the activated round was refused: %s\n", refusal(rb))
		}
		ended = end.Notes
	}
	te, err := inst.EndTurn(ctx)
	if err != nil {
		return Answer{}, err
	}
	r.warnFailed(te)
	a := Answer{SystemMessage: noteText(append(ended, te.Notes...))}
	halted(&a, halt, te.Halt)
	return a, nil
}

// resultAnswer is what the result guards made of the harness's result
// (tool_response): a replaced result goes out in the tool's own shape; a
// withheld one (a refusal, or a result guard that failed: a guard that
// cannot judge denies) blocks, and its text replaces the result where the
// shape is known, so the model never sees it.
func resultAnswer(a *Answer, ev Event, out engine.Outcome) {
	switch out.Status {
	case engine.StatusOK:
		if !reflect.DeepEqual(out.Result, ev.ToolResponse) {
			a.UpdatedOutput, a.HasOutput = inShape(ev.ToolResponse, out.Result), true
		}
	case engine.StatusRefused, engine.StatusFailed:
		why := out.Reason
		if why == "" {
			why = "attune: " + out.Error
		}
		a.Decision, a.Reason = "block", why
		if v, ok := shaped(ev.ToolResponse, "[withheld by attune: "+why+"]"); ok {
			a.UpdatedOutput, a.HasOutput = v, true
		}
	}
}

// inShape is a replaced result v in the shape of the tool's response orig:
// a text for a tool that answers {stdout, stderr, ...} (Bash) becomes its
// stdout, since Claude Code ignores a replacement of another shape.
func inShape(orig, v any) any {
	if text, ok := v.(string); ok {
		if sv, ok := shaped(orig, text); ok {
			return sv
		}
	}
	return v
}

// shaped is text in the shape of the tool response orig, when it has a
// known one: Bash's {stdout, stderr, interrupted, isImage}, an MCP result's
// content blocks.
func shaped(orig any, text string) (any, bool) {
	switch o := orig.(type) {
	case map[string]any:
		if _, ok := o["stdout"]; ok {
			m := maps.Clone(o)
			m["stdout"], m["stderr"] = text, ""
			return m, true
		}
		if _, ok := o["content"]; ok {
			m := maps.Clone(o)
			m["content"] = []any{map[string]any{"type": "text", "text": text}}
			return m, true
		}
	case []any:
		return []any{map[string]any{"type": "text", "text": text}}, true
	case string:
		return text, true
	}
	return nil, false
}

// halted makes a an answer that ends the agent's turn, when h is set.
func halted(a *Answer, hs ...*engine.Halt) {
	for _, h := range hs {
		if h != nil && !a.Halt {
			a.Halt, a.StopReason = true, h.Reason
		}
	}
}

// userText joins the texts of notes for the user.
func userText(notes []engine.Note) string {
	var texts []string
	for _, n := range notes {
		texts = append(texts, n.Text)
	}
	return strings.Join(texts, "\n\n")
}

func activating(notes []engine.Note) string {
	var out []engine.Note
	for _, n := range notes {
		if n.Kind == "activating" {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "continue"
	}
	return noteText(out)
}
