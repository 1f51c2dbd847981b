package engine

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/attune-dev/attune/store"
)

// BenchmarkTurnEndManyInstances: a turn of one instance with a session
// owner, in a store that holds the records of 1k or 100k other instances
// (an instance record and a session owner each). A turn end lists its
// session's owners; the goal is 100k within 1.2x of 1k. On the memory
// store; SQLite lists a range of its primary key (kind, key) and filling
// it with 200k durable records here would take minutes.
func BenchmarkTurnEndManyInstances(b *testing.B) {
	ctx := context.Background()
	const counter = `define.reducer("c", function(s, a) s.n = (s.n or 0) + 1 return s end, {init = {n = 0}})
define.method("c", "add", function(ctx, s, i) propose({type = "add"}) end, {kind = "command"})`
	for _, kind := range []string{"memory"} {
		for _, n := range []int{1000, 100000} {
			b.Run(kind+"/"+strconv.Itoa(n), func(b *testing.B) {
				var st store.Store = store.NewMemory()
				for k := range n {
					id := "other" + strconv.Itoa(k)
					if err := st.PutRecord(ctx, "instance", id, []byte(`{"bot":"main"}`)); err != nil {
						b.Fatal(err)
					}
					if err := st.PutRecord(ctx, "owner", "owner/session/"+id+"/s1/c", []byte(`{"abi":"1"}`)); err != nil {
						b.Fatal(err)
					}
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
