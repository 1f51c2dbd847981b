package inspect

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/store"
)

// bigSession runs a session of calls tool calls (1000 a round, one turn)
// on a memory store: instance "big".
func bigSession(tb testing.TB, calls int) store.Store {
	tb.Helper()
	ctx := context.Background()
	st := store.NewMemory()
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = []\nceiling = [\"read\"]\n"))
	if err != nil {
		tb.Fatal(err)
	}
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: st})
	if err != nil {
		tb.Fatal(err)
	}
	defer e.Close()
	e.RegisterTool(engine.HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c engine.CoreCall) (any, error) { return "text", nil }})
	i, err := e.Start(ctx, engine.StartOptions{ID: "big", Bot: "main"})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := i.BeginTurn(ctx, engine.TurnInput{Input: "go"}); err != nil {
		tb.Fatal(err)
	}
	for r := 0; r < calls/1000; r++ {
		i.BeginRound(ctx)
		for k := 0; k < 1000; k++ {
			i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": fmt.Sprint("f", k)}})
		}
		i.EndRound(ctx, engine.RoundEnd{})
	}
	if _, err := i.EndTurn(ctx); err != nil {
		tb.Fatal(err)
	}
	return st
}

// A session of 100k tool calls opens (is read back, built and encoded as
// attune inspect --json prints it) in well under a second.
func BenchmarkInspectJSON100k(b *testing.B) {
	ctx := context.Background()
	const calls = 100_000
	st := bigSession(b, calls)
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

// The first page the inspector's page asks of a 100k-call session it has
// not read yet: the whole journal read and built (for the summary and the
// total), one page encoded.
func BenchmarkInspectFirstPage100k(b *testing.B) {
	st := bigSession(b, 100_000)
	b.ResetTimer()
	for range b.N {
		srv := NewServer(st, "tok", nil)
		r := httptest.NewRequest("GET", "/tok/api/session?id=big&offset=0&limit=500", nil)
		r.Host = "127.0.0.1"
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if w.Code != 200 || w.Body.Len() < 500*100 {
			b.Fatalf("%d: %.200s", w.Code, w.Body.String())
		}
	}
}
