package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A configuration that names no project gets its repository's: the
// origin remote (every clone alike), else the root's name and a hash of
// its path (two repositories never share "default"); an explicit
// engine.project stands.
func TestRepoProject(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for k, remote := range []string{"git@github.com:acme/web.git", "https://alice@github.com/acme/web"} {
		repo := filepath.Join(root, []string{"alice", "bob"}[k], "clone")
		write(filepath.Join(repo, ".git", "config"), "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = "+remote+"\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
		write(filepath.Join(repo, "sub", "attune.toml"), "[bots.a]\nbehaviors = []\n")
		cfg, err := Load(filepath.Join(repo, "sub", "attune.toml"))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Engine.Project != "github.com/acme/web" {
			t.Fatalf("clone %d: project %q", k, cfg.Engine.Project)
		}
	}
	var got []string
	for _, d := range []string{"x/repo", "y/repo"} {
		write(filepath.Join(root, d, "attune.toml"), "")
		cfg, err := Load(filepath.Join(root, d, "attune.toml"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cfg.Engine.Project)
	}
	if got[0] == got[1] || !strings.HasPrefix(got[0], "repo-") || got[0] == DefaultProject {
		t.Fatalf("projects of two repositories without remotes: %q", got)
	}
	write(filepath.Join(root, "z", "attune.toml"), "[engine]\nproject = \"default\"\n")
	if cfg, err := Load(filepath.Join(root, "z", "attune.toml")); err != nil || cfg.Engine.Project != "default" {
		t.Fatalf("explicit project: %v %v", cfg, err)
	}
}
