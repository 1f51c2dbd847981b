package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/hook"
)

// userCache is the user's cache folder, read before any test moves HOME.
var userCache, _ = os.UserCacheDir()

// stableProgram is an existing file outside any temporary folder, with
// attune in its path, to stand for an installed attune (the test binary
// itself is go test's temporary build, which install refuses): this
// package's main.go, in cmd/attune. The hooks are written, never run.
//
// A checkout inside a temporary folder (a CI clone under /tmp) has no such
// file: then a file in the user's cache folder stands for it.
func stableProgram(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if hook.CheckBinary(p) == nil {
		return p
	}
	if userCache == "" {
		t.Fatal("no user cache folder for a stand-in binary")
	}
	p = filepath.Join(userCache, "attune-tests", "attune")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := hook.CheckBinary(p); err != nil {
		t.Fatalf("no stand-in binary outside temporary folders: %v", err)
	}
	return p
}

func writeConfig(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "attune.toml")
	if err := os.WriteFile(p, []byte("[engine]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// `attune hook install HARNESS --user` writes the user's own file of each
// harness under $HOME (Claude Code's ~/.claude/settings.json included), with
// no --config (each project's attune.toml is found when the hook runs);
// uninstall --user removes it again. It prints what it wrote.
func TestHookInstallUser(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("CODEX_HOME", filepath.Join(home, ".codex"))
	t.Setenv("COPILOT_HOME", "")
	t.Setenv("GEMINI_CLI_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	bin := stableProgram(t)
	for harness, file := range map[string]string{
		"claude":  ".claude/settings.json",
		"codex":   ".codex/hooks.json",
		"gemini":  ".gemini/settings.json",
		"copilot": ".copilot/hooks/attune.json",
		"cursor":  ".cursor/hooks.json",
	} {
		path := filepath.Join(home, filepath.FromSlash(file))
		code, out, errOut := run("hook", "install", harness, "--user", "--binary", bin)
		if code != 0 || !strings.Contains(out, "attune hooks installed in "+path) {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", harness, code, out, errOut)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", harness, err)
		}
		if strings.Contains(string(data), "--config") || !strings.Contains(string(data), " hook "+harness) {
			t.Errorf("%s: %s", harness, data)
		}
		if harness == "codex" && !strings.Contains(out, "trusted in "+filepath.Join(home, ".codex", "config.toml")) {
			t.Errorf("codex: no trust line: %s", out)
		}
		code, out, errOut = run("hook", "uninstall", harness, "--user")
		if code != 0 || !strings.Contains(out, "removed from") {
			t.Fatalf("%s uninstall: exit %d, %q %q", harness, code, out, errOut)
		}
	}
}

// --local writes Claude Code's .claude/settings.local.json in the project;
// the other harnesses have no such file and refuse it.
func TestHookInstallLocal(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir)
	code, out, errOut := run("hook", "install", "claude", "--project", dir, "--local", "--binary", stableProgram(t))
	if code != 0 {
		t.Fatalf("exit %d, %q %q", code, out, errOut)
	}
	var m map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, ".claude", "settings.local.json"))
	if json.Unmarshal(data, &m) != nil || m["hooks"] == nil {
		t.Fatalf("settings.local.json: %s", data)
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude", "settings.json")); err == nil {
		t.Error("settings.json written too")
	}
	code, _, errOut = run("hook", "install", "gemini", "--project", dir, "--local", "--binary", stableProgram(t))
	if code != 2 || !strings.Contains(errOut, "--local") {
		t.Errorf("gemini --local: exit %d, %q", code, errOut)
	}
	code, _, errOut = run("hook", "install", "claude", "--project", dir, "--local", "--user")
	if code != 2 {
		t.Errorf("--local --user: exit %d, %q", code, errOut)
	}
}

// install refuses a harness it does not know, a --binary that is not
// there, and --http for a harness that runs commands; nothing is written.
func TestHookInstallRefusals(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"vim"}, 2, "want the harness"},
		{[]string{"gemini", "--binary", filepath.FromSlash("/nonexistent/attune")}, 1, "no such program"},
		{[]string{"codex", "--http", "127.0.0.1:8787"}, 2, "--http is for Claude Code"},
		{[]string{"claude"}, 1, "go install github.com/attune-dev/attune/cmd/attune@latest"}, // this binary is go test's build
	} {
		args := append([]string{"hook", "install"}, c.args...)
		args = append(args, "--project", dir)
		if c.args[0] == "vim" {
			args = []string{"hook", "install", "vim"}
		}
		code, _, errOut := run(args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errOut)
		}
	}
	for _, sub := range []string{".claude", ".codex", ".gemini"} {
		if _, err := os.Stat(filepath.Join(dir, sub)); err == nil {
			t.Errorf("%s written", sub)
		}
	}
}
