package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// setup writes a config and programs into a temporary project and opens a
// runtime on it (SQLite store beside the config).
func setup(t *testing.T, cfgTOML string, programs map[string]string) (*Runtime, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	for name, src := range programs {
		p := filepath.Join(dir, "packs", "p", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "attune.toml")
	os.WriteFile(path, []byte("[engine]\npacks = [\"packs/p\"]\n"+cfgTOML), 0o644)
	var log bytes.Buffer
	r, err := Open(context.Background(), path, Options{Stderr: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, &log
}

// send answers one Claude Code event given as JSON.
func send(t *testing.T, r *Runtime, event string) Answer {
	t.Helper()
	ev, err := Claude().Parse([]byte(event))
	if err != nil {
		t.Fatal(err)
	}
	return r.Handle(context.Background(), Claude(), ev)
}

const mainBot = `
[bots.main]
behaviors = ["p"]
ceiling = ["read", "write", "exec"]
`

// A round guard's refusal blocks the prompt too, and leaves no turn open.
func TestPromptRoundGuard(t *testing.T) { // R3.3
	r, _ := setup(t, mainBot, map[string]string{"p.lua": `
guard.round(function(b, invoke)
  if b.input == "later" then return refuse("not in this round") end
  return invoke()
end)`})
	a := send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"later"}`)
	if a.Decision != "block" || a.Reason != "not in this round" {
		t.Fatalf("refused round: %+v", a)
	}
	inst, err := r.instance(context.Background(), Claude(), r.cfg.Hook("claude"), Event{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop()
	if ts := inst.Turn(); ts.InTurn || ts.InRound {
		t.Fatalf("open after a refused round: turn %v round %v", ts.InTurn, ts.InRound)
	}
}

func TestPromptTurnAndNotes(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": `
guard.turn(function(b, invoke)
  if b.input == "forbidden" then return refuse("not this prompt") end
  return invoke()
end)
hook.turn("start", function(b) notify("turn note for " .. b.input) end)
hook.round("start", function(b) notify("round " .. b.round) end)
`})
	a := send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"forbidden"}`)
	if a.Decision != "block" || a.Reason != "not this prompt" {
		t.Fatalf("refused prompt: %+v", a)
	}
	a = send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"hello"}`)
	if a.Decision != "" || a.Context != "turn note for hello\n\nround 1" {
		t.Fatalf("prompt: %+v", a)
	}
	// the refused prompt used up no turn: this is turn 1
	inst, err := r.instance(context.Background(), Claude(), r.cfg.Hook("claude"), Event{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop()
	if ts := inst.Turn(); ts.Turn != 1 || ts.Round != 1 || !ts.InTurn || !ts.InRound {
		t.Fatalf("turn %d round %d open %v %v", ts.Turn, ts.Round, ts.InTurn, ts.InRound)
	}
}

const toolProg = `
guard.tool("claude/Bash", function(call, invoke)
  local c = call.args.command
  if c:find("rm %-rf") then return refuse("no rm -rf: " .. c) end
  if c == "ls" then return invoke({command = "ls -la", description = call.args.description}) end
  if c == "sudo x" then mark(call, "ask") end
  if c == "boom" then error("kaboom") end
  return invoke()
end)
hook.tool("claude/Bash", {
  post = function(call, out) return "ran " .. call.args.command .. " -> " .. tostring(out.result.stdout) end,
  post_fail = function(call, f) notify("failed " .. call.args.command .. ": " .. f.error) end,
})
`

func TestToolPre(t *testing.T) {
	r, log := setup(t, mainBot+"[harness.claude]\nask_marks = [\"ask\"]\n", map[string]string{"p.lua": toolProg})
	pre := func(cmd string) Answer {
		return send(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"t-`+cmd+`","tool_input":{"command":"`+cmd+`","description":"d"}}`)
	}
	if a := pre("rm -rf /"); a.Decision != "deny" || a.Reason != "no rm -rf: rm -rf /" {
		t.Errorf("refusal: %+v", a)
	}
	// a rewrite with no verdict is no approval: Claude Code needs a
	// decision to apply it, and gets the stricter one
	if a := pre("ls"); a.Decision != "ask" || !reflect.DeepEqual(a.UpdatedInput, map[string]any{"command": "ls -la", "description": "d"}) {
		t.Errorf("rewrite: %+v", a)
	}
	if a := pre("sudo x"); a.Decision != "ask" || a.UpdatedInput != nil {
		t.Errorf("ask: %+v", a)
	}
	if a := pre("echo"); a.Decision != "" || a.UpdatedInput != nil {
		t.Errorf("no opinion: %+v", a)
	}
	// a script error fails closed, naming the program's file and line
	a := pre("boom")
	if a.Decision != "deny" || !strings.Contains(a.Reason, "p.lua:7") || !strings.Contains(a.Reason, "kaboom") {
		t.Errorf("script error: %+v", a)
	}
	if !strings.Contains(log.String(), "kaboom") {
		t.Errorf("stderr: %s", log)
	}
	// a tool outside the ceiling: WebFetch has effect network
	a = send(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"WebFetch","tool_use_id":"w","tool_input":{"url":"x"}}`)
	if a.Decision != "deny" || !strings.Contains(a.Reason, "network") {
		t.Errorf("ceiling: %+v", a)
	}
}

func TestToolPreFailOpen(t *testing.T) {
	r, _ := setup(t, mainBot+"[harness.claude]\nfail_open = true\n", map[string]string{"p.lua": toolProg})
	a := send(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"boom"}}`)
	if a.Decision != "" || !strings.Contains(a.SystemMessage, "kaboom") {
		t.Fatalf("fail open: %+v", a)
	}
}

