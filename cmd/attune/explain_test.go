package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const explainProtect = `
guard.tool("claude/*", function(call, invoke)
  local p = call.args.file_path or ""
  if string.find(p, "%.env$") then
    return refuse("protect: " .. p .. " holds secrets")
  end
  return invoke()
end)

hook.tool("**", {post = function(c, out) end})
`

func explainProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pack"), 0o755)
	os.WriteFile(filepath.Join(dir, "pack", "protect.lua"), []byte(explainProtect), 0o644)
	os.WriteFile(filepath.Join(dir, "attune.toml"), []byte(`
[engine]
packs = ["pack"]

[bots.main]
behaviors = ["protect"]
ceiling = ["read", "write", "exec", "network", "spawn"]

[harness.claude]
bot = "main"
`), 0o644)
	return filepath.Join(dir, "attune.toml")
}

var callIDs = regexp.MustCompile(`\(claude/s1:[a-z0-9]+:1\)`)

// attune explain claude < event.json prints the decision path of a denied
// PreToolUse, and leaves no store behind (R4.3, R4.11).
func TestExplainDeniedPreToolUse(t *testing.T) {
	cfg := explainProject(t)
	ev := `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/.env"},"tool_use_id":"tu1"}`
	var out, errb bytes.Buffer
	if code := explainMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := callIDs.ReplaceAllString(out.String(), "(CALL)")
	got = strings.ReplaceAll(got, cfg, "CONFIG")
	want := `event: claude PreToolUse, session s1
tool: Read
configuration: CONFIG (bot main)
call claude/Read (CALL):
  ceiling: the tool's effects are inside the bot's ceiling
  registrations matching claude/Read, in pin order:
    1. guard/tool "claude/*" of protect at protect.lua:2
    2. hook/tool "**" of protect at protect.lua:10
  guard "claude/*" at protect.lua:2: refused: protect: /p/.env holds secrets
  outcome: refused by the guard at protect.lua:2: protect: /p/.env holds secrets
answer: {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"protect: /p/.env holds secrets"}}
why: the guard at protect.lua:2 refused the call, so the agent is told to deny it, with the guard's reason
(run against a scratch copy of the store: nothing was changed)
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), ".attune")); !os.IsNotExist(err) {
		t.Fatalf("explain left a store folder: %v", err)
	}
}

// An event that is let through says so; a bad dialect is named.
func TestExplainAllowedAndBadDialect(t *testing.T) {
	cfg := explainProject(t)
	ev := `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.txt"},"tool_use_id":"tu2"}`
	var out, errb bytes.Buffer
	explainMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb)
	for _, w := range []string{`guard "claude/*" at protect.lua:2: invoked the rest of the chain`, "floor: pass", "core: pending", "outcome: allowed: the agent runs the tool", "why: every guard invoked the rest of the chain"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	errb.Reset()
	if code := explainMain([]string{"clade"}, strings.NewReader("{}"), &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown dialect "clade"`) {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

// attune inspect refuses a listen address that is not loopback, and
// --json prints a recorded session's timeline.
func TestInspectCmd(t *testing.T) {
	if code, _, errOut := run("inspect", "--listen", "0.0.0.0:8788"); code != 2 || !strings.Contains(errOut, "not a loopback address") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cfg := explainProject(t)
	ev := `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/.env"},"tool_use_id":"tu1"}`
	var out, errb bytes.Buffer
	if code := hookMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb); code != 0 {
		t.Fatalf("hook: %d %s", code, errb.String())
	}
	code, js, errOut := run("inspect", "--json", "--config", cfg, "claude/s1")
	if code != 0 || !strings.Contains(js, `"refused_at":"protect.lua:2"`) || !strings.Contains(js, `"reason":"protect: /p/.env holds secrets"`) {
		t.Fatalf("exit %d: %s\n%s", code, errOut, js)
	}
	code, js, _ = run("inspect", "--json", "--config", cfg)
	if code != 0 || !strings.Contains(js, `"session": "claude/s1/s1"`) {
		t.Fatalf("list: exit %d\n%s", code, js)
	}
}

