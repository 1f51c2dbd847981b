package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `attune init` writes a project that `attune check` finds clean and whose
// scenario `attune test` passes, for every harness and pack init offers; the
// guard watches the harness's shell tool.
func TestInitCheckAndTest(t *testing.T) {
	for _, h := range initHarnesses {
		for _, p := range initPacks {
			t.Run(h.name+"/"+p.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "proj")
				code, out, errOut := run("init", dir, "--harness", h.name, "--pack", p.name)
				if code != 0 {
					t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
				}
				if !strings.Contains(out, "attune hook install "+h.name) {
					t.Errorf("init does not print the next step:\n%s", out)
				}
				guard, err := os.ReadFile(filepath.Join(dir, "packs", "project", "careful.lua"))
				if err != nil || !strings.Contains(string(guard), `guard.tool("`+h.shell+`"`) {
					t.Errorf("the guard does not watch %s: %v\n%s", h.shell, err, guard)
				}
				code, out, errOut = run("check", filepath.Join(dir, "attune.toml"))
				if code != 0 || strings.Contains(out, "warning") {
					t.Errorf("check: exit %d\n%s%s", code, out, errOut)
				}
				for _, path := range []string{filepath.Join(dir, "tests"), dir} { // the project folder: its attune.toml is no scenario
					code, out, errOut = run("test", path)
					if code != 0 || !strings.HasSuffix(out, "1 passed, 0 failed\n") {
						t.Errorf("test %s: exit %d\n%s%s", path, code, out, errOut)
					}
				}
			})
		}
	}
}

// The starter scenario can fail: a guard that lets rm -rf through fails it.
func TestInitScenarioCatchesABrokenGuard(t *testing.T) {
	dir := t.TempDir()
	if code, out, errOut := run("init", dir); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	write(t, dir, "packs/project/careful.lua", `guard.tool("claude/Bash", function(c, invoke) return invoke() end)`)
	code, out, _ := run("test", filepath.Join(dir, "tests"))
	if code != 1 || !strings.Contains(out, "0 passed, 1 failed") {
		t.Errorf("test with a broken guard: exit %d\n%s", code, out)
	}
}

// init refuses to overwrite a file, names it, exits 2 and writes nothing;
// the .gitignore is appended to once, keeping what it held.
func TestInitRefusesOverwriteAndKeepsGitignore(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".gitignore", "node_modules/\n*.log")
	write(t, dir, "tests/project.toml", "mine")
	code, _, errOut := run("init", dir)
	if code != 2 || !strings.Contains(errOut, filepath.Join(dir, "tests", "project.toml")) || strings.Contains(errOut, "attune.toml") {
		t.Errorf("init over a file: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "attune.toml")); err == nil {
		t.Error("init wrote attune.toml although it refused")
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "tests", "project.toml")); string(data) != "mine" {
		t.Errorf("the file was overwritten: %q", data)
	}
	os.Remove(filepath.Join(dir, "tests", "project.toml"))
	if code, out, errOut := run("init", "--harness", "gemini", dir); code != 0 { // flags before DIR too
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	want := "node_modules/\n*.log\n# attune's store (attune init)\n.attune/\n"
	if data, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); string(data) != want {
		t.Errorf(".gitignore = %q, want %q", data, want)
	}
	if added, err := appendGitignore(filepath.Join(dir, ".gitignore"), initIgnores); err != nil || len(added) != 0 {
		t.Errorf("a second append added %v (%v)", added, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); string(data) != want {
		t.Errorf(".gitignore after a second append = %q", data)
	}
	code, _, errOut = run("init", dir)
	if code != 2 || !strings.Contains(errOut, "attune.toml") {
		t.Errorf("a second init: exit %d\n%s", code, errOut)
	}
}

// Unknown harnesses and packs are usage errors that list the choices.
func TestInitBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--harness", "vim"}, "--harness vim: unknown harness; want one of claude, codex, gemini, copilot"},
		{[]string{"--pack", "nope"}, "--pack nope: unknown pack; want one of starter"},
		{[]string{"a"}, "one folder, got 2"},
	} {
		code, _, errOut := run(append([]string{"init", dir}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("init %v: exit %d\n%s", c.args, code, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a usage error wrote %d files", len(entries))
	}
}