func TestToolPostAndFailure(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": toolProg})
	send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"p"}`)
	send(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"a","tool_input":{"command":"ls"}}`)
	// Claude Code reports the input it ran: the rewritten one
	a := send(t, r, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"a","tool_input":{"command":"ls -la"},"tool_response":{"stdout":"f1"}}`)
	if a.Context != "ran ls -la -> f1" {
		t.Fatalf("post: %+v", a)
	}
	send(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"false"}}`)
	// the post-fail note reaches the model at once, with the answer
	a = send(t, r, `{"hook_event_name":"PostToolUseFailure","session_id":"s","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"false"},"error":"exit code 1"}`)
	if a.Context != "failed false: exit code 1" {
		t.Fatalf("post-fail note: %+v", a)
	}
	a = send(t, r, `{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"done"}`)
	if a.Decision != "" {
		t.Fatalf("stop: %+v", a)
	}
	inst, _ := r.instance(context.Background(), Claude(), r.cfg.Hook("claude"), Event{Session: "s"})
	defer inst.Stop()
	if inst.Turn().InTurn {
		t.Fatal("the turn is still open after Stop")
	}
}

func TestStopActivatingNote(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": `
hook.round("end", function(b)
  if not b.activated and not string.find(b.output or "", "verified") then
    notify("Please verify your work, then say verified.", "activating")
  end
end)
hook.turn("end", function(b) notify("turn over") end)
`})
	send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"p"}`)
	a := send(t, r, `{"hook_event_name":"Stop","session_id":"s","stop_hook_active":false,"last_assistant_message":"done"}`)
	if a.Decision != "block" || a.Reason != "Please verify your work, then say verified." {
		t.Fatalf("first stop: %+v", a)
	}
	a = send(t, r, `{"hook_event_name":"Stop","session_id":"s","stop_hook_active":true,"last_assistant_message":"still not"}`)
	if a.Decision != "" || a.SystemMessage != "turn over" {
		t.Fatalf("second stop (the activated round ends the loop): %+v", a)
	}
}