// What behaviors log under attune hook goes to the session's log file
// beside the store, and to stderr with ATTUNE_DEBUG=1.
func TestHookLogFile(t *testing.T) {
	cfg := explainProject(t)
	dir := filepath.Dir(cfg)
	os.WriteFile(filepath.Join(dir, "pack", "protect.lua"), []byte(explainProtect+"\nhook.turn(\"start\", function(b) log(\"warn\", \"turn begins\") end)\n"), 0o644)
	ev := `{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}`
	var out, errb bytes.Buffer
	t.Setenv("ATTUNE_DEBUG", "1")
	if code := hookMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb); code != 0 {
		t.Fatalf("hook: %d %s", code, errb.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, ".attune", "logs", "claude_s1_s1.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "claude/s1 turn 1 round 0 protect [warn] turn begins\n") {
		t.Fatalf("log file:\n%s", data)
	}
	if !strings.Contains(errb.String(), "attune: ") || !strings.Contains(errb.String(), "[warn] turn begins") {
		t.Fatalf("stderr with ATTUNE_DEBUG=1:\n%s", errb.String())
	}
}

// inspect --json SESSION prints the whole timeline; --offset/--limit and
// --page N cut it; bad combinations are named.
func TestInspectCmdPages(t *testing.T) {
	cfg := explainProject(t)
	for _, ev := range []string{
		`{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}`,
		`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/.env"},"tool_use_id":"tu1"}`,
		`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.txt"},"tool_use_id":"tu2"}`,
	} {
		var out, errb bytes.Buffer
		if code := hookMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb); code != 0 {
			t.Fatalf("hook: %d %s", code, errb.String())
		}
	}
	type page struct {
		Total, Offset, Limit int
		Events               []struct{ Seq int }
	}
	get := func(args ...string) page {
		t.Helper()
		code, js, errOut := run(append([]string{"inspect", "--json", "--config", cfg}, args...)...)
		var p page
		if code != 0 || json.Unmarshal([]byte(js), &p) != nil {
			t.Fatalf("%v: exit %d: %s\n%s", args, code, errOut, js)
		}
		return p
	}
	all := get("claude/s1")
	if all.Total < 4 || len(all.Events) != all.Total || all.Offset != 0 || all.Limit != all.Total {
		t.Fatalf("whole session: %+v", all)
	}
	if p := get("--offset", "1", "claude/s1"); len(p.Events) != all.Total-1 || p.Events[0].Seq != 1 {
		t.Fatalf("--offset 1: %+v", p)
	}
	if p := get("--offset", "1", "--limit", "2", "claude/s1"); len(p.Events) != 2 || p.Events[0].Seq != 1 || p.Limit != 2 {
		t.Fatalf("--offset 1 --limit 2: %+v", p)
	}
	if p := get("--page", "2", "--limit", "2", "claude/s1"); len(p.Events) != min(2, all.Total-2) || p.Events[0].Seq != 2 || p.Offset != 2 {
		t.Fatalf("--page 2 --limit 2: %+v", p)
	}
	if p := get("--page", "1", "claude/s1"); len(p.Events) != all.Total || p.Limit != 500 {
		t.Fatalf("--page 1: %+v", p)
	}
	for _, bad := range [][]string{{"--page", "2", "--offset", "1", "claude/s1"}, {"--page", "-1", "claude/s1"}, {"--page", "1"}} {
		if code, _, errOut := run(append([]string{"inspect", "--json", "--config", cfg}, bad...)...); code != 2 || !strings.Contains(errOut, "--") {
			t.Errorf("%v: exit %d: %s", bad, code, errOut)
		}
	}
}

// explain --session ID --call CALL_ID prints what the journal holds of a
// recorded call, each guard's verdict included, then the replayed chain
// (R4.3).
func TestExplainRecordedCall(t *testing.T) {
	cfg := explainProject(t)
	for _, ev := range []string{
		`{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}`,
		`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/.env"},"tool_use_id":"tu1"}`,
		`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.txt"},"tool_use_id":"tu2"}`,
	} {
		var out, errb bytes.Buffer
		if code := hookMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb); code != 0 {
			t.Fatalf("hook: %d %s", code, errb.String())
		}
	}
	for _, c := range []struct {
		call string
		want []string
	}{
		{"tu1", []string{"recorded in the journal:", "  guards: refuse (the guard at protect.lua:2): protect: /p/.env holds secrets",
			`    guard "claude/*" at protect.lua:2: refused: protect: /p/.env holds secrets`, "outcome: refused by the guard at protect.lua:2"}},
		{"tu2", []string{"  guards: pass\n", `    guard "claude/*" at protect.lua:2: invoked the rest of the chain`, "outcome: allowed: the agent runs the tool"}},
	} {
		var out, errb bytes.Buffer
		if code := explainMain([]string{"--session", "claude/s1", "--call", c.call, "--config", cfg}, nil, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.call, code, errb.String())
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", c.call, w, out.String())
			}
		}
	}
}

