package engine

import (
	"context"
	"testing"
)

// A harness keeps what it needs of a session between events through the
// engine (the adapters do not open the store's records): a flag is set,
// read, cleared; flags of two sessions and two kinds are apart; Stored
// tells a started instance from a new one.
func TestSessionFlags(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = []\nceiling = [\"read\"]\n", nil)
	if _, ok, err := e.Flag(ctx, "claude/s", FlagFresh); err != nil || ok {
		t.Fatalf("a flag never set: ok %v, %v", ok, err)
	}
	if err := e.SetFlag(ctx, "claude/s", FlagContinued, "verify first"); err != nil {
		t.Fatal(err)
	}
	if text, ok, err := e.Flag(ctx, "claude/s", FlagContinued); err != nil || !ok || text != "verify first" {
		t.Fatalf("continued: %q %v %v", text, ok, err)
	}
	if _, ok, _ := e.Flag(ctx, "claude/s", FlagFresh); ok {
		t.Fatal("setting continued set fresh")
	}
	if _, ok, _ := e.Flag(ctx, "claude/t", FlagContinued); ok {
		t.Fatal("another session's flag is set")
	}
	if err := e.ClearFlag(ctx, "claude/s", FlagContinued); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := e.Flag(ctx, "claude/s", FlagContinued); ok {
		t.Fatal("a cleared flag stays")
	}
	if err := e.ClearFlag(ctx, "claude/s", FlagContinued); err != nil {
		t.Fatalf("clearing a flag not set: %v", err)
	}
	if stored, err := e.Stored(ctx, "q"); err != nil || stored {
		t.Fatalf("an instance never started: stored %v, %v", stored, err)
	}
	start(t, e, "q", "main").Stop()
	if stored, err := e.Stored(ctx, "q"); err != nil || !stored {
		t.Fatalf("a started instance: stored %v, %v", stored, err)
	}
}