func TestContextFreshAndSubagent(t *testing.T) {
	r, _ := setup(t, mainBot+`
[bots.scout]
behaviors = ["s"]
ceiling = ["read"]
[harness.claude.agents]
Explore = "scout"
`, map[string]string{
		"p.lua": `hook.turn("start", function(b) notify("fresh=" .. tostring(b.context_fresh)) end)`,
		"s.lua": `guard.tool("claude/Read", function(call, invoke) return refuse("scout " .. call.args.file_path) end)`,
	})
	if a := send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"p"}`); a.Context != "fresh=false" {
		t.Fatalf("%+v", a)
	}
	send(t, r, `{"hook_event_name":"Stop","session_id":"s"}`)
	send(t, r, `{"hook_event_name":"SessionStart","session_id":"s","source":"clear"}`)
	if a := send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"p"}`); a.Context != "fresh=true" {
		t.Fatalf("after clear: %+v", a)
	}
	send(t, r, `{"hook_event_name":"Stop","session_id":"s"}`)
	if a := send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"p"}`); a.Context != "fresh=false" {
		t.Fatalf("the turn after: %+v", a)
	}
	send(t, r, `{"hook_event_name":"PreCompact","session_id":"s","trigger":"auto"}`)
	send(t, r, `{"hook_event_name":"Stop","session_id":"s"}`)
	if a := send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"p"}`); a.Context != "fresh=true" {
		t.Fatalf("after PreCompact: %+v", a)
	}
	// a subagent's call runs in a child instance of the bot its type maps to
	a := send(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","agent_id":"ag1","agent_type":"Explore","tool_name":"Read","tool_use_id":"r","tool_input":{"file_path":"/x"}}`)
	if a.Decision != "deny" || a.Reason != "scout /x" {
		t.Fatalf("subagent: %+v", a)
	}
	a = send(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Read","tool_use_id":"r2","tool_input":{"file_path":"/x"}}`)
	if a.Decision != "" {
		t.Fatalf("main agent: %+v", a)
	}
	inst, err := r.instance(context.Background(), Claude(), r.cfg.Hook("claude"), Event{Session: "s", AgentID: "ag1", AgentType: "Explore"})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop()
	if inst.Bot() != "scout" || inst.ID() != "claude/s/agent/ag1" {
		t.Fatalf("child %s runs %s", inst.ID(), inst.Bot())
	}
}

func TestFindConfig(t *testing.T) {
	dir, proj := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(proj, "attune.toml"), nil, 0o644)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if p, _ := FindConfig("x.toml", getenv, proj, dir); p != "x.toml" {
		t.Errorf("flag: %s", p)
	}
	env["ATTUNE_CONFIG"] = "env.toml"
	if p, _ := FindConfig("", getenv, proj, dir); p != "env.toml" {
		t.Errorf("env: %s", p)
	}
	delete(env, "ATTUNE_CONFIG")
	if p, _ := FindConfig("", getenv, proj, dir); p != filepath.Join(proj, "attune.toml") {
		t.Errorf("project: %s", p)
	}
	if _, err := FindConfig("", getenv, "", dir); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Errorf("none: %v", err)
	}
}

