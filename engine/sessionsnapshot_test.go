package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// readCounter counts the journal entries a store returns.
type readCounter struct {
	store.Store
	n atomic.Int64
}

func (c *readCounter) Read(ctx context.Context, log string, after int64, limit int) ([]store.Entry, error) {
	es, err := c.Store.Read(ctx, log, after, limit)
	c.n.Add(int64(len(es)))
	return es, err
}

// R3.11: an instance brought back after many turns reads its journal from
// its stored state, not from the start, and comes back the same:
// counters, notes (consumed and expired ones stay so, ids go on), a call
// left open turns ago. A rollback past the snapshot reads from the start.
func TestSessionSnapshot(t *testing.T) {
	ctx := context.Background()
	st := &readCounter{Store: store.NewMemory()}
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\nceiling = [\"exec\"]\n", map[string]string{"a.lua": `
hook.turn("start", function(b) notify("turn " .. b.turn, "ambient") end)
hook.turn("end", function(b) notify("bye " .. b.turn, "ambient") end)
hook.tool("sh", {post = function(c, o) return "ran" end})`}, func(o *Options) { o.Store = st })
	e.RegisterTool(echoTool("sh", "exec"))
	i := start(t, e, "x", "main")
	const turns = 40
	var placed, expired string
	var openID string
	for k := 1; k <= turns; k++ {
		ok(t)(i.BeginTurn(ctx, TurnInput{Input: "go"}))
		rb := ok(t)(i.BeginRound(ctx))
		if k == 3 {
			placed = rb.Notes[0].ID
		}
		for c := range 3 {
			key := "k" + string(rune('a'+c))
			if op := i.ToolBegin(ctx, ToolCall{Path: "sh", Args: "x"}, key); op.Status != StatusPending {
				t.Fatal(op)
			}
			if _, err := i.ToolEnd(ctx, ToolCall{Path: "sh"}, key, "out", ""); err != nil {
				t.Fatal(err)
			}
		}
		if k == 20 {
			op := i.ToolBegin(ctx, ToolCall{Path: "sh", Args: "left"}, "left-open")
			openID = op.CallID
		}
		ok(t)(i.EndRound(ctx, RoundEnd{}))
		te := ok(t)(i.EndTurn(ctx))
		if k == 5 { // a turn-end note is never placed: it expires
			expired = te.Notes[0].ID
		}
	}
	ok(t)(i.BeginTurn(ctx, TurnInput{Input: "last"}))
	total, err := st.Length(ctx, session.LogName(i.Session(), i.ID()))
	if err != nil {
		t.Fatal(err)
	}
	// a first bring-back reads everything and stores the snapshot; the next reads the open turn
	restart := func() *Instance {
		t.Helper()
		i, err := e.Restart(ctx, "x")
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	restart()
	st.n.Store(0)
	i = restart()
	if n := st.n.Load(); n > stateEvery+1 { // the entry at the stored state, and those after it
		t.Fatalf("bringing the instance back read %d journal entries of %d", n, total)
	}
	if ts := i.Turn(); ts.Turn != turns+1 || !ts.InTurn || ts.InRound {
		t.Fatalf("turn state %+v", ts)
	}
	if err := i.Consume(ctx, placed); err == nil || !strings.Contains(err.Error(), "already consumed") {
		t.Fatalf("consume a placed note of turn 3: %v", err)
	}
	if err := i.Consume(ctx, expired); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("consume an expired note of turn 5: %v", err)
	}
	rb := ok(t)(i.BeginRound(ctx))
	if len(rb.Notes) != 1 || rb.Notes[0].Text != "turn 41" {
		t.Fatalf("round notes %+v", rb.Notes)
	}
	if got, want := rb.Notes[0].ID, "x:n"; !strings.Contains(got, want) || strings.HasSuffix(got, ":n1") {
		t.Fatalf("note id %s: ids start over", got)
	}
	out, err := i.ToolEnd(ctx, ToolCall{Path: "sh"}, "left-open", "late", "")
	if err != nil || out.CallID != openID {
		t.Fatalf("the call left open in turn 20: %v, call id %s, want %s", err, out.CallID, openID)
	}
	if _, err := i.ToolEnd(ctx, ToolCall{Path: "sh", Args: "x"}, "ka", "again", ""); !errors.Is(err, ErrNoOpenCall) {
		t.Fatalf("a call closed in turn 40 is open again: %v", err)
	}
	ok(t)(i.EndRound(ctx, RoundEnd{}))
	ok(t)(i.EndTurn(ctx))
	// a rollback past the snapshot: brought back from the start
	if err := i.Rollback(ctx, 10); err != nil {
		t.Fatal(err)
	}
	i = restart()
	if ts := i.Turn(); ts.Turn != 10 || ts.InTurn {
		t.Fatalf("after the rollback: %+v", ts)
	}
	tb := ok(t)(i.BeginTurn(ctx, TurnInput{}))
	if tb.Turn != 11 {
		t.Fatalf("the turn after the rollback is %d", tb.Turn)
	}
}
