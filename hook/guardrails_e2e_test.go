//go:build e2e

package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The guardrails pack under the real Claude Code CLI, against a scripted
// model that tries each policy in one session: a Bash `cat .env`
// (protected_paths), `rm -rf ~/keep` and `git reset --hard`
// (destructive_commands, deny and ask), a Bash whose output holds an AWS key
// and a GitHub token (secrets), then a final answer the failing test command
// holds back once (test_gate).
func TestClaudeGuardrailsPack(t *testing.T) {
	const (
		envSecret = "envsecret-Q7ZP4M2K9X"
		awsKey    = "AKIAIOSFODNN7EXAMPLE"
		ghToken   = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
		failText  = "FAIL: TestParse: want 3, got 4"
	)
	p := newProject(t, `
[bots.main]
behaviors = ["guardrails"]
ceiling = ["read", "write", "exec", "network", "spawn"]

[bots.main.config.guardrails.protected_paths]
[bots.main.config.guardrails.destructive_commands]
[bots.main.config.guardrails.secrets]
[bots.main.config.guardrails.test_gate]
read = "test"

[harness.claude]
bot = "main"

[harness.reads.exec.test]
argv = ["sh", "-c", "echo run >> test-runs; if [ \"$(wc -l < test-runs)\" -ge 2 ]; then echo ok; exit 0; fi; echo '`+failText+`'; exit 1"]
timeout = "20s"
`, nil)
	os.MkdirAll(filepath.Join(p.dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(p.dir, ".env"), []byte("TOKEN="+envSecret+"\n"), 0o644)
	os.WriteFile(filepath.Join(p.dir, "creds.txt"), []byte("aws="+awsKey+"\ngh="+ghToken+"\n"), 0o644)
	keep := filepath.Join(p.home, "keep")
	os.WriteFile(keep, []byte("keep me"), 0o644)
	resetRan := filepath.Join(p.dir, "reset-ran")

	script := []block{
		{Tool: "Bash", ID: "toolu_env", Input: map[string]any{"command": "cat .env", "description": "show env"}},
		{Tool: "Bash", ID: "toolu_rm", Input: map[string]any{"command": "rm -rf ~/keep", "description": "clean home"}},
		{Tool: "Bash", ID: "toolu_reset", Input: map[string]any{"command": "touch " + resetRan + " && git reset --hard", "description": "reset"}},
		{Tool: "Bash", ID: "toolu_creds", Input: map[string]any{"command": "cat creds.txt", "description": "show creds"}},
		{Text: "first answer"},
		{Text: "fixed answer"},
		{Text: "a third answer"},
	}
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		return []block{script[min(n, len(script)-1)]}
	})
	res := p.run(t, api, "do the work", "--allowedTools", "Bash")
	reqs := api.requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6 (four tool calls, the answer the gate holds back, the answer after it)\nresult: %s", len(reqs), res.raw)
	}
	text := func(n int) string { return requestText(reqs[n]) }
	// the tool_result of a tool_use id in request n: its content and flags
	result := func(n int, id string) string {
		t.Helper()
		s := text(n)
		k := strings.Index(s, `"tool_use_id":"`+id+`"`)
		if k < 0 {
			t.Fatalf("request %d carries no result of %s: %s", n, id, s)
		}
		// a result's content precedes its id: from the previous id on
		return s[strings.LastIndex(s[:k], `"tool_use_id":"`)+1 : k]
	}

	// protected_paths: the read of .env is denied, the reason reaches the
	// model, and the file's content reaches no request. R4.3
	if r := result(1, "toolu_env"); !strings.Contains(r, ".env is protected") {
		t.Errorf("the protected_paths reason is not in the result of cat .env: %s", r)
	}
	for n := range reqs {
		if strings.Contains(text(n), envSecret) {
			t.Errorf("request %d carries the content of .env: %s", n, text(n))
		}
	}

	// destructive_commands: rm -rf of the home folder denied (rm_outside),
	// git reset --hard asked, which headless Claude Code refuses; neither
	// ran. R4.3
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("rm -rf ~/keep ran: %v", err)
	}
	if r := result(2, "toolu_rm"); !strings.Contains(r, "rm_outside") {
		t.Errorf("the rm_outside reason is not in the result of rm -rf ~/keep: %s", r)
	}
	if _, err := os.Stat(resetRan); err == nil {
		t.Error("the git reset --hard command ran")
	}
	if r := result(3, "toolu_reset"); !strings.Contains(r, "reset_hard") {
		t.Errorf("the reset_hard reason is not in the result of git reset --hard: %s", r)
	}
	denied := map[string]bool{}
	for _, d := range res.PermissionDenials {
		denied[d["tool_use_id"].(string)] = true
	}
	for _, id := range []string{"toolu_env", "toolu_rm", "toolu_reset"} {
		if !denied[id] {
			t.Errorf("%s is not in permission_denials: %v", id, res.PermissionDenials)
		}
	}
	if denied["toolu_creds"] {
		t.Errorf("cat creds.txt was denied: %v", res.PermissionDenials)
	}

	// secrets: the command ran, and its output reached the model redacted.
	r := result(4, "toolu_creds")
	for _, want := range []string{"[redacted:aws_access_key]", "[redacted:github_token]", "aws=", "gh="} {
		if !strings.Contains(r, want) {
			t.Errorf("the result of cat creds.txt lacks %q: %s", want, r)
		}
	}
	for n := range reqs {
		if s := text(n); strings.Contains(s, awsKey) || strings.Contains(s, ghToken) {
			t.Errorf("request %d carries a key: %s", n, s)
		}
	}

	// test_gate: the first answer is held back with the failures (in the
	// next request only), the test runs again at the second stop, passes,
	// and the agent stops. R3.5
	if strings.Contains(text(4), failText) || !strings.Contains(text(5), failText) {
		t.Errorf("the test failure is not (only) in the request after the first answer: %s", text(5))
	}
	runs, _ := os.ReadFile(filepath.Join(p.dir, "test-runs"))
	if got := strings.Count(string(runs), "run"); got != 2 {
		t.Errorf("the test command ran %d times, want 2", got)
	}
	if res.Result != "fixed answer" {
		t.Errorf("result %q", res.Result)
	}
}
