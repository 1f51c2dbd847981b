package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// answerJSON sends one Claude Code event and returns the rendered answer.
func answerJSON(t *testing.T, r *Runtime, event string) string {
	t.Helper()
	ev, err := Claude().Parse([]byte(event))
	if err != nil {
		t.Fatal(err)
	}
	return string(Claude().Render(ev, r.Handle(context.Background(), Claude(), ev)))
}

// sameJSON fails unless got and want are the same JSON value.
func sameJSON(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: answer is not JSON: %s", what, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: want: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

const verdictProg = `
guard.tool("claude/Bash", function(call, invoke)
  local c = call.args.command
  if c == "git status" then return allow("read-only") end
  if c == "rm x" then return ask("deletes files") end
  if c == "ls" then
    call.args.command = "ls -la"
    return allow("listing")
  end
  if c == "halt" then return halt("enough for today") end
  if c == "sed" then return invoke({command = "sed -n 1p"}) end
  return invoke()
end)
hook.tool("claude/Bash", {post = function(call, out)
  if call.args.command == "make" then halt("the build broke") end
end})
hook.round("end", function(b)
  if b.output == "loop" then
    notify("again", "activating")
    halt("stop looping")
  end
end)
`

// R4.3: allow and ask verdicts, a rewrite without a verdict, and halts,
// as Claude Code reads them.
func TestClaudeVerdicts(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": verdictProg})
	pre := func(id, cmd string) string {
		return answerJSON(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"`+id+`","tool_input":{"command":"`+cmd+`"}}`)
	}
	answerJSON(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`)
	sameJSON(t, "allow", pre("a", "git status"),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"read-only"}}`)
	sameJSON(t, "ask", pre("b", "rm x"),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"deletes files"}}`)
	sameJSON(t, "allowed rewrite", pre("c", "ls"),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"listing","updatedInput":{"command":"ls -la"}}}`)
	sameJSON(t, "rewrite without verdict", pre("d", "sed"),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"attune: arguments rewritten by a guard","updatedInput":{"command":"sed -n 1p"}}}`)
	sameJSON(t, "no verdict", pre("e", "echo"), `{}`)
	sameJSON(t, "guard halt", pre("f", "halt"),
		`{"continue":false,"stopReason":"enough for today","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"enough for today"}}`)
	pre("g", "make")
	sameJSON(t, "post halt", answerJSON(t, r, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"g","tool_input":{"command":"make"},"tool_response":{"stdout":"","stderr":"error","interrupted":false,"isImage":false}}`),
		`{"continue":false,"stopReason":"the build broke"}`)
	// a halted round end does not continue, though a note asks to
	sameJSON(t, "stop halt", answerJSON(t, r, `{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"loop"}`),
		`{"continue":false,"stopReason":"stop looping","systemMessage":"again"}`)
}

// An agent that cannot ask (Codex rejects "ask" and then runs the
// command) gets a deny, never a silent allow.
func TestVerdictsTightened(t *testing.T) {
	c := Caps{}
	a := tighten(c, Event{Kind: ToolPre}, Answer{Decision: "ask", Reason: "deletes files", UpdatedInput: map[string]any{"x": 1}})
	if a.Decision != "deny" || a.UpdatedInput != nil || a.Reason != "deletes files (this call needs a person's confirmation, which the agent cannot ask for here: it was not run; ask the user to run it)" {
		t.Errorf("ask without Ask: %+v", a)
	}
	a = tighten(c, Event{Kind: ToolPre}, Answer{Halt: true, StopReason: "enough"})
	if a.Decision != "deny" || a.Halt || a.Reason != "attune: enough" {
		t.Errorf("halt without Halt: %+v", a)
	}
	a = tighten(c, Event{Kind: Prompt}, Answer{Halt: true, StopReason: "enough"})
	if a.Decision != "block" || a.Halt {
		t.Errorf("halt at a prompt without Halt: %+v", a)
	}
	if got := tighten(Claude().Caps(), Event{Kind: ToolPre}, Answer{Decision: "ask", Halt: true, StopReason: "s"}); got.Decision != "ask" || !got.Halt {
		t.Errorf("claude keeps ask and halt: %+v", got)
	}
}

const resultProg = `
guard.result("claude/Bash", function(call, outcome)
  local r = outcome.result
  if call.args.command == "cat .env" then return refuse("the output holds secrets") end
  if r.stdout:find("sk%-") then
    local t = {}
    for k, v in pairs(r) do t[k] = v end
    t.stdout = r.stdout:gsub("sk%-%w+", "sk-[redacted]")
    return replace(outcome, t)
  end
  if call.args.command == "short" then return replace(outcome, "just this") end
  return outcome
end)
guard.result("mcp/db/**", function(call, outcome)
  return replace(outcome, {content = {{type = "text", text = "rows: 3"}}})
end)
`

// A result guard redacts, rewrites or withholds what the harness ran
// (PostToolUse tool_response), in the tool's own shape.
func TestClaudeResultGuards(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": resultProg})
	post := func(id, cmd, stdout string) string {
		answerJSON(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"`+id+`","tool_input":{"command":"`+cmd+`"}}`)
		return answerJSON(t, r, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"`+id+`","tool_input":{"command":"`+cmd+`"},"tool_response":{"stdout":"`+stdout+`","stderr":"","interrupted":false,"isImage":false}}`)
	}
	answerJSON(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`)
	sameJSON(t, "redacted", post("a", "env", "KEY=sk-abc123"),
		`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"KEY=sk-[redacted]","stderr":"","interrupted":false,"isImage":false}}}`)
	sameJSON(t, "unchanged", post("b", "ls", "a b"), `{}`)
	sameJSON(t, "a text in the tool's shape", post("c", "short", "long output"),
		`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"just this","stderr":"","interrupted":false,"isImage":false}}}`)
	sameJSON(t, "withheld", post("d", "cat .env", "A=1"),
		`{"decision":"block","reason":"the output holds secrets","hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"[withheld by attune: the output holds secrets]","stderr":"","interrupted":false,"isImage":false}}}`)
	answerJSON(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"mcp__db__query","tool_use_id":"m","tool_input":{"sql":"select"}}`)
	sameJSON(t, "mcp", answerJSON(t, r, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"mcp__db__query","tool_use_id":"m","tool_input":{"sql":"select"},"tool_response":{"content":[{"type":"text","text":"secret rows"}]}}`),
		`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":{"content":[{"type":"text","text":"rows: 3"}]}}}`)
}