// A project with a turn guard, a turn-start hook that notifies, and a
// round-end gate that asks the loop to go on once.
const explainGate = `
guard.turn(function(b, invoke)
  if type(b.input) == "string" and string.find(b.input, "rm %-rf") then
    return refuse("gate: no rm -rf prompts")
  end
  return invoke()
end)

hook.turn("start", function(b)
  notify("Mind the secrets in .env files.")
end)

hook.round("end", function(b)
  if b.round == 1 then
    notify("the tests fail: fix them before you stop", "activating")
  end
end)
`

func explainGateProject(t *testing.T) string {
	t.Helper()
	cfg := explainProject(t)
	os.WriteFile(filepath.Join(filepath.Dir(cfg), "pack", "gate.lua"), []byte(explainGate), 0o644)
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(data), `behaviors = ["protect"]`, `behaviors = ["protect", "gate"]`, 1)), 0o644)
	return cfg
}

var boundaryIDs = regexp.MustCompile(`\(claude/s1/s1/claude/s1:[^)]*\)`)

// attune explain claude < prompt.json prints a turn's and a round's
// decision path: the turn guard that matched and what it returned, the
// turn-start hook and the note it emitted, the round start placing it
// into the model's context, and why the answer is what it is (R3.1, R3.2,
// R3.7).
func TestExplainPromptBoundary(t *testing.T) {
	cfg := explainGateProject(t)
	var out, errb bytes.Buffer
	ev := `{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"read the config"}`
	if code := explainMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := boundaryIDs.ReplaceAllString(strings.ReplaceAll(out.String(), cfg, "CONFIG"), "(ID)")
	for _, w := range []string{
		"turn/start (ID):\n  registrations of turn/start, in pin order:\n    1. guard/turn of gate at gate.lua:2\n    2. hook/turn \"start\" of gate at gate.lua:9\n",
		"  guard/turn of gate at gate.lua:2: invoked the rest of the chain\n",
		"  hook \"start\" of gate at gate.lua:9: ran, emitted 1 note: ambient \"Mind the secrets in .env files.\" (from gate)\n",
		"  outcome: ok: the turn opens\n",
		"round/start (ID):\n  registrations of round/start: none\n",
		"  placed into the round's model call: 1 note: ambient \"Mind the secrets in .env files.\" (from gate)\n",
		"why: the round start placed 1 note(s) into the model's context",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
	// a refused prompt: the guard's refusal and why the prompt is blocked
	out.Reset()
	ev = `{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"rm -rf ~ please"}`
	if code := explainMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, w := range []string{
		"  guard/turn of gate at gate.lua:2: refused: gate: no rm -rf prompts\n",
		"  outcome: refused by the guard: gate: no rm -rf prompts (the turn does not open)\n",
		`"decision":"block"`,
		"why: the guard/turn at gate.lua:2 refused turn/start, so the agent is told to block it, with the guard's reason",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("refused prompt: output lacks %q:\n%s", w, out.String())
		}
	}
}

