//go:build e2e

package hook

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/internal/peertest"
)

// codexHooks asks the real `codex app-server` (hooks/list) which hooks it
// finds for the project dir, with CODEX_HOME home.
func codexHooks(t *testing.T, home, dir string) []codexListed {
	t.Helper()
	bin := filepath.Join(peertest.Peers(t, ".bin/codex"), "node_modules", ".bin", "codex")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	fmt.Fprintln(in, `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"attune-test","version":"1"}}}`)
	fmt.Fprintln(in, `{"method":"initialized"}`)
	fmt.Fprintf(in, `{"id":2,"method":"hooks/list","params":{"cwds":[%q]}}`+"\n", dir)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks    []codexListed
					Warnings []string
					Errors   []string
				}
			}
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		var hooks []codexListed
		for _, d := range msg.Result.Data {
			if len(d.Warnings)+len(d.Errors) > 0 {
				t.Errorf("codex warns: %v %v", d.Warnings, d.Errors)
			}
			hooks = append(hooks, d.Hooks...)
		}
		return hooks
	}
	t.Fatalf("codex app-server gave no hooks/list answer: %v", sc.Err())
	return nil
}

type codexListed struct {
	Key, Command, CurrentHash, TrustStatus string
	TimeoutSec                             int
}

// The real Codex (0.169) finds attune's entries, project and user, and
// reports every one of them trusted by the trust entries install wrote:
// the keys and hashes attune computes are Codex's own. The user's hook in
// the same event stays as it was (untrusted), and after uninstall only it
// is left.
func TestCodexInstallTrustedByCodex(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "codex-home")
	dir := filepath.Join(root, "proj")
	os.MkdirAll(filepath.Join(dir, ".codex"), 0o755)
	os.MkdirAll(home, 0o700)
	if err := exec.Command("git", "init", "-q", dir).Run(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(fmt.Sprintf("model = \"gpt-5.5\"\n[projects.%q]\ntrust_level = \"trusted\"\n", dir)), 0o600)
	os.WriteFile(filepath.Join(dir, ".codex", "hooks.json"), []byte(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]}}`), 0o644)
	w := Where{Project: dir, Home: root, Getenv: func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}}
	in := Install{Binary: "/opt/my attune/attune", Config: filepath.Join(dir, "attune.toml")}
	for _, scope := range []Scope{ScopeProject, ScopeUser} {
		path, err := HookFile("codex", scope, w)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := InstallHooks("codex", path, in, w); err != nil {
			t.Fatal(err)
		}
	}
	hooks := codexHooks(t, home, dir)
	ours := 0
	for _, h := range hooks {
		if !strings.Contains(h.Command, "attune") {
			if h.Command != "echo mine" || h.TrustStatus != "untrusted" {
				t.Errorf("the user's hook: %+v", h)
			}
			continue
		}
		ours++
		if h.TrustStatus != "trusted" || h.TimeoutSec != 35 {
			t.Errorf("attune's hook %s: %s, timeout %d (hash %s)", h.Key, h.TrustStatus, h.TimeoutSec, h.CurrentHash)
		}
	}
	if ours != 12 {
		t.Fatalf("codex lists %d of attune's hooks, want 12 (6 events, project and user): %+v", ours, hooks)
	}
	for _, scope := range []Scope{ScopeProject, ScopeUser} {
		path, _ := HookFile("codex", scope, w)
		if _, err := UninstallHooks("codex", path, w); err != nil {
			t.Fatal(err)
		}
	}
	hooks = codexHooks(t, home, dir)
	if len(hooks) != 1 || hooks[0].Command != "echo mine" {
		t.Fatalf("after uninstall: %+v", hooks)
	}
}

// With the attune binary gone after install, the real Claude Code blocks
// the Bash call (onFailure "block": the failed hook counts as exit 2)
// instead of running it, and the model's next request carries the failure.
func TestClaudeMissingBinaryBlocks(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `guard.tool("claude/Bash", function(call, invoke) return invoke() end)`})
	gone := filepath.Join(t.TempDir(), "moved-away", "attune")
	if err := InstallClaude(filepath.Join(p.dir, ".claude", "settings.json"), Install{Binary: gone, Config: p.cfg}); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(p.dir, "ran")
	var next string
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{{Tool: "Bash", ID: "toolu_touch", Input: map[string]any{"command": "touch " + marker, "description": "touch"}}}
		}
		b, _ := json.Marshal(req["messages"])
		next = string(b)
		return []block{{Text: "done"}}
	})
	p.run(t, api, "touch it", "--allowedTools", "Bash")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the Bash call ran with attune missing")
	}
	if !strings.Contains(next, "toolu_touch") || !strings.Contains(next, "moved-away") {
		t.Errorf("the next request does not carry the hook's failure: %s", next)
	}
}

// copilotHooks asks the real Copilot CLI (--headless --stdio, the SDK's
// hooks.discover) which hooks it finds for the project dir, with HOME and
// COPILOT_HOME under home and the folder trusted.
func copilotHooks(t *testing.T, home, dir string) []map[string]any {
	t.Helper()
	bin := filepath.Join(peertest.Peers(t, ".bin/copilot"), "node_modules", ".bin", "copilot")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-auto-update", "--stdio", "--no-auto-login")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "COPILOT_HOME="+filepath.Join(home, ".copilot"), "COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:9/v1", "COPILOT_MODEL=stand-in")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"hooks.discover","params":{"projectPaths":[%q]}}`, dir)
	fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(req), req)
	r := bufio.NewReader(out)
	for {
		n := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("copilot gave no hooks.discover answer: %v\n%s", err, errb.String())
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length:"); ok {
				fmt.Sscan(v, &n)
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Hooks            []map[string]any
				Warnings, Errors []string
			}
		}
		if json.Unmarshal(body, &msg) != nil || msg.ID != 1 {
			continue
		}
		if len(msg.Result.Warnings)+len(msg.Result.Errors) > 0 {
			t.Errorf("copilot warns: %v %v", msg.Result.Warnings, msg.Result.Errors)
		}
		return msg.Result.Hooks
	}
}