// Session boundaries: hook/session runs at SessionStart (its notes are the
// answer's additionalContext, not placed again at the first prompt) and at
// SessionEnd; SubagentStart opens the child.
func TestClaudeSessionBoundaries(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": `
hook.session("start", function(b)
  notify("session " .. b.kind .. " " .. b.phase .. " from " .. b.source)
end)
hook.session("end", function(b) call.tool("claude/Bash", {command = "never"}) end)
hook.round("start", function(b) notify("round " .. b.round) end)
`})
	sameJSON(t, "session start", answerJSON(t, r, `{"hook_event_name":"SessionStart","session_id":"s","source":"startup","cwd":"/w"}`),
		`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"session session start from startup"}}`)
	sameJSON(t, "first prompt", answerJSON(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`),
		`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"round 1"}}`)
	sameJSON(t, "resume", answerJSON(t, r, `{"hook_event_name":"SessionStart","session_id":"s","source":"resume"}`),
		`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"session session start from resume"}}`)
	sameJSON(t, "subagent", answerJSON(t, r, `{"hook_event_name":"SubagentStart","session_id":"s","agent_id":"a1","agent_type":"Explore"}`),
		`{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"session session start from subagent\n\nround 1"}}`)
	// the end hook ran: its failing call is a warning, not a decision
	if got := answerJSON(t, r, `{"hook_event_name":"SessionEnd","session_id":"s","reason":"logout"}`); got != `{}` {
		t.Errorf("session end: %s", got)
	}
}

// Under attune hook attune is the host: admit/read is answered from
// [harness.reads] in the session's cwd, and a key it does not enable is an
// error naming the key (the guard fails closed), never nil.
func TestClaudeReads(t *testing.T) {
	r, _ := setup(t, mainBot+`
[harness.reads]
"file/read" = true
[harness.reads.exec.test]
argv = ["sh", "-c", "cat status; exit 1"]
`, map[string]string{"p.lua": `
hook.round("end", function(b)
  local res = admit.read("exec/test")
  if res.code ~= 0 then notify("tests not green: " .. res.stdout, "activating") end
end)
guard.tool("claude/Bash", function(call, invoke)
  if call.args.command == "branch" then admit.read("git/branch") end
  return invoke()
end)
`})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "status"), []byte("FAIL TestX"), 0o644)
	cwd, _ := json.Marshal(dir)
	answerJSON(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go","cwd":`+string(cwd)+`}`)
	sameJSON(t, "stop gate", answerJSON(t, r, `{"hook_event_name":"Stop","session_id":"s","cwd":`+string(cwd)+`}`),
		`{"decision":"block","reason":"tests not green: FAIL TestX"}`)
	got := answerJSON(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"branch"}}`)
	if !strings.Contains(got, `"permissionDecision":"deny"`) || !strings.Contains(got, "admit/read git/branch") || !strings.Contains(got, "not enabled in [harness.reads]") {
		t.Errorf("a read not enabled: %s", got)
	}
}

// Every call and boundary record under a harness carries harness = {name,
// event}: the event's fields except the tool's input and response.
func TestClaudeHarnessOnRecords(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": `
local function say(rec)
  local ev = rec.harness.event
  return rec.harness.name .. " " .. ev.hook_event_name .. " " .. tostring(ev.cwd) .. " " .. tostring(ev.permission_mode)
    .. " " .. tostring(ev.tool_input) .. " " .. tostring(ev.tool_response)
