package hook

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hook doctor checks an installed project: binary present and the same
// build, config loads, store opens, a dry-run PreToolUse answers; a
// broken install (the binary moved away) is a FAIL with what to fix and
// exit status 1.
func TestHookDoctor(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "attune.toml"), []byte("[bots.main]\nceiling = [\"exec\"]\n"), 0o644)
	bin := filepath.Join(dir, "bin", "attune")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	data, err := os.ReadFile(attuneBin)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bin, data, 0o755)
	if err := InstallClaude(filepath.Join(dir, ".claude", "settings.json"), Install{Binary: bin, Config: filepath.Join(dir, "attune.toml")}); err != nil {
		t.Fatal(err)
	}
	doctor := func() (int, string) {
		cmd := exec.Command(attuneBin, "hook", "doctor", "--project", dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String()
	}
	code, out := doctor()
	for _, want := range []string{"ok   binary", "ok   version", "ok   config", "ok   store", "ok   dry run", "every check passed"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("a sound install: %d, no %q in\n%s", code, want, out)
		}
	}
	// the binary moved away: the harness would run nothing
	os.Rename(bin, bin+".moved")
	code, out = doctor()
	if code != 1 || !strings.Contains(out, "FAIL binary") || !strings.Contains(out, "missing") || !strings.Contains(out, "fix: run attune hook install claude") {
		t.Errorf("the binary moved away: %d\n%s", code, out)
	}
	// another build of attune
	os.WriteFile(bin, []byte("#!/bin/sh\necho attune 0.0.1\n"), 0o755)
	code, out = doctor()
	if code != 1 || !strings.Contains(out, "FAIL version") {
		t.Errorf("another build: %d\n%s", code, out)
	}
	// a broken configuration
	os.Rename(bin+".moved", bin)
	os.WriteFile(filepath.Join(dir, "attune.toml"), []byte("[bots.main]\nceilng = []\n"), 0o644)
	code, out = doctor()
	if code != 1 || !strings.Contains(out, "FAIL config") || !strings.Contains(out, "ceilng") {
		t.Errorf("a broken configuration: %d\n%s", code, out)
	}
	// no entries at all
	os.RemoveAll(filepath.Join(dir, ".claude"))
	code, out = doctor()
	if code != 1 || !strings.Contains(out, "FAIL hook entries") {
		t.Errorf("no entries: %d\n%s", code, out)
	}
}

func TestShellWords(t *testing.T) {
	for in, want := range map[string][]string{
		`/a/attune hook claude --config /x/attune.toml`:   {"/a/attune", "hook", "claude", "--config", "/x/attune.toml"},
		`'/my dir/attune' hook claude --config 'it'\''s'`: {"/my dir/attune", "hook", "claude", "--config", "it's"},
		`"C:/Program Files/attune.exe" hook codex`:        {"C:/Program Files/attune.exe", "hook", "codex"},
		`/bin/sh -c '/a/attune hook gemini --config /x/a.toml || { echo "attune hook gemini failed (exit $?)" >&2; exit 2; }'`: {"/a/attune", "hook", "gemini", "--config", "/x/a.toml"},
		`C:/a/attune.exe hook codex || exit 2`: {"C:/a/attune.exe", "hook", "codex"},
	} {
		if got := commandArgv(in); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
