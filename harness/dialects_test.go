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

// dialectProg refuses rm -rf, rewrites "ls" into "ls -la", asks for
// sudo, notes every turn and diagnoses every call, whatever the agent.
const dialectProg = `
local function cmd(args) return args.command or args.file_path or "" end
guard.tool("**", function(call, invoke)
  local c = cmd(call.args)
  if string.find(c, "rm -rf", 1, true) then return refuse("no rm -rf") end
  if string.find(c, "sudo", 1, true) then mark(call, "ask") end
  if c == "ls" then
    local a = call.args
    a.command = "ls -la"
    return invoke(a)
  end
  if c == "ls -R" then return invoke({command = "ls"}) end
  return invoke()
end)
hook.tool("**", {post = function(call, out) return "checked " .. call.path end})
hook.turn("start", function(b) notify("turn note") end)
hook.round("end", function(b)
  if not b.activated then notify("verify first", "activating") end
end)
`

// flow is one event given in the agent's own JSON and the answer it
// must get, as JSON.
type flow struct{ event, want string }

func runFlows(t *testing.T, d Dialect, flows []flow) {
	t.Helper()
	r, _ := setup(t, mainBot+"[harness."+d.Name()+"]\nask_marks = [\"ask\"]\n[harness."+d.Name()+".tools]\nShell = [\"exec\"]\n", map[string]string{"p.lua": dialectProg})
	for k, f := range flows {
		ev, err := d.Parse([]byte(f.event))
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		got := d.Render(ev, r.Handle(context.Background(), d, ev))
		var g, w any
		json.Unmarshal(got, &g)
		if err := json.Unmarshal([]byte(f.want), &w); err != nil {
			t.Fatalf("step %d: want: %v", k, err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("step %d (%s):\n got %s\nwant %s", k, ev.Name, got, f.want)
		}
	}
}

// captured is an event the real CLI sent (testdata/captured/FILE), with
// the top-level fields of set replaced, as JSON.
func captured(t testing.TB, file string, set map[string]any) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "hook", "testdata", "captured", file))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for k, v := range set {
		ev[k] = v
	}
	return string(marshal(ev))
}

// Codex 0.169.0, from its captured events: the model's exec_command
// arrives as Bash {command}, apply_patch as {command: PATCH}, the
// response as a string; an ask is denied (Codex rejects it and runs the
// command).
func TestCodexDialect(t *testing.T) {
	const dir = "codex-0.169.0/"
	bash := func(id, cmd string) map[string]any {
		return map[string]any{"tool_use_id": id, "tool_input": map[string]any{"command": cmd}}
	}
	runFlows(t, Codex(), []flow{
		{captured(t, dir+"SessionStart.json", nil), `{}`},
		{captured(t, dir+"UserPromptSubmit.json", nil),
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"turn note"}}`},
		{captured(t, dir+"PreToolUse-echo.json", bash("call_1", "rm -rf /")),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm -rf"}}`},
		{captured(t, dir+"PreToolUse-echo.json", bash("call_2", "ls")),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"attune: arguments rewritten by a guard","updatedInput":{"command":"ls -la"}}}`},
		{captured(t, dir+"PostToolUse-echo.json", bash("call_2", "ls -la")),
			`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"checked codex/Bash"}}`},
		// R4.8: Codex rejects "ask" and runs the command: deny instead
		{captured(t, dir+"PreToolUse-echo.json", bash("call_3", "sudo make")),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"attune: the call is marked ask (this call needs a person's confirmation, which the agent cannot ask for here: it was not run; ask the user to run it)"}}`},
		{captured(t, dir+"PreToolUse-patch.json", nil), `{}`},
		{captured(t, dir+"PostToolUse-patch.json", nil),
			`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"checked codex/apply_patch"}}`},
		{captured(t, dir+"Stop.json", nil), `{"decision":"block","reason":"verify first"}`},
		{captured(t, dir+"Stop.json", map[string]any{"stop_hook_active": true}), `{}`},
	})
}

