package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

// watchedLedger is a project owner whose every action its own program
// subscribes to: the subscription tells the host tool "seen" which action
// it got.
const watchedLedger = `
define.reducer("ledger", function(s, a) s.n = s.n + 1 return s end, {scope = "project", init = {n = 0}})
define.method("ledger", "add", function(ctx, s, input)
  propose({type = "add", by = input.by, k = input.k})
  return s.n + 1
end, {kind = "command"})
subscribe("ledger@project", function(ctx, action)
  call.tool("seen", {by = action.by, k = action.k})
end)
`

// feedCheckout writes a checkout at dir whose attune.toml names the store
// and whose pack holds the watched ledger.
func feedCheckout(t *testing.T, dir, storeSpec string) *config.Config {
	t.Helper()
	pack := filepath.Join(dir, "bots")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pack, "ledger.lua"), []byte(watchedLedger), 0o644); err != nil {
		t.Fatal(err)
	}
	toml := "[engine]\nstore = " + jsonString(storeSpec) + "\nproject = \"team\"\npacks = [\"bots\"]\n[bots.main]\nbehaviors = [\"ledger\"]\n"
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

// seenLog records what one engine's subscriptions saw.
type seenLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *seenLog) tool() HostTool {
	return HostTool{Path: "seen", Core: func(_ context.Context, c CoreCall) (any, error) {
		m := c.Args.(map[string]any)
		l.mu.Lock()
		l.seen = append(l.seen, fmt.Sprintf("%v/%v", m["by"], m["k"]))
		l.mu.Unlock()
		return nil, nil
	}}
}

func (l *seenLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// waitSeen waits until l saw want entries.
func (l *seenLog) waitSeen(t *testing.T, who string, want int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := l.get()
		if len(got) >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkSeen holds that got has every action of want exactly once, and the
// actions of each writer in the order that writer made them.
func checkSeen(t *testing.T, who string, got []string, writers map[string]int) {
	t.Helper()
	count := map[string]int{}
	next := map[string]int{}
	total := 0
	for _, n := range writers {
		total += n
	}
	for _, s := range got {
		count[s]++
		var by string
		var k int
		if _, err := fmt.Sscanf(s, "%1s/%d", &by, &k); err != nil {
			t.Fatalf("%s saw %q", who, s)
		}
		if k != next[by] {
			t.Fatalf("%s saw %s's action %d where %d was next (all: %q)", who, by, k, next[by], got)
		}
		next[by]++
	}
	for s, n := range count {
		if n != 1 {
			t.Fatalf("%s saw %s %d times", who, s, n)
		}
	}
	if len(got) != total {
		t.Fatalf("%s saw %d actions, want %d: %q", who, len(got), total, got)
	}
}

// feedAcross: two engines with stores of their own (two hosts, in effect)
// serve one project owner their programs subscribe to; A appends nA
// actions and B nB, interleaved, and each engine's subscriptions see every
// action of both exactly once, each writer's in its order (R5.8). mid,
// when set, runs halfway (a server restart): a command that fails meanwhile
// is called again with the same call id until it is answered (R5.6).
func feedAcross(t *testing.T, specA, specB string, shared store.Store, mid func()) {
	ctx := context.Background()
	root := t.TempDir()
	var logs [2]seenLog
	var insts [2]*Instance
	for k, spec := range []string{specA, specB} {
		cfg := feedCheckout(t, filepath.Join(root, []string{"alice", "bob"}[k], "repo"), spec)
		e, err := New(ctx, Options{Config: cfg, Store: shared})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		e.RegisterTool(logs[k].tool())
		if insts[k], err = e.Start(ctx, StartOptions{ID: []string{"a", "b"}[k], Bot: "main"}); err != nil {
			t.Fatal(err)
		}
	}
	const nA, nB = 30, 6
	add := func(w int, by string, k int) {
		id := fmt.Sprintf("%s-%d", by, k)
		for try := 0; ; try++ {
			out := insts[w].Method(ctx, MethodCall{Owner: "ledger", Method: "add", CallID: id, Input: map[string]any{"by": by, "k": float64(k)}})
			if out.Status == StatusOK {
				return
			}
			if try > 400 {
				t.Fatalf("%s: %+v", id, out)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	b := 0
	for k := range nA {
		if k == nA/2 && mid != nil {
			mid()
		}
		add(0, "A", k)
		if k%5 == 4 && b < nB {
			add(1, "B", b)
			b++
		}
	}
	writers := map[string]int{"A": nA, "B": nB}
	for k, who := range []string{"A", "B"} {
		checkSeen(t, who, logs[k].waitSeen(t, who, nA+nB), writers)
	}
	time.Sleep(300 * time.Millisecond) // a catch-up or late notice runs nothing twice
	for k, who := range []string{"A", "B"} {
		checkSeen(t, who, logs[k].get(), writers)
	}
}

// R5.8: one Memory shared by two engines.
func TestSubscriptionsAcrossEnginesMemory(t *testing.T) {
	feedAcross(t, "memory:", "memory:", store.NewMemory(), nil)
}

// R5.8: two SQLite stores on one file (two processes, in effect).
func TestSubscriptionsAcrossEnginesSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	feedAcross(t, "sqlite:"+path, "sqlite:"+path, nil, nil)
}
