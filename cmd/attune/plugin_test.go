package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/attune-dev/attune/hook"
)

// The Claude Code plugin's hooks are the events `attune hook install
// claude` writes, tool events matching every tool, each running the
// plugin's launcher; the repository's marketplace lists the plugin by its
// name. (The real CLI loading it: hook/plugin_e2e_test.go, -tags e2e.)
func TestClaudePluginManifests(t *testing.T) {
	var hooks struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct{ Type, Command string }
		} `json:"hooks"`
	}
	readJSON(t, "../../claude-plugin/hooks/hooks.json", &hooks)
	var events []string
	for ev, groups := range hooks.Hooks {
		events = append(events, ev)
		tool := strings.Contains(ev, "ToolUse")
		if len(groups) != 1 || len(groups[0].Hooks) != 1 || (groups[0].Matcher != nil) != tool || (tool && *groups[0].Matcher != "*") {
			t.Errorf("%s: want one group (matcher \"*\" for a tool event) with one hook: %+v", ev, groups)
			continue
		}
		if h := groups[0].Hooks[0]; h.Type != "command" || h.Command != `"${CLAUDE_PLUGIN_ROOT}/scripts/attune-hook"` {
			t.Errorf("%s: hook %+v", ev, h)
		}
	}
	want := hook.ClaudeEvents()
	slices.Sort(events)
	slices.Sort(want)
	if !slices.Equal(events, want) {
		t.Errorf("the plugin hooks %v, attune maps %v", events, want)
	}
	var plugin struct{ Name, Version string }
	readJSON(t, "../../claude-plugin/.claude-plugin/plugin.json", &plugin)
	var market struct {
		Name    string
		Plugins []struct{ Name, Source string }
	}
	readJSON(t, "../../.claude-plugin/marketplace.json", &market)
	if plugin.Name != "attune" || len(market.Plugins) != 1 || market.Plugins[0].Name != plugin.Name || market.Plugins[0].Source != "./claude-plugin" {
		t.Errorf("plugin %+v, marketplace %+v", plugin, market)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The plugin's launcher runs `attune hook claude` where the project has an
// attune.toml, answers nothing where it has none, and fails closed (exit
// 2, saying why) where it has one but attune is not installed.
func TestClaudePluginLauncher(t *testing.T) {
	launcher, err := filepath.Abs("../../claude-plugin/scripts/attune-hook")
	if err != nil {
		t.Fatal(err)
	}
	proj, bin := t.TempDir(), t.TempDir()
	fake := write(t, bin, "attune", "#!/bin/sh\necho \"ran $*\"\n")
	os.Chmod(fake, 0o755)
	launch := func(env ...string) (int, string) {
		cmd := exec.Command("sh", launcher)
		cmd.Dir = t.TempDir()
		cmd.Env = append([]string{"CLAUDE_PROJECT_DIR=" + proj}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode(), string(out)
			}
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := launch("PATH=" + bin + ":/usr/bin:/bin"); code != 0 || out != "" {
		t.Errorf("no attune.toml: exit %d, %q", code, out)
	}
	write(t, proj, "attune.toml", "")
	if code, out := launch("PATH=" + bin + ":/usr/bin:/bin"); code != 0 || out != "ran hook claude\n" {
		t.Errorf("attune on PATH: exit %d, %q", code, out)
	}
	if code, out := launch("PATH=/usr/bin:/bin", "ATTUNE_BINARY="+fake); code != 0 || out != "ran hook claude\n" {
		t.Errorf("ATTUNE_BINARY: exit %d, %q", code, out)
	}
	if code, out := launch("PATH=/nonexistent"); code != 2 || !strings.Contains(out, "the attune binary is not on PATH") {
		t.Errorf("no attune: exit %d, %q", code, out)
	}
}
