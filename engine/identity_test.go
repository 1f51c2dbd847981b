package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

const stampedLedger = `
define.reducer("ledger", function(s, a) s.n = s.n + 1 return s end, {scope = "project", init = {n = 0}})
define.method("ledger", "add", function(ctx, s, input) propose({type = "add", k = input}) return s.n + 1 end, {kind = "command"})`

// Every owner action records who appended it, from which host and when:
// [identity] author and host when set.
func TestActionsRecordIdentity(t *testing.T) {
	t.Setenv("ATTUNE_AUTHOR", "")
	t.Setenv("ATTUNE_HOST", "")
	e := testEngine(t, "[identity]\nauthor = \"alice@example.com\"\nhost = \"build-7\"\n[bots.main]\nbehaviors = [\"p\"]\n",
		map[string]string{"p.lua": stampedLedger})
	i := start(t, e, "a", "main")
	before := time.Now()
	mustOK(t, hostCall(i, "ledger", "add", "x"))
	mustOK(t, hostCall(i, "ledger", "add", "y"))
	after := time.Now()
	if err := i.ResetOwner(context.Background(), "ledger"); err != nil {
		t.Fatal(err)
	}
	got, err := i.Actions(context.Background(), "ledger", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %+v", got)
	}
	for k, a := range got[:2] {
		m, _ := a.Action.(map[string]any)
		if a.Seq != int64(k+1) || a.Rev != 1 || m["k"] != []string{"x", "y"}[k] || a.Author != "alice@example.com" || a.Host != "build-7" ||
			a.At.Before(before.Add(-time.Millisecond)) || a.At.After(after.Add(time.Millisecond)) {
			t.Fatalf("action %d: %+v (between %v and %v)", k, a, before, after)
		}
	}
	if !got[2].Reset || got[2].Seq != 3 {
		t.Fatalf("reset: %+v", got[2])
	}
	// a second call from the offset reads only what follows
	if rest, _ := i.Actions(context.Background(), "ledger", 2, 0); len(rest) != 1 || rest[0].Seq != 3 {
		t.Fatalf("after 2: %+v", rest)
	}
}

// Without [identity]: git's user.email in the configuration's folder, else
// $USER; the hostname.
func TestIdentityDefaults(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("USER", "bob")
	host, _ := os.Hostname()
	dir := t.TempDir()
	open := func() Identity {
		cfg, err := config.Parse(filepath.Join(dir, "attune.toml"), []byte("[bots.main]\nbehaviors = []\n"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Dir = dir
		e, err := New(context.Background(), Options{Config: cfg, Store: store.NewMemory()})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		return e.Identity()
	}
	if id := open(); id.Author != "bob" || id.Host != host {
		t.Fatalf("no git: %+v", id)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed for this test: %v", err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "bob@example.org"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if id := open(); id.Author != "bob@example.org" {
		t.Fatalf("git: %+v", id)
	}
	t.Setenv("ATTUNE_AUTHOR", "carol")
	t.Setenv("ATTUNE_HOST", "ci-3")
	if id := open(); id.Author != "carol" || id.Host != "ci-3" {
		t.Fatalf("environment: %+v", id)
	}
}
