package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// demoScript is the scripted model `attune run` drives the engine with
// (examples/demo.toml): the host's world, the instances, and the turns.
type demoScript struct {
	MaxRounds int `toml:"max_rounds"`
	World     struct {
		Reads map[string]any `toml:"reads"`
		Tools map[string]struct {
			Effect []string `toml:"effect"`
			Result any      `toml:"result"`
		} `toml:"tools"`
	} `toml:"world"`
	Instances []struct {
		ID  string `toml:"id"`
		Bot string `toml:"bot"`
	} `toml:"instance"`
	Turns []demoTurn `toml:"turn"`
}

type demoTurn struct {
	Instance string `toml:"instance"`
	Input    string `toml:"input"`
	Commands []struct {
		Name string `toml:"name"`
		Text string `toml:"text"`
	} `toml:"commands"`
	Methods []demoMethod `toml:"methods"`
	Rounds  []struct {
		Output       string       `toml:"output"`
		HostContinue bool         `toml:"host_continue"`
		Tools        []demoTool   `toml:"tools"`
		Methods      []demoMethod `toml:"methods"`
	} `toml:"round"`
}

type demoTool struct {
	Path   string `toml:"path"`
	Args   any    `toml:"args"`
	CallID string `toml:"call_id"`
}

type demoMethod struct {
	Owner         string `toml:"owner"`
	Method        string `toml:"method"`
	Input         any    `toml:"input"`
	HostAuthority bool   `toml:"host_authority"`
	CallID        string `toml:"call_id"`
}

// runCmd runs the demo session (R9.2): a scripted model drives the
// engine's own behaviors on the embedded SQLite store, printing each round
// as a person can follow it, then the owners' final states. A second run
// continues from the stored pins and state.
func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print events as JSON lines")
	scriptPath := fs.String("script", "", "the scripted model (default: demo.toml beside the config)")
	fresh := fs.Bool("fresh", false, "start over: delete the demo's store file first")
	cfgPath := "attune.toml"
	var rest []string
	for _, a := range args { // allow the config path before or after the flags
		if !strings.HasPrefix(a, "-") && len(rest) == 0 && cfgPath == "attune.toml" {
			cfgPath = a
			continue
		}
		rest = append(rest, a)
	}
	if code, ok := parseFlags(fs, rest); !ok {
		return code
	}
	if fs.NArg() > 0 {
		cfgPath = fs.Arg(0)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *scriptPath == "" {
		*scriptPath = filepath.Join(cfg.Dir, "demo.toml")
	}
	var script demoScript
	data, err := os.ReadFile(*scriptPath)
	if err == nil {
		err = config.CheckSource(*scriptPath, data)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	md, err := toml.Decode(string(data), &script)
	if err != nil {
		fmt.Fprintln(stderr, config.SyntaxError(*scriptPath, data, err))
		return 2
	}
	for _, k := range md.Undecoded() {
		// values held as plain data (arguments, inputs, results) are free-form
		free := false
		for _, part := range k {
			if part == "args" || part == "input" || part == "result" || part == "reads" {
				free = true
			}
		}
		if !free {
			fmt.Fprintf(stderr, "%s: unknown key %s\n", *scriptPath, k)
			return 2
		}
	}
	if script.MaxRounds <= 0 {
		script.MaxRounds = 6
	}
	if *fresh {
		if kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir); err == nil && kind == config.StoreSQLite {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(target + suffix)
			}
		}
	}
	out := &demoOut{w: stdout, json: *asJSON}
	if err := runDemo(context.Background(), cfg, &script, out); err != nil {
		fmt.Fprintln(stderr, "attune run:", err)
		return 1
	}
	return 0
}

// demoOut prints events for a person, or as JSON lines.
type demoOut struct {
	w    io.Writer
	json bool
}

func (o *demoOut) event(kind string, fields map[string]any, text string, args ...any) {
	if o.json {
		fields["event"] = kind
		data, _ := json.Marshal(fields)
		fmt.Fprintln(o.w, string(data))
		return
	}
	fmt.Fprintf(o.w, text+"\n", args...)
}

func noteLines(ns []engine.Note) []map[string]any {
	out := []map[string]any{}
	for _, n := range ns {
		out = append(out, map[string]any{"id": n.ID, "kind": n.Kind, "text": n.Text, "program": n.Program})
	}
	return out
}

func (o *demoOut) notes(indent, label string, ns []engine.Note) {
	if o.json {
		return
	}
	if len(ns) == 0 {
		fmt.Fprintf(o.w, "%s%s: none\n", indent, label)
		return
	}
	fmt.Fprintf(o.w, "%s%s:\n", indent, label)
	for _, n := range ns {
		text := strings.ReplaceAll(strings.TrimSpace(n.Text), "\n", "\n"+indent+"    ")
		fmt.Fprintf(o.w, "%s  [%s] %s  (%s)\n", indent, n.Kind, text, n.Program)
	}
}

