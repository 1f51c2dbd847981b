//go:build e2e

// The PostgreSQL tests need a real server: they are end-to-end tests, built
// with -tags e2e (the full suite, scripts/test, which starts one with
// .ci/postgres.sh when ATTUNE_TEST_POSTGRES is not set), and they fail,
// never skip, without it.

package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/internal/pgtest"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// R5.10: a server store (PostgreSQL) serves several hosts sharing project
// owners; run when ATTUNE_TEST_POSTGRES names a database (.ci/postgres.sh).
func TestTwoHostsPostgres(t *testing.T) {
	ctx := context.Background()
	target := pgTestSchema(t)
	twoHosts(t, func() store.Store {
		st, err := store.OpenPostgres(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// pgTestSchema returns the postgres:// URL of ATTUNE_TEST_POSTGRES's
// database with a fresh schema, dropped at the end, as its search_path.
// Without ATTUNE_TEST_POSTGRES the test fails: the full suite needs a
// server (scripts/test starts one with .ci/postgres.sh).
func pgTestSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv("ATTUNE_TEST_POSTGRES")
	if base == "" {
		t.Fatal(`ATTUNE_TEST_POSTGRES is not set: the PostgreSQL tests need a server; eval "$(bash .ci/postgres.sh)" starts one and sets it (scripts/test does)`)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "attune_engine_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); conn.Close(ctx) })
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		t.Fatalf("ATTUNE_TEST_POSTGRES: want a postgres:// URL, have %q", base)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
func TestCheckoutsShareOwnersPostgres(t *testing.T) {
	sharedCheckouts(t, pgTestSchema(t))
}

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

// R5.8: two PostgreSQL stores on one database.
func TestSubscriptionsAcrossEnginesPostgres(t *testing.T) {
	u := pgTestSchema(t)
	feedAcross(t, u, u, nil, nil)
}

// R5.8: the server restarts and then is killed (SIGKILL of the postmaster)
// while the engines write: the feed reconnects and reads back from the log
// what it missed, and no action is seen twice.
func TestSubscriptionsAcrossPostgresRestart(t *testing.T) {
	srv := pgtest.New(t)
	feedAcross(t, srv.URL(), srv.URL(), nil, func() {
		srv.Restart()
	})
	srv2 := pgtest.New(t)
	feedAcross(t, srv2.URL(), srv2.URL(), nil, func() {
		srv2.Kill()
		time.Sleep(300 * time.Millisecond)
		srv2.Start()
	})
}