// Cursor: permission / agent_message / followup_message.
func TestCursorDialect(t *testing.T) {
	base := `"conversation_id":"conv-1","generation_id":"gen-1","workspace_roots":["/w"],"cursor_version":"2.0.77"`
	runFlows(t, Cursor(), []flow{
		{`{"hook_event_name":"beforeSubmitPrompt","prompt":"fix it","attachments":[],` + base + `}`, `{"continue":true,"user_message":"turn note"}`},
		{`{"hook_event_name":"beforeShellExecution","command":"rm -rf /","cwd":"/w",` + base + `}`,
			`{"permission":"deny","agent_message":"no rm -rf","user_message":"no rm -rf"}`},
		{`{"hook_event_name":"beforeShellExecution","command":"sudo make","cwd":"/w",` + base + `}`,
			`{"permission":"ask","agent_message":"attune: the call is marked ask","user_message":"attune: the call is marked ask"}`},
		{`{"hook_event_name":"beforeShellExecution","command":"ls","cwd":"/w",` + base + `}`,
			`{"permission":"deny","agent_message":"attune rewrote this call to {\"command\":\"ls -la\",\"cwd\":\"/w\"}; run that instead","user_message":"attune rewrote this call to {\"command\":\"ls -la\",\"cwd\":\"/w\"}; run that instead"}`},
		{`{"hook_event_name":"preToolUse","tool_name":"Shell","tool_use_id":"tu1","tool_input":{"command":"ls"},` + base + `}`,
			`{"permission":"ask","agent_message":"attune: arguments rewritten by a guard","user_message":"attune: arguments rewritten by a guard","updated_input":{"command":"ls -la"}}`},
		{`{"hook_event_name":"postToolUse","tool_name":"Shell","tool_use_id":"tu1","tool_input":{"command":"ls -la"},"tool_output":"a b",` + base + `}`,
			`{"additional_context":"checked cursor/Shell"}`},
		{`{"hook_event_name":"beforeMCPExecution","tool_name":"query","tool_input":"{\"sql\":\"select 1\"}","command":"npx srv",` + base + `}`, `{}`},
		{`{"hook_event_name":"afterMCPExecution","tool_name":"query","tool_input":"{\"sql\":\"select 1\"}","result_json":"[1]",` + base + `}`,
			`{"additional_context":"checked mcp/cursor/query"}`},
		{`{"hook_event_name":"stop","status":"completed","loop_count":0,` + base + `}`, `{"followup_message":"verify first"}`},
		// the followup comes back as a prompt: the activated round goes on (R3.6)
		{`{"hook_event_name":"beforeSubmitPrompt","prompt":"verify first","attachments":[],` + base + `}`, `{"continue":true}`},
		{`{"hook_event_name":"stop","status":"completed","loop_count":1,` + base + `}`, `{}`},
	})
}

