package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// BenchmarkOwnerWritersPostgres: 1, 4, 8 and 16 writers, each a host of
// its own (an engine with its own connection pool), run commands on one
// project owner of one PostgreSQL store. commands/s is the rate of
// acknowledged commands; stale/op counts commands still stale after the
// engine's retry bound (maxCommandAttempts), which must stay 0. Compare
// writers=16 with writers=1 of the same run.
func BenchmarkOwnerWritersPostgres(b *testing.B) {
	target := pgTestSchema(b)
	if strings.Contains(target, "?") {
		target += "&pool_max_conns=2"
	} else {
		target += "?pool_max_conns=2"
	}
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte("[engine]\nproject = \"bench\"\n[bots.main]\nbehaviors = [\"ledger\"]\n"))
	if err != nil {
		b.Fatal(err)
	}
	pack := fstest.MapFS{"ledger.lua": {Data: []byte(sharedLedger)}}
	var hosts []*Instance
	for k := range 16 {
		st, err := store.OpenPostgres(ctx, target)
		if err != nil {
			b.Fatal(err)
		}
		e, err := New(ctx, Options{Config: cfg, Store: st, PacksFirst: []pin.Pack{{Name: "p", FS: pack}}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close(); st.Close() })
		i, err := e.Start(ctx, StartOptions{ID: fmt.Sprintf("host-%d", k), Bot: "main"})
		if err != nil {
			b.Fatal(err)
		}
		hosts = append(hosts, i)
	}
	for _, writers := range []int{1, 4, 8, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			// Each writer folds the owner up to now first, outside the
			// timer: a host's first command folds the whole log, which
			// is not what the rate measures.
			for _, i := range hosts[:writers] {
				if out := i.Method(ctx, MethodCall{Owner: "ledger", Method: "add", Input: map[string]any{"by": 1.0}}); out.Status != StatusOK {
					b.Fatalf("warm-up: %+v", out)
				}
			}
			var next, stale, failed atomic.Int64
			var first atomic.Value
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := range writers {
				wg.Add(1)
				go func(i *Instance) {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						out := i.Method(ctx, MethodCall{Owner: "ledger", Method: "add", Input: map[string]any{"by": 1.0}})
						switch {
						case out.Status == StatusOK:
						case CodeOf(out.Err) == CodeStaleRevision:
							stale.Add(1)
						default:
							failed.Add(1)
							first.CompareAndSwap(nil, out.Error)
						}
					}
				}(hosts[w])
			}
			wg.Wait()
			b.StopTimer()
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d commands failed: %v", n, first.Load())
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commands/s")
			b.ReportMetric(float64(stale.Load())/float64(b.N), "stale/op")
		})
	}
}
