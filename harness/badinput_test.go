package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
)

func mustConfig(t *testing.T, path string) *config.Config {
	t.Helper()
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hookRaw runs `attune hook claude` with raw stdin and returns the exit
// code, stdout and stderr.
func hookRaw(t *testing.T, dir string, stdin string, args ...string) (int, map[string]any, string) {
	t.Helper()
	cmd := exec.Command(attuneBin, append([]string{"hook", "claude"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if jerr := json.Unmarshal(out.Bytes(), &m); jerr != nil {
		t.Errorf("stdout is not JSON: %q", out.String())
	}
	return code, m, errOut.String()
}

func decision(m map[string]any) (string, string) {
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	d, _ := hs["permissionDecision"].(string)
	r, _ := hs["permissionDecisionReason"].(string)
	return d, r
}

const preBash = `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"ls"}}`

// Bad input: a clear message on stderr, a safe answer as JSON, exit 0.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	// not JSON names no event: the strictest answer, a deny of a tool call;
	// an unknown event: no decision
	code, m, stderr := hookRaw(t, dir, "not json")
	if d, _ := decision(m); code != 0 || d != "deny" || !strings.Contains(stderr, "not a hook event") {
		t.Errorf("not JSON: %d %v %q", code, m, stderr)
	}
	code, m, stderr = hookRaw(t, dir, `{"hook_event_name":"Bogus","session_id":"s"}`)
	if code != 0 || len(m) != 0 || !strings.Contains(stderr, `unknown hook event "Bogus"`) {
		t.Errorf("unknown event: %d %v %q", code, m, stderr)
	}
	// no configuration: tool calls are denied (fail closed), prompts pass
	code, m, stderr = hookRaw(t, dir, preBash)
	if d, r := decision(m); code != 0 || d != "deny" || !strings.Contains(r, "no attune configuration found") || !strings.Contains(stderr, "--config") {
		t.Errorf("no config: %d %v %q", code, m, stderr)
	}
	code, m, _ = hookRaw(t, dir, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"p"}`)
	if code != 0 || m["decision"] != nil {
		t.Errorf("no config, prompt: %v", m)
	}
	// a configuration error names the file, line and key
	os.WriteFile(filepath.Join(dir, "attune.toml"), []byte("[bots.main]\nceilng = []\n"), 0o644)
	code, m, stderr = hookRaw(t, dir, preBash)
	if d, r := decision(m); code != 0 || d != "deny" || !strings.Contains(r, "attune.toml:2: bots.main.ceilng: unknown key") {
		t.Errorf("config error: %d %v %q", code, m, stderr)
	}
	// a behavior that loops is stopped by the callback budget: deny
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "packs", "p", "loop.lua"), []byte(`guard.tool("claude/Bash", function(call, invoke)
  while true do end
end)`), 0o644)
	os.WriteFile(filepath.Join(dir, "attune.toml"), []byte("[engine]\npacks = [\"packs/p\"]\ncallback_budget = \"100ms\"\n[bots.main]\nbehaviors = [\"loop\"]\nceiling = [\"exec\"]\n"), 0o644)
	start := time.Now()
	code, m, stderr = hookRaw(t, dir, preBash)
	if d, r := decision(m); code != 0 || d != "deny" || !strings.Contains(r, "loop.lua") || time.Since(start) > 20*time.Second {
		t.Errorf("loop: %d %v %q (%s)", code, m, stderr, time.Since(start))
	}
	// the store is intact: the next event of the session is answered
	code, m, stderr = hookRaw(t, dir, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"t2","tool_input":{"command":"ls"},"tool_response":"x"}`)
	if code != 0 || strings.Contains(stderr, "attune hook claude:") {
		t.Errorf("after the loop: %d %v %q", code, m, stderr)
	}
	// --timeout bounds the wait for a busy session
	unlock, err := lockSession(t.Context(), lockDir(mustConfig(t, filepath.Join(dir, "attune.toml"))), "claude/s")
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	code, m, stderr = hookRaw(t, dir, preBash, "--timeout", "300ms")
	unlock()
	if d, r := decision(m); code != 0 || d != "deny" || !strings.Contains(r, "busy") && !strings.Contains(r, "within 300ms") || time.Since(start) > 10*time.Second {
		t.Errorf("busy: %d %v %q (%s)", code, m, stderr, time.Since(start))
	}
}

// A PreToolUse that names itself but cannot be read (no session_id, a field
// of the wrong type) is a tool call attune cannot judge: deny it (fail
// closed), as for a missing configuration. Input that is not even JSON
// names no event: it is denied as a tool call too (TestNamelessInputDenies).
func TestBadToolPreDenies(t *testing.T) {
	dir := t.TempDir()
	for _, in := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":"ls"}`,
		`{"hook_event_name":"PreToolUse","session_id":7,"tool_name":"Bash","tool_input":{"command":"ls"}}`,
	} {
		code, m, stderr := hookRaw(t, dir, in)
		if d, r := decision(m); code != 0 || d != "deny" || !strings.Contains(r, "not a hook event") || !strings.Contains(stderr, "not a hook event") {
			t.Errorf("%s: %d %v %q", in, code, m, stderr)
		}
	}
	code, m, _ := hookRaw(t, dir, `{"hook_event_name":"UserPromptSubmit","session_id":7}`)
	if code != 0 || len(m) != 0 {
		t.Errorf("bad prompt event: %d %v", code, m)
	}
}

// A PreToolUse larger than attune reads (a Bash command padded past 16
// MiB) is denied, not let through unjudged: the event's name comes before
// the padding.
func TestOversizeToolPreDenies(t *testing.T) {
	dir := t.TempDir()
	pad := strings.Repeat(" ", MaxEvent)
	code, m, stderr := hookRaw(t, dir, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /`+pad+`"}}`)
	if d, r := decision(m); code != 0 || d != "deny" || !strings.Contains(r, "larger than") || !strings.Contains(stderr, "larger than") {
		t.Errorf("%d %v %q", code, m, stderr)
	}
	code, m, _ = hookRaw(t, dir, `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"`+pad+`"}`)
	if code != 0 || len(m) != 0 {
		t.Errorf("an oversize prompt: %d %v", code, m)
	}
}

// Copilot CLI's camelCase events name no event, and their toolArgs come
// before the toolName: a preToolUse padded past 16 MiB is still denied.
// Input of no known shape is denied too.
func TestCopilotOversizeDenies(t *testing.T) {
	dir := t.TempDir()
	pad := strings.Repeat(" ", MaxEvent)
	run := func(stdin string) map[string]any {
		cmd := exec.Command(attuneBin, "hook", "copilot")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		var m map[string]any
		if err != nil || json.Unmarshal(out, &m) != nil {
			t.Fatalf("%v: %q", err, out)
		}
		return m
	}
	m := run(`{"cwd":"/w","sessionId":"s","toolArgs":{"command":"rm -rf /` + pad + `"},"toolName":"bash"}`)
	if m["permissionDecision"] != "deny" || !strings.Contains(m["permissionDecisionReason"].(string), "larger than") {
		t.Errorf("oversize preToolUse: %v", m)
	}
	// input that tells no event may be a tool call: denied (Copilot ignores
	// a decision on any other event)
	if m := run(`{"cwd":"/w","sessionId":"s","weird":1}`); m["permissionDecision"] != "deny" {
		t.Errorf("an event of no known shape: %v", m)
	}
	if m := run(`{"cwd":"/w","sessionId":"s","toolArgs":7,"toolName":"bash"}`); m["permissionDecision"] != "deny" {
		t.Errorf("a preToolUse with bad toolArgs: %v", m)
	}
}