// Gemini CLI 0.61.0, from its captured events: decision allow|deny,
// hookSpecificOutput.tool_input replaces the arguments (a rewrite goes
// whole, a dropped argument included), an ask is denied (headless it would
// hang), PreCompress "auto" (before every request) is no compaction, and
// the reason of a blocked AfterAgent, submitted as the next BeforeAgent,
// continues the turn (R3.6, R3.7).
func TestGeminiDialect(t *testing.T) {
	const dir = "gemini-0.61.0/"
	shell := func(cmd string, more ...any) map[string]any {
		in := map[string]any{"command": cmd}
		for k := 0; k+1 < len(more); k += 2 {
			in[more[k].(string)] = more[k+1]
		}
		return map[string]any{"tool_input": in}
	}
	runFlows(t, Gemini(), []flow{
		{captured(t, dir+"SessionStart.json", nil), `{}`},
		{captured(t, dir+"BeforeAgent.json", nil),
			`{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"turn note"}}`},
		{captured(t, dir+"PreCompress.json", nil), `{}`},
		{captured(t, dir+"BeforeTool-write.json", shell("rm -rf /")), `{"decision":"deny","reason":"no rm -rf"}`},
		{captured(t, dir+"BeforeTool-write.json", shell("ls")),
			`{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"ls -la"}}}`},
		// Gemini CLI replaces the arguments: the rewrite drops dir_path
		{captured(t, dir+"BeforeTool-write.json", shell("ls -R", "dir_path", "src")),
			`{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"ls"}}}`},
		{captured(t, dir+"AfterTool-write.json", shell("ls -la")),
			`{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"checked gemini/run_shell_command"}}`},
		{captured(t, dir+"BeforeTool-write.json", shell("sudo x")),
			`{"decision":"deny","reason":"attune: the call is marked ask (this call needs a person's confirmation, which the agent cannot ask for here: it was not run; ask the user to run it)"}`},
		{captured(t, dir+"BeforeTool-read.json", nil), `{}`},
		{captured(t, dir+"AfterTool-read.json", nil), `{}`}, // a failure: :post-fail, none here
		{captured(t, dir+"AfterAgent.json", nil), `{"decision":"deny","reason":"verify first"}`},
		{captured(t, dir+"BeforeAgent.json", map[string]any{"prompt": "verify first"}), `{}`},
		{captured(t, dir+"AfterAgent.json", map[string]any{"stop_hook_active": true, "prompt": "verify first"}), `{}`},
		{captured(t, dir+"SessionEnd.json", nil), `{}`},
	})
}

// Gemini CLI's events as the dialect reads them: a failed tool's message,
// PreCompress kinds.
func TestGeminiParse(t *testing.T) {
	ev, err := Gemini().Parse([]byte(captured(t, "gemini-0.61.0/AfterTool-read.json", nil)))
	if err != nil || ev.Kind != ToolFail || ev.Error != "File not found: /project/missing.txt" {
		t.Errorf("failed read_file: %v %v %q", ev.Kind, err, ev.Error)
	}
	for trigger, want := range map[string]Kind{"auto": Other, "manual": Compact} {
		ev, err := Gemini().Parse([]byte(captured(t, "gemini-0.61.0/PreCompress.json", map[string]any{"trigger": trigger})))
		if err != nil || ev.Kind != want {
			t.Errorf("PreCompress %s: %v %v", trigger, ev.Kind, err)
		}
	}
}

// Copilot CLI 1.0.102, from its captured events: camelCase events carry no
// event name (told by their fields), no tool call id; answers are read top
// level. After a blocked agentStop Copilot submits the reason as a prompt:
// the same turn continues, and the next stop ends it (R3.6, R3.7).
func TestCopilotDialect(t *testing.T) {
	const dir = "copilot-1.0.102/"
	bash := func(cmd string) map[string]any {
		return map[string]any{"toolArgs": map[string]any{"command": cmd, "description": "run"}}
	}
	runFlows(t, Copilot(), []flow{
		{captured(t, dir+"sessionStart.json", nil), `{}`},
		{captured(t, dir+"userPromptSubmitted.json", nil), `{"additionalContext":"turn note"}`},
		{captured(t, dir+"preToolUse-write.json", bash("rm -rf /")),
			`{"permissionDecision":"deny","permissionDecisionReason":"no rm -rf"}`},
		{captured(t, dir+"preToolUse-write.json", bash("ls")),
			`{"permissionDecision":"allow","permissionDecisionReason":"attune: arguments rewritten by a guard","modifiedArgs":{"command":"ls -la","description":"run"}}`},
		{captured(t, dir+"postToolUse-write.json", bash("ls -la")), `{"additionalContext":"checked copilot/bash"}`},
		{captured(t, dir+"preToolUse-write.json", bash("sudo make")),
			`{"permissionDecision":"ask","permissionDecisionReason":"attune: the call is marked ask"}`},
		{captured(t, dir+"preToolUse-view.json", nil), `{}`},
		{captured(t, dir+"postToolUseFailure-view.json", nil), `{}`}, // a failure: :post-fail, none here
		{captured(t, dir+"agentStop.json", nil), `{"decision":"block","reason":"verify first"}`},
		// the reason comes back as a prompt: the activated round goes on
		{captured(t, dir+"userPromptSubmitted.json", map[string]any{"prompt": "verify first"}), `{}`},
		{captured(t, dir+"agentStop.json", map[string]any{"stop_hook_active": true}), `{}`},
		{captured(t, dir+"sessionEnd.json", nil), `{}`},
	})
}

