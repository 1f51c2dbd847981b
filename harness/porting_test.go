package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the example folder src into a temporary folder, so that
// its store never lands in the repository.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == ".attune" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// Every pattern of docs/porting.md, as examples/porting answers Claude
// Code's events.
func TestPortingExamples(t *testing.T) {
	dir := copyTree(t, filepath.Join("..", "examples", "porting"))
	r, err := Open(context.Background(), filepath.Join(dir, "attune.toml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	work := t.TempDir() // the session's cwd: where the test command runs
	cwd, _ := json.Marshal(work)
	base := `"session_id":"p1","cwd":` + string(cwd)
	ev := func(name, rest string) string {
		return answerJSON(t, r, `{"hook_event_name":"`+name+`",`+base+rest+`}`)
	}
	// session context
	sameJSON(t, "session context", ev("SessionStart", `,"source":"startup"`),
		`{"systemMessage":"attune loaded the project rules (startup)","hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Project rules (CONTRIBUTING.md):\n# Contributing\nTabs, not spaces.\n"}}`)
	ev("UserPromptSubmit", `,"prompt":"go"`)
	// protect files
	sameJSON(t, "protect files", ev("PreToolUse", `,"tool_name":"Edit","tool_use_id":"e0","tool_input":{"file_path":"/w/.env","old_string":"a","new_string":"b"}`),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"/w/.env is protected in this project"}}`)
	// block commands
	sameJSON(t, "block rm", ev("PreToolUse", `,"tool_name":"Bash","tool_use_id":"b0","tool_input":{"command":"rm -rf /"}`),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm -rf here"}}`)
	sameJSON(t, "ask force push", ev("PreToolUse", `,"tool_name":"Bash","tool_use_id":"b1","tool_input":{"command":"git push --force"}`),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"force push: are you sure?"}}`)
	sameJSON(t, "allow git status", ev("PreToolUse", `,"tool_name":"Bash","tool_use_id":"b2","tool_input":{"command":"git status"}`),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"read-only git"}}`)
	// redact output
	sameJSON(t, "redact output", ev("PostToolUse", `,"tool_name":"Bash","tool_use_id":"b2","tool_input":{"command":"git status"},"tool_response":{"stdout":"key sk-abc-123","stderr":"","interrupted":false,"isImage":false}`),
		`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"key sk-[redacted]","stderr":"","interrupted":false,"isImage":false}}}`)
	// format after edit
	ev("PreToolUse", `,"tool_name":"Edit","tool_use_id":"e1","tool_input":{"file_path":"/w/a.go","old_string":"a","new_string":"b"}`)
	sameJSON(t, "format after edit", ev("PostToolUse", `,"tool_name":"Edit","tool_use_id":"e1","tool_input":{"file_path":"/w/a.go","old_string":"a","new_string":"b"},"tool_response":{"filePath":"/w/a.go"}`),
		`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatter: formatted"}}`)
	// call limits: three calls went through (git push asked, git status, the edit)
	got := ev("PreToolUse", `,"tool_name":"Grep","tool_use_id":"g1","tool_input":{"pattern":"x"}`)
	if !strings.Contains(got, `"permissionDecision":"deny"`) || !strings.Contains(got, "used its 3 tool calls") {
		t.Errorf("call limit: %s", got)
	}
	// test gate at Stop: no tests-pass file, the agent goes on
	sameJSON(t, "test gate", ev("Stop", `,"stop_hook_active":false,"last_assistant_message":"done"`),
		`{"decision":"block","reason":"The tests do not pass yet: fix them before you stop."}`)
	os.WriteFile(filepath.Join(work, "tests-pass"), nil, 0o644)
	sameJSON(t, "test gate passes", ev("Stop", `,"stop_hook_active":true,"last_assistant_message":"fixed"`), `{}`)
}
