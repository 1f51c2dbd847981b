package engine

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/attune-dev/attune/store"
)

// BenchmarkTurnEndManyInstances: a turn of one instance with a session
// owner, in a store that holds the records of 1k or 100k other instances
// (an instance record and a session owner each). A turn end lists its
// session's owners, a range of the store's keys, so the goal is 100k
// within 1.2x of 1k, on the memory store and on SQLite (filled in one
// transaction of its own, before the store opens: 200k durable writes
// through the store would take minutes). Each op is a turn begin and end;
// on SQLite both are durable (an fdatasync each), so compare the two sizes
// of one store in one run:
//
//	go test ./engine -run XXX -bench TurnEndManyInstances -benchtime 200x -count 5
func BenchmarkTurnEndManyInstances(b *testing.B) {
	ctx := context.Background()
	const counter = `define.reducer("c", function(s, a) s.n = (s.n or 0) + 1 return s end, {init = {n = 0}})
define.method("c", "add", function(ctx, s, i) propose({type = "add"}) end, {kind = "command"})`
	for _, kind := range []string{"memory", "sqlite"} {
		for _, n := range []int{1000, 100000} {
			b.Run(kind+"/"+strconv.Itoa(n), func(b *testing.B) {
				var st store.Store
				switch kind {
				case "memory":
					st = store.NewMemory()
					for k := range n {
						id := "other" + strconv.Itoa(k)
						if err := st.PutRecord(ctx, "instance", id, []byte(`{"bot":"main"}`)); err != nil {
							b.Fatal(err)
						}
						if err := st.PutRecord(ctx, "owner", "owner/session/"+id+"/s1/c", []byte(`{"abi":"1"}`)); err != nil {
							b.Fatal(err)
						}
					}
				case "sqlite":
					st = filledSQLite(b, n)
				}
				e := testEngine(b, benchToolCfg, map[string]string{"g.lua": counter}, func(o *Options) { o.Store = st })
				i := start(b, e, "bench", "main")
				if out := i.Method(ctx, MethodCall{Owner: "c", Method: "add"}); out.Status != StatusOK {
					b.Fatal(out.Error)
				}
				if _, err := st.ListRecords(ctx, "owner", ""); err != nil { // the store's first listing indexes what it holds
					b.Fatal(err)
				}
				runtime.GC() // the filling's garbage is not the turn's
				b.ReportAllocs()
				for b.Loop() {
					if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
						b.Fatal(err)
					}
					if _, err := i.EndTurn(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// filledSQLite is a new SQLite store holding the records of n other
// instances (as BenchmarkTurnEndManyInstances's memory store), written in
// one transaction before the store opens; it is closed when b ends.
func filledSQLite(b *testing.B, n int) *store.SQLite {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "state.db")
	s, err := store.OpenSQLite(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO records (kind, key, value) VALUES (?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	for k := range n {
		id := "other" + strconv.Itoa(k)
		if _, err := ins.Exec("instance", id, []byte(`{"bot":"main"}`)); err != nil {
			b.Fatal(err)
		}
		if _, err := ins.Exec("owner", "owner/session/"+id+"/s1/c", []byte(`{"abi":"1"}`)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	db.Close()
	s, err = store.OpenSQLite(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
