package scenario

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/session"
)

// Recording a session: Record turns a stored session (engine.LoadSession)
// into a scenario file that replays it against the fake host:
//
//   - [config] is the bot's settings from the configuration the session ran
//     with (ceiling, grants, retry budget, floor marks, project, budget); its
//     behaviors are the programs the session's pin names, in pin order, and
//     each program's configuration is the pinned one.
//   - [programs] holds every pinned source, by content, and the command
//     files the session invoked: nothing is read from a pack.
//   - [host.tools."PATH"] answers each host core call by call from the
//     journal (answers), [host.read_answers] each admit/read; a tool's
//     effects are not in the journal (the host declared them in code) and
//     are written as [], which any ceiling admits.
//   - [owners."NAME@SCOPE"] puts back what the session found in its project
//     and global owners when its first turn began.
//   - every journaled boundary, tool call, method call, command and note
//     consumption is a step, with its recorded outcome as the expectation:
//     status, result, error, reason, refused_by, the notes a boundary
//     emitted or placed, the continuation decision.
//
// A journal holds what happened inside turns: tool and method calls made
// while no turn was open are not in it, so they are not steps.

// RecordOptions name where a recording comes from, for its header.
type RecordOptions struct {
	// Config is the configuration the session ran with (bots, floor,
	// engine settings). Required.
	Config *config.Config
	// Engine is an engine on the session's store (shared owners are read
	// through it). Required.
	Engine *engine.Engine
	// Source names the store in the header comment.
	Source string
}

// ErrRecord marks a session that cannot be recorded as a scenario.
var ErrRecord = errors.New("cannot record the session")

// Record writes the scenario file of a recorded session.
func Record(ctx context.Context, rec *engine.Recording, o RecordOptions) ([]byte, error) {
	if len(rec.Instances) != 1 {
		var ids []string
		for _, in := range rec.Instances {
			ids = append(ids, in.ID)
		}
		return nil, fmt.Errorf("session %s: %w: %d instances share it (%s); record one of them by its instance id",
			rec.Session, ErrRecord, len(ids), strings.Join(ids, ", "))
	}
	in := rec.Instances[0]
	if len(in.Entries) == 0 {
		return nil, fmt.Errorf("session %s: %w: its journal is empty (no turn, host method call or command ran in it)", rec.Session, ErrRecord)
	}
	cfg := o.Config
	bot, ok := cfg.Bots[in.Bot]
	if !ok {
		return nil, fmt.Errorf("session %s: %w: it ran bot %s, which %s does not configure; pass the configuration it ran with (--config)",
			rec.Session, ErrRecord, in.Bot, orText(cfg.File, "the configuration"))
	}
	st := o.Engine.Store()
	w := &tomlWriter{}
	w.comment(fmt.Sprintf("Recorded by `attune record` from session %s (instance %s, bot %s)%s.", rec.Session, in.ID, in.Bot, orText(prefixed(" in ", o.Source), "")))
	w.comment("It replays the session against the scenario's fake host: the pinned programs")
	w.comment("inline, host reads and tool cores answered from the journal, every step")
	w.comment("expecting what the session recorded. Edit a behavior and the step that")
	w.comment("decides differently fails.")
	w.kv("name", "recorded: session "+rec.Session)
	w.line("")

	// the configuration
	w.table("config.engine")
	w.kv("project", orText(cfg.Engine.Project, config.DefaultProject))
	if cfg.Engine.CallbackBudget > 0 {
		w.kv("callback_budget", cfg.Engine.CallbackBudget.String())
	}
	if len(cfg.Floor.RefuseMarks) > 0 {
		w.table("config.floor")
		w.kv("refuse_marks", stringsAny(cfg.Floor.RefuseMarks))
	}
	botKey := "config.bots." + tomlKey(in.Bot)
	w.table(botKey)
	var behaviors []any
	for _, pr := range in.Pin.Programs {
		behaviors = append(behaviors, pr.Name)
	}
	w.kv("behaviors", orEmpty(behaviors))
	w.kv("ceiling", stringsAny(bot.Ceiling))
	w.kv("grants", stringsAny(bot.Grants))
	w.kv("retry_budget", float64(bot.RetryBudget))
	for _, pr := range in.Pin.Programs {
		pc, err := pin.Config(ctx, st, pr)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", rec.Session, err)
		}
		if len(pc) == 0 {
			continue
		}
		w.table(botKey + ".config." + tomlKey(pr.Name))
		for _, k := range sortedKeys(pc) {
			w.kv(k, pc[k])
		}
	}

	// the programs, by content
	w.table("programs")
	for _, pr := range in.Pin.Programs {
		src, err := pin.Source(ctx, st, pr.Name, pr.SHA256)
		if err != nil {
			return nil, fmt.Errorf("session %s: program %s (%s, sha256 %s) is pinned but its source is not in the store: %w", rec.Session, pr.Name, pr.File, pr.SHA256, err)
		}
		w.raw(tomlKey(pr.File), multiline(string(src)))
	}
	invoked := map[string]bool{}
	for _, en := range in.Entries {
		if en.Type == session.Command {
			invoked[en.Name] = true
		}
	}
	for _, c := range in.Pin.Commands {
		if !invoked[c.Name] {
			continue
		}
		src, err := pin.Source(ctx, st, "commands/"+c.Name, c.SHA256)
		if err != nil {
			return nil, fmt.Errorf("session %s: command /%s (%s, sha256 %s) is pinned but its source is not in the store: %w", rec.Session, c.Name, c.File, c.SHA256, err)
		}
		w.raw(tomlKey(c.File), multiline(string(src)))
	}

	steps, host, err := recordSteps(rec.Session, in)
	if err != nil {
		return nil, err
	}

	// the host, answered from the journal
	for _, p := range host.toolOrder {
		w.table("host.tools." + tomlKey(p))
		w.comment("effects are not journaled: [] passes every ceiling")
		w.kv("effect", []any{})
		w.kv("answers", answersAny(host.tools[p], "result"))
	}
	if len(host.reads) > 0 {
		w.table("host.read_answers")
		for _, k := range sortedKeys(host.reads) {
			w.kv(k, answersAny(host.reads[k], "value"))
		}
	}

	// shared owners as the session found them
	if revs := firstRevs(in.Entries); len(revs) > 0 {
		for _, addr := range sortedKeys(revs) {
			entries, err := o.Engine.SharedOwnerEntries(ctx, addr, revs[addr])
			if err != nil {
				return nil, fmt.Errorf("session %s: owner %s: %w", rec.Session, addr, err)
			}
			if len(entries) == 0 {
				continue
			}
			w.table("owners." + tomlKey(addr))
			w.kv("entries", entries)
		}
	}

	// the steps
	start := map[string]any{"op": "start", "instance": in.ID, "bot": in.Bot, "session": rec.Session}
	if in.Kind != "" {
		start["kind"] = in.Kind
	}
	w.step(start, nil, []string{"op", "instance", "bot", "kind", "session"})
	for _, s := range steps {
		w.step(s.keys, s.expect, s.order)
	}
	return []byte(w.b.String()), nil
}