func brief(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

func outcomeText(o engine.Outcome) string {
	switch o.Status {
	case engine.StatusOK:
		s := "ok " + brief(o.Result)
		for _, d := range o.Diagnostics {
			s += " · " + d
		}
		return s
	case engine.StatusRefused:
		return fmt.Sprintf("refused by %s: %s\n      (%s)", o.RefusedBy, o.Reason, refusalWords(o))
	}
	return "failed: " + o.Error
}

// refusalWords says in plain words what a refusal means for the call.
func refusalWords(o engine.Outcome) string {
	switch o.RefusedBy {
	case engine.ByGuard:
		at := ""
		if o.RefusedAt != "" {
			at = " (" + o.RefusedAt + ")"
		}
		return "a behavior's guard" + at + " looked at the call and said no: the tool never ran, and the model is told the reason"
	case engine.ByCeiling:
		return "this bot may not use tools with that effect at all: no behavior was asked, the tool never ran"
	case engine.ByFloor:
		return "the host's floor said no after every guard let the call through: the tool never ran"
	}
	return "the tool never ran"
}

func runDemo(ctx context.Context, cfg *config.Config, script *demoScript, out *demoOut) error {
	reads := map[string]any{}
	for k, v := range script.World.Reads {
		reads[k] = v
	}
	e, err := engine.New(ctx, engine.Options{Config: cfg,
		Read: func(_ context.Context, key string) (any, error) { return reads[key], nil }})
	if err != nil {
		return err
	}
	defer e.Close()
	names := make([]string, 0, len(script.World.Tools))
	for name := range script.World.Tools {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t := script.World.Tools[name]
		result := t.Result
		if err := e.RegisterTool(engine.HostTool{Path: name, Effects: t.Effect,
			Core: func(context.Context, engine.CoreCall) (any, error) { return result, nil }}); err != nil {
			return err
		}
	}
	st := e.Store()
	kind, target, _ := config.ParseStore(cfg.Engine.Store, cfg.Dir)
	out.event("store", map[string]any{"kind": kind, "target": target}, "attune demo · store %s %s", kind, target)

	insts := map[string]*engine.Instance{}
	for _, d := range script.Instances {
		_, perr := pin.Load(ctx, st, d.ID)
		continuing := perr == nil
		if perr != nil && !errors.Is(perr, store.ErrNotFound) {
			return perr
		}
		i, err := e.Start(ctx, engine.StartOptions{ID: d.ID, Bot: d.Bot})
		if err != nil {
			return err
		}
		insts[d.ID] = i
		turn := i.Turn().Turn
		var progs []string
		for _, p := range i.Pin().Programs {
			progs = append(progs, p.Name+"@"+p.SHA256[:8])
		}
		if continuing {
			out.event("continue", map[string]any{"instance": d.ID, "bot": d.Bot, "session": i.Session(), "turns": turn, "pin": progs},
				"continuing %s (bot %s): stored pin %s, session %s, %d turns so far", d.ID, d.Bot, strings.Join(progs, " "), i.Session(), turn)
		} else {
			out.event("start", map[string]any{"instance": d.ID, "bot": d.Bot, "session": i.Session(), "pin": progs},
				"started %s (bot %s): pinned %s, new session %s", d.ID, d.Bot, strings.Join(progs, " "), i.Session())
		}
	}

	for _, t := range script.Turns {
		i, ok := insts[t.Instance]
		if !ok {
			return fmt.Errorf("turn for %q: no such instance in the script", t.Instance)
		}
		out.event("turn", map[string]any{"instance": t.Instance, "input": t.Input}, "\n── %s · %q", t.Instance, t.Input)
		for _, c := range t.Commands {
			r := i.Command(ctx, c.Name, c.Text)
			out.event("command", map[string]any{"instance": t.Instance, "name": c.Name, "text": c.Text, "status": r.Status, "error": r.Error, "notes": noteLines(r.Notes)},
				"  /%s %s → %s%s", c.Name, c.Text, r.Status, errSuffix(r.Error))
		}
		next := i.Turn().Turn
		next++
		for _, m := range t.Methods {
			demoMethodCall(ctx, out, i, withTurn(m, next), "  ")
		}
		b, err := i.BeginTurn(ctx, engine.TurnInput{Input: t.Input})
		if err != nil {
			return err
		}
		turn := i.Turn().Turn
		out.event("turn-begin", map[string]any{"instance": t.Instance, "turn": turn, "status": b.Status, "notes": noteLines(b.Notes)},
			"  turn %d begins (%s)", turn, b.Status)
		out.notes("    ", "turn-start notes", b.Notes)
		if b.Status != engine.StatusOK {
			continue
		}
		for k := 0; k < script.MaxRounds; k++ {
			rb, err := i.BeginRound(ctx)
			if err != nil {
				return err
			}
			out.event("round-begin", map[string]any{"instance": t.Instance, "round": rb.Round, "status": rb.Status, "placed": noteLines(rb.Notes)},
				"  round %d", rb.Round)
			out.notes("    ", "placed into the model call", rb.Notes)
			reply, hostContinue := "", false
			if k < len(t.Rounds) {
				r := t.Rounds[k]
				reply, hostContinue = r.Output, r.HostContinue
				for _, tc := range r.Tools {
					o := i.Tool(ctx, engine.ToolCall{Path: tc.Path, Args: tc.Args, CallID: tc.CallID})
					out.event("tool", map[string]any{"instance": t.Instance, "path": tc.Path, "args": tc.Args, "status": o.Status,
						"result": o.Result, "diagnostics": o.Diagnostics, "refused_by": o.RefusedBy, "reason": o.Reason, "error": o.Error},
						"    tool %s %s → %s", tc.Path, brief(tc.Args), outcomeText(o))
				}
				for _, m := range r.Methods {
					demoMethodCall(ctx, out, i, withTurn(m, next), "    ")
				}
			}
			if reply != "" {
				out.event("model", map[string]any{"instance": t.Instance, "output": reply}, "    model: %q", reply)
			}
			var output *string
			if reply != "" {
				output = &reply
			}
			re, err := i.EndRound(ctx, engine.RoundEnd{HostContinue: hostContinue, Output: output})
			if err != nil {
				return err
			}
			why := "stop"
			if re.Continue {
				why = "continue"
				if !hostContinue {
					why += " (an activating note asked)"
				}
			}
			out.event("round-end", map[string]any{"instance": t.Instance, "round": re.Round, "status": re.Status, "error": re.Error,
				"notes": noteLines(re.Notes), "continue": re.Continue, "host_continue": hostContinue},
				"    round end%s: %s", errSuffix(re.Error), why)
			out.notes("    ", "notes", re.Notes)
			if !re.Continue {
				break
			}
		}
		te, err := i.EndTurn(ctx)
		if err != nil {
			return err
		}
		var le []map[string]any
		if te.LoopEnd != nil {
			le = noteLines(te.LoopEnd.Notes)
		}
		out.event("turn-end", map[string]any{"instance": t.Instance, "turn": te.Turn, "notes": noteLines(te.Notes), "loop_end": le},
			"  turn %d ends%s", te.Turn, leftNotes(len(le)))
	}

	out.event("states", map[string]any{}, "\n── final states")
	for _, d := range script.Instances {
		i := insts[d.ID]
		seen := map[string]bool{}
		for _, p := range i.Pin().Programs {
			for _, owner := range demoOwners[p.Name] {
				if seen[owner] {
					continue
				}
				seen[owner] = true
				state, rev, err := i.State(ctx, owner)
				if err != nil {
					out.event("state", map[string]any{"instance": d.ID, "owner": owner, "error": err.Error()}, "  %s %s: %v", d.ID, owner, err)
					continue
				}
				out.event("state", map[string]any{"instance": d.ID, "owner": owner, "revision": rev, "state": state},
					"  %s %s (revision %d): %s", d.ID, owner, rev, brief(state))
			}
		}
	}
	return nil
}

// demoOwners are the owners of the engine's pack the demo shows.
var demoOwners = map[string][]string{
	"goal":    {"goal"},
	"fusion":  {"fusion"},
	"tasks":   {"tasks", "tasks@project"},
	"offload": {"offload@project"},
}

func demoMethodCall(ctx context.Context, out *demoOut, i *engine.Instance, m demoMethod, indent string) {
	o := i.Method(ctx, engine.MethodCall{Owner: m.Owner, Method: m.Method, Input: m.Input, CallID: m.CallID, HostAuthority: m.HostAuthority})
	text := "ok " + brief(o.Result)
	switch o.Status {
	case engine.StatusRefused:
		text = fmt.Sprintf("refused by %s: %s", o.RefusedBy, o.Reason)
	case engine.StatusFailed:
		text = "failed: " + o.Error
	}
	auth := ""
	if m.HostAuthority {
		auth = " (host authority)"
	}
	out.event("method", map[string]any{"instance": i.ID(), "owner": m.Owner, "method": m.Method, "input": m.Input, "status": o.Status,
		"result": o.Result, "refused_by": o.RefusedBy, "reason": o.Reason, "error": o.Error, "revision": o.Revision},
		"%shost calls %s.%s%s → %s", indent, m.Owner, m.Method, auth, text)
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

// withTurn replaces "{turn}" in a method's string inputs with the turn number.
func withTurn(m demoMethod, turn int) demoMethod {
	var sub func(v any) any
	sub = func(v any) any {
		switch x := v.(type) {
		case string:
			return strings.ReplaceAll(x, "{turn}", fmt.Sprint(turn))
		case map[string]any:
			c := map[string]any{}
			for k, e := range x {
				c[k] = sub(e)
			}
			return c
		case []any:
			c := make([]any, len(x))
			for k, e := range x {
				c[k] = sub(e)
			}
			return c
		}
		return v
	}
	m.Input = sub(m.Input)
	return m
}

// leftNotes says what the behaviors left for the host to show once the
// agent's loop is over.
func leftNotes(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return ": the behaviors left 1 note for the host to show now that the agent has stopped"
	}
	return fmt.Sprintf(": the behaviors left %d notes for the host to show now that the agent has stopped", n)
}
