package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

const benchOwnerLua = `
define.reducer("counter", function(s, a)
  if a.type == "add" then s.n = s.n + a.by end
  s.last = a.type
  return s
end, {scope = "project", init = {n = 0, last = ""}})
define.method("counter", "get", function(ctx, s, input) return s.n end)
define.method("counter", "add", function(ctx, s, input)
  propose({type = "add", by = input.by})
  return s.n + input.by
end, {kind = "command", input = {by = "number"}})
`

// benchStores runs f on a memory store and on a SQLite file.
func benchStores(b *testing.B, f func(b *testing.B, st store.Store)) {
	b.Run("memory", func(b *testing.B) { f(b, store.NewMemory()) })
	b.Run("sqlite", func(b *testing.B) {
		st, err := store.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "state.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		f(b, st)
	})
}

func benchOwner(b *testing.B, st store.Store) *Instance {
	e := testEngine(b, "[bots.main]\nbehaviors = [\"counter\"]\n", map[string]string{"counter.lua": benchOwnerLua},
		func(o *Options) { o.Store = st })
	i, err := e.Start(context.Background(), StartOptions{ID: "bench", Bot: "main"})
	if err != nil {
		b.Fatal(err)
	}
	return i
}

// BenchmarkMethodQuery: one host query, its result recorded under its call
// id (R5.4), on an owner already folded.
func BenchmarkMethodQuery(b *testing.B) {
	benchStores(b, func(b *testing.B, st store.Store) {
		i := benchOwner(b, st)
		ctx := context.Background()
		c := MethodCall{Owner: "counter", Method: "get"}
		mustOK(b, i.Method(ctx, c))
		b.ReportAllocs()
		for b.Loop() {
			if out := i.Method(ctx, c); out.Status != StatusOK {
				b.Fatal(out)
			}
		}
	})
}

// BenchmarkMethodCommand: one host command: handler, the proposal folded
// through the reducer, the atomic append with its call record (R5.5).
func BenchmarkMethodCommand(b *testing.B) {
	benchStores(b, func(b *testing.B, st store.Store) {
		i := benchOwner(b, st)
		ctx := context.Background()
		c := MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 1.0}}
		b.ReportAllocs()
		for b.Loop() {
			if out := i.Method(ctx, c); out.Status != StatusOK {
				b.Fatal(out)
			}
		}
	})
}

// fillOwner appends n actions to the bench owner's log.
func fillOwner(b *testing.B, st store.Store, n int) string {
	ctx := context.Background()
	log := ownerLog(ScopeProject, "default", "counter")
	const chunk = 5000
	for done := 0; done < n; {
		k := min(chunk, n-done)
		batch := make([][]byte, k)
		for j := range batch {
			batch[j], _ = encodeEntry(1, map[string]any{"type": "add", "by": 1.0}, nil)
		}
		if _, err := st.Append(ctx, log, int64(done), batch, nil); err != nil {
			b.Fatal(err)
		}
		done += k
	}
	return log
}

// BenchmarkFoldCold: a Lua reducer folded over 100,000 stored actions from
// :init (goal: >= 250,000 actions/s).
func BenchmarkFoldCold(b *testing.B) {
	const n = 100_000
	benchStores(b, func(b *testing.B, st store.Store) {
		i := benchOwner(b, st)
		log := fillOwner(b, st, n)
		ctx := context.Background()
		b.ReportAllocs()
		var total time.Duration
		for b.Loop() {
			i.e.owners.invalidate(log)
			t0 := time.Now()
			s, rev, err := i.State(ctx, "counter")
			total += time.Since(t0)
			if err != nil || rev != n || s.(map[string]any)["n"] != float64(n) {
				b.Fatal(s, rev, err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "actions/s")
	})
}

// BenchmarkFoldIncremental: one new action on a 10,000-action owner whose
// fold is cached: only that action is read and applied (goal: <= 20 µs).
func BenchmarkFoldIncremental(b *testing.B) {
	const n = 10_000
	benchStores(b, func(b *testing.B, st store.Store) {
		i := benchOwner(b, st)
		log := fillOwner(b, st, n)
		ctx := context.Background()
		if _, _, err := i.State(ctx, "counter"); err != nil {
			b.Fatal(err)
		}
		entry, _ := encodeEntry(1, map[string]any{"type": "add", "by": 1.0}, nil)
		rev := int64(n)
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			if _, err := st.Append(ctx, log, rev, [][]byte{entry}, nil); err != nil {
				b.Fatal(err)
			}
			rev++
			b.StartTimer()
			s, got, err := i.State(ctx, "counter")
			if err != nil || got != rev || s.(map[string]any)["n"] != float64(rev) {
				b.Fatal(s, got, err)
			}
		}
	})
}
