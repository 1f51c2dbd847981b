package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/attune-dev/attune/store"
)

// BenchmarkRestartOpenTurn100k: bringing back an instance whose open turn
// holds 100,000 tool calls, on the SQLite store: a restart (the instance
// dropped and started again, as a new process does) and a hydration. The
// session's stored state makes both cost what a short turn does:
//
//	go test ./engine -run XXX -bench RestartOpenTurn100k -benchtime 20x -count 3
func BenchmarkRestartOpenTurn100k(b *testing.B) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	e := testEngine(b, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"exec\"]\n",
		map[string]string{"g.lua": `guard.tool("other/*", function(c, invoke) return invoke() end)`}, func(o *Options) { o.Store = st })
	e.RegisterTool(echoTool("sh", "exec"))
	i := start(b, e, "x", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{Input: "go"}); err != nil {
		b.Fatal(err)
	}
	if _, err := i.BeginRound(ctx); err != nil {
		b.Fatal(err)
	}
	for k := range 100_000 {
		if out := i.Tool(ctx, ToolCall{Path: "sh", Args: float64(k)}); out.Status != StatusOK {
			b.Fatal(out)
		}
	}
	if _, err := i.EndRound(ctx, RoundEnd{}); err != nil { // everything written behind is durable
		b.Fatal(err)
	}
	b.Run("restart", func(b *testing.B) {
		for range b.N {
			if i, err = e.Restart(ctx, "x"); err != nil {
				b.Fatal(err)
			}
			if ts := i.Turn(); !ts.InTurn {
				b.Fatalf("brought back with no open turn: %+v", ts)
			}
		}
	})
	b.Run("hydrate", func(b *testing.B) {
		for range b.N {
			if err := i.Hydrate(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