// The real Copilot CLI (1.0.102) loads the attune.json install writes, in
// the project (.github/hooks, a trusted folder) and the user's
// $COPILOT_HOME/hooks, with every event attune writes mapped to one of its
// own.
func TestCopilotInstallDiscovered(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	dir := filepath.Join(root, "proj")
	os.MkdirAll(filepath.Join(home, ".copilot"), 0o700)
	if err := exec.Command("git", "init", "-q", dir).Run(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, ".copilot", "config.json"), []byte(fmt.Sprintf(`{"trusted_folders": [%q]}`, dir)), 0o600)
	w := Where{Project: dir, Home: home, Getenv: func(k string) string {
		if k == "COPILOT_HOME" {
			return filepath.Join(home, ".copilot")
		}
		return ""
	}}
	spec, _ := harnessSpecs("copilot")
	for _, scope := range []Scope{ScopeProject, ScopeUser} {
		path, _ := HookFile("copilot", scope, w)
		if _, err := InstallHooks("copilot", path, Install{Binary: "/opt/attune/bin/attune"}, w); err != nil {
			t.Fatal(err)
		}
	}
	byOrigin := map[string]map[string]bool{}
	for _, h := range copilotHooks(t, home, dir) {
		o, _ := h["origin"].(string)
		if byOrigin[o] == nil {
			byOrigin[o] = map[string]bool{}
		}
		byOrigin[o][fmt.Sprint(h["hookType"])] = true
	}
	for _, o := range []string{"repository", "user"} {
		if len(byOrigin[o]) != len(spec.events) || !byOrigin[o]["preToolUse"] || !byOrigin[o]["userPromptSubmitted"] || !byOrigin[o]["agentStop"] {
			t.Errorf("%s hooks: %v, want the %d events %v", o, byOrigin[o], len(spec.events), spec.events)
		}
	}
}