// firstRevs are the shared owners' revisions the session's first call
// found (the first entry that carries them).
func firstRevs(entries []session.Entry) map[string]int64 {
	for _, en := range entries {
		switch en.Type {
		case session.TurnBegin, session.Method, session.Command:
			if en.Revs != nil {
				return en.Revs
			}
		}
	}
	return nil
}

type recStep struct {
	keys   map[string]any
	order  []string
	expect map[string]any
	notes  []any // the notes it is expected to return
}

type recHost struct {
	tools     map[string][]Answer
	toolOrder []string
	reads     map[string][]Answer
}

// recordSteps walks a journal's steps (engine.JournalSteps) into scenario
// steps and the host's answers.
func recordSteps(sess string, in engine.RecordedInstance) ([]*recStep, *recHost, error) {
	host := &recHost{tools: map[string][]Answer{}, reads: map[string][]Answer{}}
	addTool := func(p string) {
		if _, ok := host.tools[p]; !ok {
			host.tools[p] = []Answer{}
			host.toolOrder = append(host.toolOrder, p)
		}
	}
	notes := map[string]session.Note{}
	for _, en := range in.Entries {
		if en.Type == session.Emit && en.Note != nil {
			notes[en.Note.ID] = *en.Note
		}
	}
	var steps []*recStep
	add := func(keys map[string]any, order ...string) *recStep {
		s := &recStep{keys: keys, order: append([]string{"op"}, order...), expect: map[string]any{}}
		steps = append(steps, s)
		return s
	}
	var placing *recStep // a round-begin: the consumptions right after it are its placed notes
	// a note the host placed before the step that emitted it was recorded
	// (a guard's note under attune hook, placed with its PreToolUse answer:
	// the call's step is journaled at its end) is consumed right after
	// that step
	seen := map[string]bool{}
	var deferred []string
	window := func(win []session.Entry) {
		for _, w := range win {
			switch w.Type {
			case session.Consume:
				if _, known := notes[w.ID]; known && !seen[w.ID] {
					deferred = append(deferred, w.ID)
					continue
				}
				if placing != nil {
					if n, ok := notes[w.ID]; ok {
						placing.notes = append(placing.notes, noteWant(n))
						continue
					}
				}
				add(map[string]any{"op": "consume", "note": w.ID}, "note")
			case session.Read:
				host.reads[w.Key] = append(host.reads[w.Key], answerOf(w.Value, w.Error))
			case session.Core:
				addTool(w.Path)
				host.tools[w.Path] = append(host.tools[w.Path], answerOf(w.Value, w.Error))
			case session.Repin:
				// the turn-begin that follows names another pin: refused below
			}
			if w.Type != session.Consume {
				placing = nil
			}
		}
		placing = nil
	}
	js, tail := engine.JournalSteps(in.Entries)
	pinSHA := ""
	for _, st := range js {
		var still []string
		for _, id := range deferred {
			if seen[id] {
				add(map[string]any{"op": "consume", "note": id}, "note")
			} else {
				still = append(still, id)
			}
		}
		deferred = still
		window(st.Window)
		for _, n := range st.Notes {
			seen[n.ID] = true
		}
		en := st.Entry
		if en.NotPlain != "" {
			// a step refused before it ran, for a host value with no JSON
			// form the journal left out: it changed nothing, and a scenario
			// cannot give that value again
			continue
		}
		if isBoundary(en.Type) && en.Status == engine.StatusOK && en.Error != "" {
			en.Status = engine.StatusFailed // it opened, and a hook threw
		}
		emitted := []any{}
		for _, n := range st.Notes {
			emitted = append(emitted, noteWant(n))
		}
		switch en.Type {
		case session.TurnBegin:
			if en.Pin != "" && pinSHA != "" && en.Pin != pinSHA {
				return nil, nil, fmt.Errorf("session %s, instance %s: %w: it was re-attuned before turn %d (a new pin applied at its start); a recording replays one pin",
					sess, in.ID, ErrRecord, en.Turn)
			}
			if en.Pin != "" {
				pinSHA = en.Pin
			}
			keys := map[string]any{"op": "turn-begin"}
			if en.Input != nil {
				keys["input"] = en.Input
			}
			if en.ContextFresh {
				keys["context_fresh"] = true
			}
			s := add(withHarness(keys, en), "input", "context_fresh", "harness")
			outcomeExpect(s, en.Status, nil, en.Error, en.Reason, "")
			if en.Status != engine.StatusRefused {
				s.notes = emitted
			}
		case session.RoundBegin:
			s := add(withHarness(map[string]any{"op": "round-begin"}, en), "harness")
			outcomeExpect(s, en.Status, nil, en.Error, en.Reason, "")
			if en.Status != engine.StatusRefused {
				s.notes = []any{}
				placing = s
			}
		case session.RoundEnd:
			keys := map[string]any{"op": "round-end", "host_continue": en.HostContinue}
			if en.Output != nil {
				keys["output"] = *en.Output
			}
			s := add(withHarness(keys, en), "host_continue", "output", "harness")
			outcomeExpect(s, en.Status, nil, en.Error, "", "")
			s.notes = emitted
			s.expect["continue"] = en.Continue
		case session.TurnEnd:
			s := add(withHarness(map[string]any{"op": "turn-end"}, en), "harness")
			outcomeExpect(s, en.Status, nil, en.Error, "", "")
			s.notes = emitted
		case session.Tool:
			addTool(en.Path)
			keys := map[string]any{"op": "tool", "path": en.Path}
			if en.Value != nil {
				keys["args"] = en.Value
			}
			if en.CallID != "" {
				keys["call_id"] = en.CallID
			}
			s := add(withHarness(keys, en), "path", "args", "call_id", "harness")
			outcomeExpect(s, en.Status, en.Result, en.Error, en.Reason, en.RefusedBy)
			if en.Status == engine.StatusOK && en.Diagnostics != nil {
				s.expect["diagnostics"] = stringsAny(en.Diagnostics)
			}
		case session.Method:
			keys := map[string]any{"op": "method", "owner": en.Owner, "method": en.Name}
			if en.Value != nil {
				keys["input"] = en.Value
			}
			if en.CallID != "" {
				keys["call_id"] = en.CallID
			}
			if en.Auth {
				keys["host_authority"] = true
			}
			s := add(keys, "owner", "method", "input", "call_id", "host_authority")
			outcomeExpect(s, en.Status, en.Result, en.Error, en.Reason, en.RefusedBy)
		case session.Command:
			s := add(map[string]any{"op": "command", "name": en.Name, "text": textOf(en.Input)}, "name", "text")
			outcomeExpect(s, en.Status, nil, en.Error, "", "")
			s.notes = emitted
		}
	}
	window(tail)
	for _, s := range steps {
		if s.notes != nil {
			s.expect["notes"] = s.notes
		}
	}
	return steps, host, nil
}

