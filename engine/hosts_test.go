package engine

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

const sharedLedger = `
define.reducer("ledger", function(s, a) s.n = s.n + a.by return s end, {init = {n = 0}, scope = "project"})
define.method("ledger", "add", function(ctx, s, i) propose({type = "add", by = i.by}) return s.n + i.by end, {kind = "command"})
define.method("ledger", "total", function(ctx, s, i) return s.n end)
`

// twoHosts runs two engines (two hosts) on one store target: they share
// project owners; an append by one is seen by the other (R5.10).
func twoHosts(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte("[engine]\nproject = \"p\"\n[bots.main]\nbehaviors = [\"ledger\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	pack := fstest.MapFS{"ledger.lua": {Data: []byte(sharedLedger)}}
	var insts []*Instance
	for k, id := range []string{"host-a", "host-b"} {
		st := open()
		e, err := New(ctx, Options{Config: cfg, Store: st, PacksFirst: []pin.Pack{{Name: "p", FS: pack}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(); st.Close() })
		i, err := e.Start(ctx, StartOptions{ID: id, Bot: "main"})
		if err != nil {
			t.Fatal(k, err)
		}
		insts = append(insts, i)
	}
	a, b := insts[0], insts[1]
	if a.Session() == b.Session() {
		t.Fatal("the hosts' instances share a session")
	}
	if out := a.Method(ctx, MethodCall{Owner: "ledger", Method: "add", Input: map[string]any{"by": 5.0}}); out.Status != StatusOK || out.Result != 5.0 {
		t.Fatalf("host a: %+v", out)
	}
	if out := b.Method(ctx, MethodCall{Owner: "ledger", Method: "add", Input: map[string]any{"by": 2.0}}); out.Status != StatusOK || out.Result != 7.0 {
		t.Fatalf("host b did not see host a's append: %+v", out)
	}
	if out := a.Method(ctx, MethodCall{Owner: "ledger", Method: "total"}); out.Result != 7.0 || out.Revision != 2 {
		t.Fatalf("host a did not see host b's append: %+v", out)
	}
}

// R5.10: two hosts on one SQLite file.
func TestTwoHostsSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	twoHosts(t, func() store.Store {
		st, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