end
hook.session("start", function(b) notify("session: " .. say(b) .. " " .. b.harness.event.source) end)
hook.round("start", function(b) notify("round: " .. say(b)) end)
guard.tool("claude/Bash", function(c, invoke)
  if c.args.command == "show" then return refuse("guard: " .. say(c)) end
  return invoke()
end)
hook.tool("claude/Bash", {post = function(c, out) return "post: " .. say(c) end})
`})
	base := `"session_id":"s","cwd":"/w","permission_mode":"default","transcript_path":"/t.jsonl"`
	sameJSON(t, "session", answerJSON(t, r, `{"hook_event_name":"SessionStart","source":"startup",`+base+`}`),
		`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"session: claude SessionStart /w default nil nil startup"}}`)
	sameJSON(t, "round", answerJSON(t, r, `{"hook_event_name":"UserPromptSubmit","prompt":"go",`+base+`}`),
		`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"round: claude UserPromptSubmit /w default nil nil"}}`)
	sameJSON(t, "guard", answerJSON(t, r, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"a","tool_input":{"command":"show"},`+base+`}`),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard: claude PreToolUse /w default nil nil"}}`)
	answerJSON(t, r, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"ls"},`+base+`}`)
	// a call's records carry the event that began it
	sameJSON(t, "post", answerJSON(t, r, `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"ls"},"tool_response":{"stdout":"x"},`+base+`}`),
		`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post: claude PreToolUse /w default nil nil"}}`)
}

// Notes emitted mid-round reach the model with the next answer that
// carries context, each once; (notify TEXT "user") reaches the user only,
// from any event.
func TestClaudeNotesFromAnyEvent(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": `
guard.tool("claude/Bash", function(c, invoke)
  notify("guard saw " .. c.args.command)
  if c.args.command == "rm" then
    notify("blocked rm", "user")
    return refuse("no rm")
  end
  return invoke()
end)
hook.tool("claude/Bash", {post = function(c, out) notify("post saw " .. c.args.command) end})
hook.session("start", function(b) notify("welcome back", "user") end)
hook.round("end", function(b) notify("round over", "user") end)
`})
	sameJSON(t, "session start", answerJSON(t, r, `{"hook_event_name":"SessionStart","session_id":"s","source":"resume"}`),
		`{"systemMessage":"welcome back"}`)
	sameJSON(t, "prompt", answerJSON(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`), `{}`)
	sameJSON(t, "pre", answerJSON(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"a","tool_input":{"command":"ls"}}`),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"guard saw ls"}}`)
	sameJSON(t, "post", answerJSON(t, r, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"a","tool_input":{"command":"ls"},"tool_response":{"stdout":"x"}}`),
		`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post saw ls"}}`)
	sameJSON(t, "refused", answerJSON(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"rm"}}`),
		`{"systemMessage":"blocked rm","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm","additionalContext":"guard saw rm"}}`)
	sameJSON(t, "stop", answerJSON(t, r, `{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"done"}`),
		`{"systemMessage":"round over"}`)
}

// A prompt /goal TEXT runs the pack command in the turn: its note reaches
// the model with the prompt, and the goal then keeps the agent going.
func TestClaudePromptCommand(t *testing.T) { // R6.9
	r, _ := setup(t, `
[bots.main]
behaviors = ["goal"]
ceiling = ["read"]
grants = ["goal.set", "goal.clear"]
[bots.main.config.goal]
loops = 1
`, map[string]string{"p.lua": `-- unused`})
	sameJSON(t, "/goal", answerJSON(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"/goal ship the parser"}`),
		`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Goal: ship the parser (1 loops)"}}`)
	sameJSON(t, "stop", answerJSON(t, r, `{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"done"}`),
		`{"decision":"block","reason":"Goal: ship the parser (0 loops left)"}`)
	// not a pack command: the prompt is the model's
	sameJSON(t, "/help", answerJSON(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s2","prompt":"/help me"}`), `{}`)
}
