package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/attune-dev/attune/session"
)

// R4.2, R3.10: inside a turn a call no guard or hook matches takes the fast
// path, and the journal still gets the floor's verdict, the core's outcome
// and the call with its outcome: a replay re-runs it through the chain,
// answered from the journal, and finds no difference; a core that fails is
// journaled as failed.
func TestQuickCallInTurnReplays(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": otherGuard})
	e.RegisterTool(echoTool("fs/read", "read"))
	e.RegisterTool(HostTool{Path: "fs/fail", Effects: []string{"read"}, Core: func(context.Context, CoreCall) (any, error) {
		return nil, errors.New("disk on fire")
	}})
	i := start(t, e, "q", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := i.BeginRound(ctx); err != nil {
		t.Fatal(err)
	}
	for _, args := range []any{"x", map[string]any{"path": "/a", "n": 2.0}, []any{"a", true}} {
		if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: args}); out.Status != StatusOK || out.CallID == "" {
			t.Fatalf("in-turn call: %+v", out)
		}
	}
	if out := i.Tool(ctx, ToolCall{Path: "fs/fail", CallID: "f1"}); out.Status != StatusFailed || out.Error != "disk on fire" || out.CallID != "f1" {
		t.Fatalf("failing core: %+v", out)
	}
	if _, err := i.EndRound(ctx, RoundEnd{}); err != nil {
		t.Fatal(err)
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	entries, err := session.OpenJournal(e.Store(), i.Session(), "q").Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tools := 0
	for _, en := range entries {
		if en.Type == session.Tool {
			tools++
		}
	}
	if tools != 4 {
		t.Fatalf("journaled %d tool calls, want 4", tools)
	}
	res, err := i.Replay(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diverged) != 0 {
		t.Fatalf("the replay diverged: %+v", res.Diverged)
	}
	if res.Steps < 8 {
		t.Fatalf("the replay re-ran %d steps, want the 4 boundaries and 4 calls", res.Steps)
	}
}
