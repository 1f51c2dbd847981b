package engine

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/attune-dev/attune/store"
)

// countingStore counts the writes that reach a store.
type countingStore struct {
	store.Store
	writes atomic.Int64
}

func (s *countingStore) PutRecord(ctx context.Context, kind, key string, value []byte) error {
	s.writes.Add(1)
	return s.Store.PutRecord(ctx, kind, key, value)
}

func (s *countingStore) PutBlob(ctx context.Context, data []byte) (string, error) {
	s.writes.Add(1)
	return s.Store.PutBlob(ctx, data)
}

func (s *countingStore) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *store.CallRecord) (int64, error) {
	s.writes.Add(1)
	return s.Store.Append(ctx, log, expected, entries, call)
}

// R2.1: starting an instance again from the store (its record and pin
// stored) writes nothing: on SQLite every write is an fsync.
func TestRestartWritesNothing(t *testing.T) {
	st := &countingStore{Store: store.NewMemory()}
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\n", map[string]string{"g.lua": smallProgram},
		func(o *Options) { o.Store = st })
	ctx := context.Background()
	i := start(t, e, "s", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	i.Stop()
	before := st.writes.Load()
	i, err := e.Start(ctx, StartOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	i.Stop()
	if n := st.writes.Load() - before; n != 0 {
		t.Fatalf("a restart made %d writes", n)
	}
}
