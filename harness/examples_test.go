package harness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// copyExample copies examples/claude into a temporary folder, so that its
// store never lands in the repository.
func copyExample(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "examples", "claude")
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

// The example pack's scenario passes under `attune test`.
func TestExampleScenarios(t *testing.T) {
	dir := copyExample(t)
	out, err := exec.Command(attuneBin, "test", filepath.Join(dir, "tests")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "1 passed, 0 failed") {
		t.Fatalf("attune test: %v\n%s", err, out)
	}
}

// The three ported hooks, answering Claude Code's events.
func TestExampleHooks(t *testing.T) {
	dir := copyExample(t)
	r, err := Open(context.Background(), filepath.Join(dir, "attune.toml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a := send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"e1","prompt":"ship it"}`)
	if a.Context != "This project has seen 0 tool calls so far." {
		t.Fatalf("first prompt: %+v", a)
	}
	// protect
	if a := send(t, r, `{"hook_event_name":"PreToolUse","session_id":"e1","tool_name":"Read","tool_use_id":"r1","tool_input":{"file_path":"/w/.env"}}`); a.Decision != "deny" || !strings.Contains(a.Reason, "holds secrets") {
		t.Errorf(".env: %+v", a)
	}
	if a := send(t, r, `{"hook_event_name":"PreToolUse","session_id":"e1","tool_name":"Bash","tool_use_id":"b1","tool_input":{"command":"rm -fr /"}}`); a.Decision != "deny" || !strings.Contains(a.Reason, "rm -rf") {
		t.Errorf("rm: %+v", a)
	}
	if a := send(t, r, `{"hook_event_name":"PreToolUse","session_id":"e1","tool_name":"Bash","tool_use_id":"b2","tool_input":{"command":"git push --force origin main"}}`); a.Decision != "ask" {
		t.Errorf("force push: %+v", a)
	}
	// count: three calls ran
	for _, id := range []string{"a", "b", "c"} {
		send(t, r, `{"hook_event_name":"PreToolUse","session_id":"e1","tool_name":"Grep","tool_use_id":"`+id+`","tool_input":{"pattern":"x"}}`)
		send(t, r, `{"hook_event_name":"PostToolUse","session_id":"e1","tool_name":"Grep","tool_use_id":"`+id+`","tool_input":{"pattern":"x"},"tool_response":"none"}`)
	}
	// verify: asks once, then lets Claude stop
	if a := send(t, r, `{"hook_event_name":"Stop","session_id":"e1","stop_hook_active":false,"last_assistant_message":"done"}`); a.Decision != "block" || !strings.Contains(a.Reason, "run the project's tests") {
		t.Errorf("first stop: %+v", a)
	}
	if a := send(t, r, `{"hook_event_name":"Stop","session_id":"e1","stop_hook_active":true,"last_assistant_message":"tests pass"}`); a.Decision != "" {
		t.Errorf("second stop: %+v", a)
	}
	// another session of the project sees the count
	if a := send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"e2","prompt":"again"}`); a.Context != "This project has seen 3 tool calls so far." {
		t.Errorf("second session: %+v", a)
	}
}
