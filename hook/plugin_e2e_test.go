//go:build e2e

package hook

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/internal/peertest"
)

// pluginProject is a Claude Code project with an attune.toml and no hooks
// of its own in .claude/settings.json: only the plugin runs attune. attune
// is on PATH, as the plugin expects.
func pluginProject(t *testing.T) (*project, string) {
	t.Helper()
	p := &project{dir: t.TempDir(), home: t.TempDir()}
	f := filepath.Join(p.dir, "packs", "p", "p.lua")
	os.MkdirAll(filepath.Dir(f), 0o755)
	if err := os.WriteFile(f, []byte(`
guard.tool("claude/Bash", function(call, invoke)
  if call.args.command:find("rm %-rf") then return refuse("the attune plugin refuses rm -rf here") end
  return invoke()
end)`), 0o644); err != nil {
		t.Fatal(err)
	}
	p.cfg = filepath.Join(p.dir, "attune.toml")
	if err := os.WriteFile(p.cfg, []byte("[engine]\npacks = [\"packs/p\"]\n"+mainBot), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".claude", "settings.json")); err == nil {
		t.Fatal("the project has settings of its own")
	}
	t.Setenv("PATH", filepath.Dir(attuneBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return p, filepath.Join(peertest.Root(t), "claude-plugin")
}

// assertPluginDenies runs Claude Code on a model that asks for rm -rf and
// checks the plugin's guard denied it: the command did not run, Claude Code
// reports the denial, and the reason reached the model's next request.
func assertPluginDenies(t *testing.T, p *project, args ...string) {
	t.Helper()
	marker := filepath.Join(p.dir, "ran")
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{{Tool: "Bash", ID: "toolu_rm", Input: map[string]any{"command": "touch " + marker + " && rm -rf " + p.dir + "/x", "description": "clean"}}}
		}
		return []block{{Text: "all done"}}
	})
	res := p.run(t, api, "clean up", append([]string{"--allowedTools", "Bash"}, args...)...)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused command ran")
	}
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0]["tool_use_id"] != "toolu_rm" {
		t.Errorf("permission_denials: %v", res.PermissionDenials)
	}
	reqs := api.requests()
	if len(reqs) != 2 || !strings.Contains(requestText(reqs[1]), "the attune plugin refuses rm -rf here") {
		t.Fatalf("the refusal reason is not in the next request (%d requests): %s\n%s", len(reqs), requestText(reqs[len(reqs)-1]), res.raw)
	}
}

// R4.3: the plugin, loaded with --plugin-dir, runs attune's guard on
// Claude Code's Bash call and denies it.
func TestClaudePluginDir(t *testing.T) {
	p, plugin := pluginProject(t)
	assertPluginDenies(t, p, "--plugin-dir", plugin)
}

// R4.3: the repository is a local marketplace: `claude plugin marketplace
// add` and `claude plugin install` install the plugin, and it denies the
// call with no --plugin-dir.
func TestClaudePluginMarketplace(t *testing.T) {
	p, _ := pluginProject(t)
	claude := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, claudeBin(t), args...)
		cmd.Dir = p.dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.home, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("claude %v: %v\n%s", args, err, out)
		}
	}
	claude("plugin", "marketplace", "add", peertest.Root(t))
	claude("plugin", "install", "attune@attune")
	assertPluginDenies(t, p)
}

// A project without attune.toml is not attune's: the plugin answers
// nothing, and the call runs as without it.
func TestClaudePluginNoConfig(t *testing.T) {
	p, plugin := pluginProject(t)
	os.Remove(p.cfg)
	out := filepath.Join(p.dir, "out.txt")
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{{Tool: "Bash", ID: "toolu_echo", Input: map[string]any{"command": "echo hi > " + out, "description": "write"}}}
		}
		return []block{{Text: "done"}}
	})
	res := p.run(t, api, "write", "--allowedTools", "Bash", "--plugin-dir", plugin)
	if data, err := os.ReadFile(out); err != nil || strings.TrimSpace(string(data)) != "hi" || len(res.PermissionDenials) != 0 {
		t.Fatalf("out.txt = %q, %v; denials %v", data, err, res.PermissionDenials)
	}
}