func isBoundary(t string) bool {
	switch t {
	case session.TurnBegin, session.RoundBegin, session.RoundEnd, session.TurnEnd:
		return true
	}
	return false
}

func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// outcomeExpect writes a recorded outcome as expectations. A journal
// written before outcomes were recorded has no status: nothing is expected
// then but that the step is ok.
func outcomeExpect(s *recStep, status engine.Status, result any, errText, reason, by string) {
	if status != "" && status != engine.StatusOK {
		s.expect["status"] = string(status)
	}
	if status == engine.StatusOK && result != nil {
		s.expect["result"] = result
	}
	if errText != "" {
		s.expect["error"] = firstLine(errText)
	}
	if reason != "" {
		s.expect["reason"] = reason
	}
	if by != "" && contains(refusers, by) {
		s.expect["refused_by"] = by
	}
}

func noteWant(n session.Note) any {
	return map[string]any{"kind": n.Kind, "text": n.Text}
}

func answerOf(v any, errText string) Answer {
	if errText != "" {
		return Answer{Fail: errText, HasFail: true}
	}
	return Answer{Value: v}
}

func answersAny(as []Answer, valueKey string) []any {
	out := []any{}
	for _, a := range as {
		m := map[string]any{}
		switch {
		case a.HasFail:
			m["fail"] = a.Fail
		case a.Value != nil:
			m[valueKey] = a.Value
		}
		out = append(out, m)
	}
	return out
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// tomlWriter writes the scenario text: tables, keys and [[step]] tables
// in a fixed order, values as TOML.
type tomlWriter struct {
	b strings.Builder
}

func (w *tomlWriter) line(s string) { w.b.WriteString(s + "\n") }

func (w *tomlWriter) comment(s string) { w.line("# " + s) }

func (w *tomlWriter) table(name string) { w.line("\n[" + name + "]") }

func (w *tomlWriter) kv(k string, v any) { w.raw(tomlKey(k), tomlValue(v)) }

func (w *tomlWriter) raw(k, v string) { w.line(k + " = " + v) }

func (w *tomlWriter) step(keys, expect map[string]any, order []string) {
	w.line("\n[[step]]")
	for _, k := range order {
		if v, ok := keys[k]; ok && v != nil {
			w.kv(k, v)
		}
	}
	if len(expect) > 0 {
		w.raw("expect", tomlValue(expect))
	}
}

var bareKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

func tomlKey(k string) string {
	if bareKey().MatchString(k) {
		return k
	}
	return tomlString(k)
}

// tomlString is a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// multiline writes a program's source as a literal multi-line string when
// it can be one, else as a basic string.
func multiline(src string) string {
	ok := !strings.Contains(src, "'''") && !strings.HasSuffix(src, "'")
	for _, r := range src {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || r == '\r' {
			ok = false
		}
	}
	if !ok {
		return tomlString(src)
	}
	return "'''\n" + src + "'''"
}

// tomlValue writes plain data as an inline TOML value. nil inside a list
// (which TOML cannot write) becomes an empty table.
func tomlValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "{}"
	case string:
		return tomlString(x)
	case bool:
		return strconv.FormatBool(x)
	case map[string]any:
		if len(x) == 0 {
			return "{}"
		}
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			if x[k] == nil {
				continue
			}
			parts = append(parts, tomlKey(k)+" = "+tomlValue(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tomlValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		return tomlValue(stringsAny(x))
	case time.Duration:
		return tomlString(x.String())
	}
	if n, ok := luabind.ToNumber(v); ok {
		switch {
		case math.IsNaN(n):
			return "nan"
		case math.IsInf(n, 1):
			return "inf"
		case math.IsInf(n, -1):
			return "-inf"
		case n == math.Trunc(n) && math.Abs(n) < 1e15:
			return strconv.FormatInt(int64(n), 10)
		}
		s := strconv.FormatFloat(n, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	}
	return tomlString(fmt.Sprint(v))
}

// withHarness adds to a step's keys the harness data its entry recorded.
func withHarness(keys map[string]any, en session.Entry) map[string]any {
	if en.Harness != nil {
		keys["harness"] = en.Harness
	}
	return keys
}