// attune explain claude < stop.json prints the round end's decision: the
// round-end hook that matched, the activating note it emitted, why the
// loop continues, and the answer that keeps the agent going (R3.4, R3.6).
func TestExplainStopBoundary(t *testing.T) {
	cfg := explainGateProject(t)
	var out, errb bytes.Buffer
	if code := hookMain([]string{"claude", "--config", cfg}, strings.NewReader(`{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}`), &out, &errb); code != 0 {
		t.Fatalf("hook: %d %s", code, errb.String())
	}
	out.Reset()
	ev := `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false}`
	if code := explainMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := boundaryIDs.ReplaceAllString(out.String(), "(ID)")
	for _, w := range []string{
		"round/end (ID):\n  registrations of round/end, in pin order:\n    1. hook/round \"end\" of gate at gate.lua:13\n",
		"  hook \"end\" of gate at gate.lua:13: ran, emitted 1 note: activating \"the tests fail: fix them before you stop\" (from gate)\n",
		"  outcome: ok; the loop continues: an activating note of this round end asks for it\n",
		`"decision":"block"`,
		"why: an activating note of the round end (from gate) asks the loop to continue",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
	// nothing was written: the session's journal is as the prompt left it
	code, js, _ := run("inspect", "--json", "--config", cfg, "claude/s1")
	if code != 0 || strings.Contains(js, `"kind":"round-end"`) {
		t.Fatalf("explain changed the store: exit %d\n%s", code, js)
	}
}

// explain --session ID --turn N [--round M] prints what the journal holds
// of a recorded turn or round, then its boundaries replayed step by step,
// without changing the store (R3.1, R3.6, R3.10).
func TestExplainRecordedTurn(t *testing.T) {
	cfg := explainGateProject(t)
	for _, ev := range []string{
		`{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}`,
		`{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false}`,
		`{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":true}`,
	} {
		var out, errb bytes.Buffer
		if code := hookMain([]string{"claude", "--config", cfg}, strings.NewReader(ev), &out, &errb); code != 0 {
			t.Fatalf("hook: %d %s", code, errb.String())
		}
	}
	_, before, _ := run("inspect", "--json", "--config", cfg, "claude/s1")
	var out, errb bytes.Buffer
	if code := explainMain([]string{"--session", "claude/s1", "--turn", "1", "--round", "1", "--config", cfg}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := boundaryIDs.ReplaceAllString(out.String(), "(ID)")
	for _, w := range []string{
		"turn 1 round 1 of session claude/s1/s1, instance claude/s1\n",
		"recorded in the journal:\n",
		"  round 1 start: ok\n",
		"  round 1 end: ok; the loop continued (an activating note asked)\n",
		"replayed against the session's pin:\n",
		"round/end (ID):\n  registrations of round/end, in pin order:\n    1. hook/round \"end\" of gate at gate.lua:13\n",
		"  hook \"end\" of gate at gate.lua:13: ran, emitted 1 note: activating \"the tests fail: fix them before you stop\" (from gate)\n",
		"  outcome: ok; the loop continues: an activating note of this round end asks for it\n",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "placed into") {
		t.Errorf("a replay places no note, but the output says it did:\n%s", got)
	}
	if strings.Contains(got, "turn/start") {
		t.Errorf("--round 1 printed the turn's start:\n%s", got)
	}
	out.Reset()
	if code := explainMain([]string{"--session", "claude/s1", "--turn", "1", "--config", cfg}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, w := range []string{"  turn 1 start: ok\n", `note (ambient, from gate at turn/start): "Mind the secrets in .env files.": reached the model at turn 1 round 1`,
		"  guard/turn of gate at gate.lua:2: invoked the rest of the chain\n", "round 2 end", "the loop could stop"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("--turn 1: output lacks %q:\n%s", w, out.String())
		}
	}
	// the same by the round end's id, as the timeline shows it
	var tl struct {
		Events []struct {
			Kind   string
			CallID string `json:"call_id"`
		}
	}
	json.Unmarshal([]byte(before), &tl)
	id := ""
	for _, ev := range tl.Events {
		if ev.Kind == "round-end" && id == "" {
			id = ev.CallID
		}
	}
	out.Reset()
	if code := explainMain([]string{"--session", "claude/s1", "--call", id, "--config", cfg}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "turn 1 round 1 of session claude/s1/s1") {
		t.Errorf("--call %q: exit %d: %s\n%s", id, code, errb.String(), out.String())
	}
	if _, after, _ := run("inspect", "--json", "--config", cfg, "claude/s1"); after != before {
		t.Errorf("explain changed the session")
	}
	errb.Reset()
	if code := explainMain([]string{"--session", "claude/s1", "--turn", "7", "--config", cfg}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "has no turn 7 (its turns: 1)") {
		t.Errorf("turn 7: exit %d: %s", code, errb.String())
	}
	if code := explainMain([]string{"--session", "claude/s1", "--round", "1", "--config", cfg}, nil, &out, &errb); code != 2 {
		t.Errorf("--round without --turn: exit %d", code)
	}
}
