package hostreads

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
)

func reads(t *testing.T, toml string) *config.Reads {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "attune.toml")
	os.WriteFile(path, []byte("[bots.main]\nbehaviors = []\n"+toml), 0o644)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Reads
}

func run(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

func TestReads(t *testing.T) {
	project := t.TempDir()
	run(t, project, "git", "init", "-q", "-b", "trunk")
	os.WriteFile(filepath.Join(project, "README.md"), []byte("# hello\n"), 0o644)
	run(t, project, "git", "add", ".")
	run(t, project, "git", "commit", "-q", "-m", "first commit")
	os.WriteFile(filepath.Join(project, "README.md"), []byte("# hello\nmore\n"), 0o644)
	os.WriteFile(filepath.Join(project, "new.txt"), []byte(strings.Repeat("x", 100)), 0o644)
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("s"), 0o644)
	os.Symlink(outside, filepath.Join(project, "link"))

	h := New(reads(t, `
[harness.reads]
"git/branch" = true
"git/status" = true
"git/diff" = {max_bytes = 20}
"git/log" = {count = 5}
"file/read" = {max_bytes = 50}
"clock/now" = true
env = ["ATTUNE_TEST_VAR"]
[harness.reads.exec.ok]
argv = ["sh", "-c", "echo out; echo err >&2; exit 3"]
[harness.reads.exec.slow]
argv = ["sleep", "5"]
timeout = "100ms"
`), project)
	h.Getenv = func(n string) (string, bool) {
		if n == "ATTUNE_TEST_VAR" {
			return "v", true
		}
		return "", false
	}
	h.Now = func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }
	ctx := context.Background()
	read := func(key string, arg ...any) (any, error) {
		if len(arg) > 0 {
			return h.Read(ctx, key, arg[0], true, project)
		}
		return h.Read(ctx, key, nil, false, project)
	}
	want := func(key string, want any, arg ...any) {
		t.Helper()
		got, err := read(key, arg...)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s %v: got %#v, %v; want %#v", key, arg, got, err, want)
		}
	}
	want("git/branch", "trunk")
	want("git/status", []any{" M README.md", "?? link", "?? new.txt"})
	want("git/log", []any{"first commit"})
	want("clock/now", "2026-12-01T10:00:00Z")
	want("env/ATTUNE_TEST_VAR", "v")
	want("file/read", "# hello\nmore\n", "README.md")
	want("file/read", strings.Repeat("x", 50)+"\n[attune: cut at 50 bytes (max_bytes)]", "new.txt")
	want("exec/ok", map[string]any{"code": float64(3), "stdout": "out\n", "stderr": "err\n"})
	if d, err := read("git/diff"); err != nil || !strings.HasPrefix(d.(string), "diff --git a/README") || !strings.Contains(d.(string), "cut at 20 bytes") {
		t.Errorf("git/diff: %q, %v", d, err)
	}
	if v, err := read("exec/slow"); err != nil || v.(map[string]any)["timed_out"] != true {
		t.Errorf("exec/slow: %v, %v", v, err)
	}
	for _, c := range []struct {
		key  string
		arg  []any
		is   error
		text string
	}{
		{"file/read", []any{"../x"}, ErrOutside, "no .."},
		{"file/read", []any{"/etc/passwd"}, ErrOutside, "relative"},
		{"file/read", []any{"link"}, ErrOutside, "links to"},
		{"file/read", nil, nil, "give the file's path"},
		{"env/HOME", nil, ErrNotEnabled, `env = ["HOME"]`},
		{"exec/rm", nil, ErrNotEnabled, "[harness.reads.exec.rm]"},
		{"net/get", nil, ErrNotEnabled, "no such key"},
	} {
		_, err := read(c.key, c.arg...)
		if err == nil || !strings.Contains(err.Error(), "admit/read "+c.key) || !strings.Contains(err.Error(), c.text) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%s %v: %v", c.key, c.arg, err)
		}
	}
	// a key the table does not enable names how to enable it
	h2 := New(nil, project)
	if _, err := h2.Read(ctx, "git/branch", nil, false, ""); !errors.Is(err, ErrNotEnabled) || !strings.Contains(err.Error(), `"git/branch" = true`) {
		t.Errorf("not enabled: %v", err)
	}
}

func TestReadsConfigErrors(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[harness.reads]\n\"git/brnch\" = true\n", "git/branch"},
		{"[harness.reads]\n\"git/diff\" = 3\n", "want true"},
		{"[harness.reads.exec.t]\ntimeout = \"1s\"\n", "argv"},
		{"[harness.reads]\n\"git/log\" = {cnt = 2}\n", "unknown key"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "attune.toml")
		os.WriteFile(path, []byte("[bots.main]\nbehaviors = []\n"+c.toml), 0o644)
		_, err := config.Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "harness.reads") {
			t.Errorf("%q: %v", c.toml, err)
		}
	}
}