// Copilot CLI's events configured in Claude Code's spelling: snake_case
// input, Claude Code's tool names, read as Copilot's own.
func TestCopilotDialectPascal(t *testing.T) {
	const dir = "copilot-1.0.102-pascal/"
	runFlows(t, Copilot(), []flow{
		{captured(t, dir+"SessionStart.json", nil), `{}`},
		{captured(t, dir+"UserPromptSubmit.json", nil), `{"additionalContext":"turn note"}`},
		{captured(t, dir+"PreToolUse-write.json", map[string]any{"tool_input": map[string]any{"command": "rm -rf /"}}),
			`{"permissionDecision":"deny","permissionDecisionReason":"no rm -rf"}`},
		{captured(t, dir+"PostToolUse-write.json", nil), `{"additionalContext":"checked copilot/bash"}`},
		{captured(t, dir+"PreToolUse-view.json", nil), `{}`},
		{captured(t, dir+"PostToolUseFailure-view.json", nil), `{}`},
		{captured(t, dir+"Stop.json", nil), `{"decision":"block","reason":"verify first"}`},
		{captured(t, dir+"UserPromptSubmit.json", map[string]any{"prompt": "verify first"}), `{}`},
		{captured(t, dir+"Stop.json", map[string]any{"stop_hook_active": true}), `{}`},
	})
}

// Every event Copilot CLI sent is told apart by its fields alone (the
// fixture's file name is the event it was configured for).
func TestCopilotEventNames(t *testing.T) {
	for _, dir := range []string{"copilot-1.0.102", "copilot-1.0.102-pascal"} {
		files, _ := filepath.Glob(filepath.Join("..", "hook", "testdata", "captured", dir, "*.json"))
		if len(files) < 10 {
			t.Fatalf("%s: %d fixtures", dir, len(files))
		}
		for _, f := range files {
			data, _ := os.ReadFile(f)
			ev, err := Copilot().Parse(data)
			want, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".json"), "-")
			if err != nil || ev.Name != want || ev.Session == "" {
				t.Errorf("%s: %q %v (session %q), want %s", f, ev.Name, err, ev.Session, want)
			}
			if ev.Kind == ToolPre && (ev.Tool != "bash" && ev.Tool != "view") {
				t.Errorf("%s: tool %q", f, ev.Tool)
			}
		}
	}
}

// R3.6, R3.7: the prompt a harness submits itself after a blocked stop
// (the stop's reason) continues the turn in the activated round, so the
// gate fires once; a prompt of the user's own after a blocked stop opens
// a new turn.
func TestStopContinuation(t *testing.T) {
	base := `"session_id":"k1","cwd":"/w"`
	runFlows(t, Claude(), []flow{
		{`{"hook_event_name":"UserPromptSubmit","prompt":"fix it",` + base + `}`,
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"turn note"}}`},
		{`{"hook_event_name":"Stop","stop_hook_active":false,` + base + `}`, `{"decision":"block","reason":"verify first"}`},
		{`{"hook_event_name":"UserPromptSubmit","prompt":"verify first",` + base + `}`, `{}`},
		{`{"hook_event_name":"Stop","stop_hook_active":true,` + base + `}`, `{}`},
		// a new turn: its own gate
		{`{"hook_event_name":"UserPromptSubmit","prompt":"next",` + base + `}`,
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"turn note"}}`},
		{`{"hook_event_name":"Stop","stop_hook_active":false,` + base + `}`, `{"decision":"block","reason":"verify first"}`},
		{`{"hook_event_name":"UserPromptSubmit","prompt":"something else",` + base + `}`,
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"turn note"}}`},
	})
}
