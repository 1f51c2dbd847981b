package tests

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/harness"
)

// The guardrails pack under `attune hook claude`: real reads (file/read,
// exec/NAME) answered by attune in the session's folder, session context
// at SessionStart, a redacted Bash result (updatedToolOutput), a denied
// protected read, an ask from a destructive rule, and the test gate at
// Stop continuing once, then letting the agent stop.
func TestGuardrailsUnderClaudeHooks(t *testing.T) {
	dir := t.TempDir()
	work := dir // the project (file/read's root) and the session's folder
	os.WriteFile(filepath.Join(work, "RULES.md"), []byte("Tabs, not spaces."), 0o644)
	cfgText := `
[engine]
store = "state.db"

[bots.main]
behaviors = ["guardrails"]
ceiling = ["read", "write", "exec", "network", "spawn"]

[bots.main.config.guardrails.protected_paths]
[bots.main.config.guardrails.destructive_commands]
[bots.main.config.guardrails.secrets]
[bots.main.config.guardrails.session_context]
files = ["RULES.md"]
[bots.main.config.guardrails.test_gate]
read = "test"

[harness.claude]
bot = "main"

[harness.reads]
"file/read" = {max_bytes = 4096}
[harness.reads.exec.test]
argv = ["sh", "-c", "test -f tests-pass || { echo 'FAIL: TestParse'; exit 1; }"]
timeout = "20s"
`
	cfgFile := filepath.Join(dir, "attune.toml")
	if err := os.WriteFile(cfgFile, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := harness.Open(ctx, cfgFile, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cwd, _ := json.Marshal(work)
	ev := func(name, rest string) string {
		t.Helper()
		e, err := harness.Claude().Parse([]byte(`{"hook_event_name":"` + name + `","session_id":"g1","cwd":` + string(cwd) + rest + `}`))
		if err != nil {
			t.Fatal(err)
		}
		return string(harness.Claude().Render(e, r.Handle(ctx, harness.Claude(), e)))
	}
	has := func(what, got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: answer lacks %s:\n%s", what, w, got)
			}
		}
	}
	has("session context", ev("SessionStart", `,"source":"startup"`), `"additionalContext"`, "RULES.md", "Tabs, not spaces.")
	has("context after a compaction", ev("SessionStart", `,"source":"compact"`), `"additionalContext"`, "Tabs, not spaces.")
	if got := ev("SessionStart", `,"source":"resume"`); strings.Contains(got, "Tabs") {
		t.Errorf("a resumed session got the context again: %s", got)
	}
	ev("UserPromptSubmit", `,"prompt":"go"`)
	has("protected read", ev("PreToolUse", `,"tool_name":"Read","tool_use_id":"r1","tool_input":{"file_path":"`+work+`/.env"}`),
		`"permissionDecision":"deny"`, ".env is protected")
	has("ask on a hard reset", ev("PreToolUse", `,"tool_name":"Bash","tool_use_id":"b1","tool_input":{"command":"git reset --hard"}`),
		`"permissionDecision":"ask"`, "reset_hard")
	ev("PreToolUse", `,"tool_name":"Bash","tool_use_id":"b2","tool_input":{"command":"env"}`)
	got := ev("PostToolUse", `,"tool_name":"Bash","tool_use_id":"b2","tool_input":{"command":"env"},"tool_response":{"stdout":"AWS=AKIAIOSFODNN7EXAMPLE","stderr":"","interrupted":false,"isImage":false}`)
	has("redacted result", got, `"updatedToolOutput"`, `[redacted:aws_access_key]`, `"interrupted":false`)
	if strings.Contains(got, "AKIAIOSFODNN7EXAMPLE") {
		t.Errorf("the key reached the answer: %s", got)
	}
	has("test gate", ev("Stop", `,"stop_hook_active":false,"last_assistant_message":"done"`), `"decision":"block"`, "FAIL: TestParse")
	if got := ev("Stop", `,"stop_hook_active":true,"last_assistant_message":"done"`); strings.Contains(got, `"decision":"block"`) {
		t.Errorf("the gate continued twice: %s", got)
	}
}

// The same pack under `attune hook gemini`: a destructive command denied
// at BeforeTool, and a key in a shell result kept from the model at
// AfterTool.
func TestGuardrailsUnderGeminiHooks(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfgFile, []byte(`
[engine]
store = "state.db"

[bots.main]
behaviors = ["guardrails"]
ceiling = ["read", "write", "exec", "network", "spawn"]

[bots.main.config.guardrails.destructive_commands]
[bots.main.config.guardrails.secrets]

[harness.gemini]
bot = "main"
`), 0o644)
	ctx := context.Background()
	r, err := harness.Open(ctx, cfgFile, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cwd, _ := json.Marshal(dir)
	ev := func(name, rest string) string {
		t.Helper()
		e, err := harness.Gemini().Parse([]byte(`{"hook_event_name":"` + name + `","session_id":"gm1","cwd":` + string(cwd) + rest + `}`))
		if err != nil {
			t.Fatal(err)
		}
		return string(harness.Gemini().Render(e, r.Handle(ctx, harness.Gemini(), e)))
	}
	ev("BeforeAgent", `,"prompt":"go"`)
	if got := ev("BeforeTool", `,"tool_name":"run_shell_command","tool_input":{"command":"sudo rm -rf /usr"}`); !strings.Contains(got, "deny") || !strings.Contains(got, "rm_outside") {
		t.Errorf("BeforeTool rm -rf /usr: %s", got)
	}
	ev("BeforeTool", `,"tool_name":"run_shell_command","tool_input":{"command":"env"}`)
	got := ev("AfterTool", `,"tool_name":"run_shell_command","tool_input":{"command":"env"},"tool_response":{"llmContent":"KEY=AKIAIOSFODNN7EXAMPLE","returnDisplay":"KEY=AKIAIOSFODNN7EXAMPLE"}`)
	// the key never reaches the model: redacted, or the result withheld
	// where the dialect cannot carry a replacement (it fails closed)
	if strings.Contains(got, "AKIAIOSFODNN7EXAMPLE") || !(strings.Contains(got, "[redacted:aws_access_key]") || strings.Contains(got, "withheld")) {
		t.Errorf("AfterTool with a key: %s", got)
	}
}
