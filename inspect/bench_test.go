package inspect

import (
	"context"
	"fmt"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/store"
)

// A session of 100k tool calls opens (is read back, built and encoded as
// attune inspect --json prints it) in well under a second.
func BenchmarkInspectJSON100k(b *testing.B) {
	ctx := context.Background()
	st := store.NewMemory()
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = []\nceiling = [\"read\"]\n"))
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: st})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	e.RegisterTool(engine.HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c engine.CoreCall) (any, error) { return "text", nil }})
	i, err := e.Start(ctx, engine.StartOptions{ID: "big", Bot: "main"})
	if err != nil {
		b.Fatal(err)
	}
	const calls = 100_000
	if _, err := i.BeginTurn(ctx, engine.TurnInput{Input: "go"}); err != nil {
		b.Fatal(err)
	}
	for r := 0; r < calls/1000; r++ {
		i.BeginRound(ctx)
		for k := 0; k < 1000; k++ {
			i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": fmt.Sprint("f", k)}})
		}
		i.EndRound(ctx, engine.RoundEnd{})
	}
	if _, err := i.EndTurn(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		t, err := Load(ctx, st, "big")
		if err != nil {
			b.Fatal(err)
		}
		if t.Summary.Calls != calls {
			b.Fatalf("%d calls", t.Summary.Calls)
		}
		if _, err := t.JSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// The page the inspector asks first of a 100k-call session, from its cache.
func BenchmarkInspectPage(b *testing.B) {
	t := &Timeline{Events: make([]Event, 100_000)}
	for k := range t.Events {
		t.Events[k] = Event{Seq: k, Kind: KindCall, Path: "fs/read", Status: "ok"}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := t.Page(50_000, DefaultLimit).JSON(); err != nil {
			b.Fatal(err)
		}
	}
}
