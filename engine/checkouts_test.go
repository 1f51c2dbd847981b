package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

// checkout writes a repository checkout at dir: attune.toml naming the
// store and the pack folder bots/ with the ledger program (and pack.toml
// when packFile is not empty). It returns the loaded configuration.
func checkout(t *testing.T, dir, storeSpec, packDir, packFile, program string) *config.Config {
	t.Helper()
	pack := filepath.Join(dir, packDir)
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pack, program+".lua"), []byte(sharedLedger), 0o644); err != nil {
		t.Fatal(err)
	}
	if packFile != "" {
		if err := os.WriteFile(filepath.Join(pack, "pack.toml"), []byte(packFile), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	toml := "[engine]\nstore = " + jsonString(storeSpec) + "\nproject = \"team\"\npacks = [\"" + packDir + "\"]\n[bots.main]\nbehaviors = [\"" + program + "\"]\n"
	path := filepath.Join(dir, "attune.toml")
	if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func jsonString(s string) string {
	b, _ := json.Marshal(s) // a TOML basic string: JSON's escapes, without HTML's
	return strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(string(b))
}

// sharedCheckouts: two checkouts of one repository at different paths
// (different machines, in effect), each engine opening the store its
// attune.toml names, serve the same project owner: the owner belongs to
// the program's name within its pack's identity, not the pack's path. A
// program of another name is still refused (R5.10).
func sharedCheckouts(t *testing.T, storeSpec string) {
	ctx := context.Background()
	root := t.TempDir()
	alice := checkout(t, filepath.Join(root, "home", "alice", "repo"), storeSpec, "bots", "", "ledger")
	bob := checkout(t, filepath.Join(root, "work", "bob", "clone-2"), storeSpec, "bots", "", "ledger")
	// a third checkout keeps its pack in another folder, naming it by pack.toml
	carol := checkout(t, filepath.Join(root, "carol"), storeSpec, "attune-bots", "id = \"bots\"\n", "ledger")
	var insts []*Instance
	for k, cfg := range []*config.Config{alice, bob, carol} {
		e, err := New(ctx, Options{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		i, err := e.Start(ctx, StartOptions{ID: []string{"alice", "bob", "carol"}[k], Bot: "main"})
		if err != nil {
			t.Fatalf("checkout %d: %v", k, err)
		}
		insts = append(insts, i)
	}
	want := 0.0
	for k, i := range insts {
		want += float64(k + 1)
		out := i.Method(ctx, MethodCall{Owner: "ledger", Method: "add", Input: map[string]any{"by": float64(k + 1)}})
		if out.Status != StatusOK || out.Result != want {
			t.Fatalf("checkout %d: %+v (want %v)", k, out, want)
		}
	}
	// another pack's program of the same name, or another program, is refused
	for _, c := range []struct{ pack, file, program string }{{"bots", "id = \"other\"\n", "ledger"}} {
		cfg := checkout(t, filepath.Join(root, "mallory"), storeSpec, c.pack, c.file, c.program)
		e, err := New(ctx, Options{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Start(ctx, StartOptions{ID: "mallory", Bot: "main"})
		e.Close()
		if CodeOf(err) != CodeOwner || !strings.Contains(err.Error(), "belongs to program ledger (pack bots at ") {
			t.Fatalf("another pack's program: %v", err)
		}
	}
}

func TestCheckoutsShareOwnersSQLite(t *testing.T) {
	sharedCheckouts(t, "sqlite:"+filepath.Join(t.TempDir(), "shared.db"))
}

// A claim recorded before packs had identities names the pack's path: the
// program of the same name claims it again under its pack's identity, and
// another program is still refused.
func TestOwnerClaimMigratesFromPath(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	old, _ := json.Marshal(map[string]string{"program": "a", "pack": "/home/alice/repo/scratch"})
	if err := st.PutRecord(ctx, "owner-program", ownerLog(ScopeProject, "default", "x"), old); err != nil {
		t.Fatal(err)
	}
	red := `define.reducer("x", function(s, a) s.n = s.n + 1 return s end, {scope = "project", init = {n = 0}})
define.method("x", "add", function(ctx, s) propose({type = "add"}) return s.n + 1 end, {kind = "command"})`
	e := testEngine(t, "[engine]\nproject = \"default\"\n[bots.a]\nbehaviors = [\"a\"]\n[bots.b]\nbehaviors = [\"b\"]\n",
		map[string]string{"a.lua": red, "b.lua": red}, func(o *Options) { o.Store = st })
	if _, err := e.Start(ctx, StartOptions{ID: "b", Bot: "b"}); CodeOf(err) != CodeOwner || !strings.Contains(err.Error(), "belongs to program a (pack /home/alice/repo/scratch)") {
		t.Fatalf("another program, old claim: %v", err)
	}
	a := start(t, e, "a", "a")
	mustOK(t, hostCall(a, "x", "add", nil))
	got, err := st.GetRecord(ctx, "owner-program", ownerLog(ScopeProject, "default", "x"))
	if err != nil {
		t.Fatal(err)
	}
	var rec ownerProgram
	json.Unmarshal(got, &rec)
	if rec.Program != "a" || rec.PackID != "scratch" {
		t.Fatalf("claim not rewritten to the pack's identity: %s", got)
	}
	if _, err := e.Start(ctx, StartOptions{ID: "b2", Bot: "b"}); CodeOf(err) != CodeOwner {
		t.Fatalf("another program after the migration: %v", err)
	}
}