func TestClaudeDialect(t *testing.T) {
	c := Claude()
	for tool, want := range map[string]string{"Bash": "claude/Bash", "mcp__github__create_issue": "mcp/github/create_issue", "mcp__odd": "claude/mcp__odd"} {
		if got := c.ToolPath(tool); got != want {
			t.Errorf("ToolPath(%s) = %s", tool, got)
		}
	}
	for tool, want := range map[string][]string{"Read": {"read"}, "LS": {"read"}, "MultiEdit": {"write"}, "Bash": {"exec"}, "WebSearch": {"network"}, "Task": {"spawn"}, "Agent": {"spawn"}, "mcp__a__b": nil} {
		if got := c.Effects(tool); !reflect.DeepEqual(got, want) {
			t.Errorf("Effects(%s) = %v", tool, got)
		}
	}
	ev, err := c.Parse([]byte(`{"hook_event_name":"PostToolUseFailure","session_id":"s","tool_name":"Bash","tool_input":{"command":"x"},"tool_use_id":"t","error":"boom"}`))
	if err != nil || ev.Kind != ToolFail || ev.Error != "boom" || ev.ToolInput["command"] != "x" {
		t.Fatalf("%+v %v", ev, err)
	}
	for _, bad := range []string{`nope`, `{"session_id":"s"}`, `{"hook_event_name":"PreToolUse"}`, `{"hook_event_name":"PreToolUse","session_id":"s","tool_input":"str"}`} {
		if _, err := c.Parse([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := c.Parse([]byte(`{"hook_event_name":"Bogus","session_id":"s"}`)); err == nil || !strings.Contains(err.Error(), "Bogus") {
		t.Errorf("unknown event: %v", err)
	}
	render := func(ev Event, a Answer) map[string]any {
		var m map[string]any
		json.Unmarshal(c.Render(ev, a), &m)
		return m
	}
	got := render(Event{Kind: ToolPre, Name: "PreToolUse"}, Answer{Decision: "allow", Reason: "r", UpdatedInput: map[string]any{"command": "y"}})
	want := map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "r", "updatedInput": map[string]any{"command": "y"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pre: %v", got)
	}
	got = render(Event{Kind: Stop, Name: "Stop"}, Answer{Decision: "block", Reason: "go on", SystemMessage: "m"})
	if !reflect.DeepEqual(got, map[string]any{"decision": "block", "reason": "go on", "systemMessage": "m"}) {
		t.Errorf("stop: %v", got)
	}
	got = render(Event{Kind: ToolPost, Name: "PostToolUse"}, Answer{Context: "diag"})
	if !reflect.DeepEqual(got, map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PostToolUse", "additionalContext": "diag"}}) {
		t.Errorf("post: %v", got)
	}
	if s := string(c.Render(Event{Kind: Other, Name: "Notification"}, Answer{})); s != "{}" {
		t.Errorf("other: %s", s)
	}
}

// SubagentStop ends the child instance's round: an activating note of the
// subagent's bot keeps the subagent going once.
func TestSubagentStop(t *testing.T) { // R3.6
	r, _ := setup(t, mainBot+`
[bots.scout]
behaviors = ["s"]
ceiling = ["read"]
[harness.claude.agents]
Explore = "scout"
`, map[string]string{
		"p.lua": ``,
		"s.lua": `hook.round("end", function(b)
  if not b.activated then notify("scout: cite the files you read", "activating") end
end)`,
	})
	send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"p"}`)
	a := send(t, r, `{"hook_event_name":"SubagentStop","session_id":"s","agent_id":"a1","agent_type":"Explore","stop_hook_active":false,"last_assistant_message":"found it"}`)
	if a.Decision != "block" || a.Reason != "scout: cite the files you read" {
		t.Fatalf("first subagent stop: %+v", a)
	}
	a = send(t, r, `{"hook_event_name":"SubagentStop","session_id":"s","agent_id":"a1","agent_type":"Explore","stop_hook_active":true,"last_assistant_message":"found it in x.go"}`)
	if a.Decision != "" {
		t.Fatalf("second subagent stop: %+v", a)
	}
	// the main session's turn is untouched
	if a := send(t, r, `{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"done"}`); a.Decision != "" {
		t.Fatalf("main stop: %+v", a)
	}
}

// With no [harness.claude] bot, sessions run the bot "main"; a config that
// has none says so and what to set, and tool calls are denied.
func TestNoDefaultBotSaysWhatToSet(t *testing.T) {
	r, _ := setup(t, "[bots.reviewer]\nceiling = [\"exec\"]\n", nil)
	a := send(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`)
	if a.Decision != "deny" || !strings.Contains(a.Reason, `no bot named "main"`) || !strings.Contains(a.Reason, `[harness.claude] bot = "reviewer"`) {
		t.Errorf("%+v", a)
	}
}

// A command hook runs in a process of its own per event, so a "memory:"
// store keeps nothing from one event to the next (no owner state, no
// session): the session's start tells the user so. hook serve keeps its
// one store for its life, so it says nothing.
func TestMemoryStoreWarnsAtSessionStart(t *testing.T) {
	r, _ := setup(t, "store = \"memory:\"\n"+mainBot, map[string]string{"p.lua": ""})
	a := send(t, r, `{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}`)
	if !strings.Contains(a.SystemMessage, `store = "memory:"`) || !strings.Contains(a.SystemMessage, "nothing is kept") {
		t.Errorf("command hook: %+v", a)
	}
	w, err := Open(context.Background(), r.cfg.File, Options{Warm: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if a := w.Handle(context.Background(), Claude(), mustParse(t, `{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}`)); a.SystemMessage != "" {
		t.Errorf("hook serve: %+v", a)
	}
}

func mustParse(t *testing.T, event string) Event {
	t.Helper()
	ev, err := Claude().Parse([]byte(event))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// A program no pack holds because a pack folder is missing: the denial
// names the folder, as attune check does.
func TestMissingPackFolderIsNamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "attune.toml")
	os.WriteFile(path, []byte("[engine]\npacks = [\"packs/p\"]\n"+mainBot), 0o644)
	_, err := Open(context.Background(), path, Options{})
	if err == nil || !strings.Contains(err.Error(), `no pack holds program "p"`) || !strings.Contains(err.Error(), "engine.packs[1]: pack folder "+filepath.Join(dir, "packs", "p")+" does not exist") {
		t.Errorf("%v", err)
	}
}
