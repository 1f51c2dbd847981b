package engine

import (
	"context"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

// appendActions appends n "add" actions of reducer revision rev.
func appendActions(t testing.TB, st store.Store, log string, n, rev int) {
	t.Helper()
	ctx := context.Background()
	for done := 0; done < n; {
		k := min(5000, n-done)
		batch := make([][]byte, k)
		for j := range batch {
			batch[j], _ = encodeEntry(rev, map[string]any{"type": "add", "by": 1.0}, nil)
		}
		if _, err := st.Append(ctx, log, store.Any, batch, nil); err != nil {
			t.Fatal(err)
		}
		done += k
	}
}

// R1.5, R5.7: a cold fold reads the log a chunk at a time and gives the
// state a fold of the whole log gives: every action across chunks counts,
// and entries before the last reset count for nothing, even when they
// cannot be folded (a reducer revision with no migration) and the reset
// comes in a later chunk.
func TestFoldInChunks(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"counter\"]\n", map[string]string{"counter.lua": benchOwnerLua},
		func(o *Options) { o.Store = st })
	i := start(t, e, "a", "main")
	log := ownerLog(ScopeProject, "default", "counter")
	n := 2*readChunk + 100
	appendActions(t, st, log, n, 1)
	if s, rev, err := i.State(ctx, "counter"); err != nil || rev != int64(n) || s.(map[string]any)["n"] != float64(n) {
		t.Fatalf("fold across chunks: %v %d %v", s, rev, err)
	}

	appendActions(t, st, log, readChunk, 99) // no migration from 99
	e.owners.invalidate(log)
	if _, _, err := i.State(ctx, "counter"); err == nil {
		t.Fatal("actions of an unknown revision folded")
	}
	if _, err := st.Append(ctx, log, store.Any, [][]byte{resetMarker}, nil); err != nil {
		t.Fatal(err)
	}
	appendActions(t, st, log, 7, 1)
	e.owners.invalidate(log)
	if s, _, err := i.State(ctx, "counter"); err != nil || s.(map[string]any)["n"] != 7.0 {
		t.Fatalf("after a reset in a later chunk: %v %v", s, err)
	}
}

// BenchmarkFoldColdMillion: a cold fold of 1,000,000 stored actions; the
// peak-heap-MiB metric is the heap's growth over the fold (goal: <= 64 MiB),
// sampled every 200 µs.
func BenchmarkFoldColdMillion(b *testing.B) {
	const n = 1_000_000
	benchStores(b, func(b *testing.B, st store.Store) {
		i := benchOwner(b, st)
		log := fillOwner(b, st, n)
		ctx := context.Background()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
		var peak uint64
		for b.Loop() {
			i.e.owners.invalidate(log)
			base := heap()
			var top atomic.Uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					if h := heap(); h > top.Load() {
						top.Store(h)
					}
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Microsecond):
					}
				}
			}()
			s, rev, err := i.State(ctx, "counter")
			close(stop)
			<-done
			if err != nil || rev != n || s.(map[string]any)["n"] != float64(n) {
				b.Fatal(s, rev, err)
			}
			if t := top.Load(); t > base && t-base > peak {
				peak = t - base
			}
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
}
