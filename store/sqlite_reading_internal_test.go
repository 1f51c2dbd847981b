package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestSQLiteReadsOnIdleWriter: reads made while no write holds the writer
// run on the writer's own connection, so a process that reads and writes
// one thing after the other (attune hook) opens no read-only connection,
// and SQLite reads its schema and WAL index once; a read while a write
// holds the writer runs on the read-only pool and answers the same.
func TestSQLiteReadsOnIdleWriter(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutRecord(ctx, "k", "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "log", 0, [][]byte{[]byte(`{"t":"x"}`), []byte(`{"t":"y"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		s.cache.invalidate() // from SQLite, not the read cache
		if v, err := s.GetRecord(ctx, "k", "a"); err != nil || string(v) != "1" {
			t.Fatalf("%s: GetRecord = %q, %v", when, v, err)
		}
		if keys, err := s.ListRecords(ctx, "k", ""); err != nil || len(keys) != 1 || keys[0] != "a" {
			t.Fatalf("%s: ListRecords = %q, %v", when, keys, err)
		}
		if es, err := s.Read(ctx, "log", 0, 0); err != nil || len(es) != 2 || string(es[1].Data) != `{"t":"y"}` {
			t.Fatalf("%s: Read = %v, %v", when, es, err)
		}
		if n, err := s.Length(ctx, "log"); err != nil || n != 2 {
			t.Fatalf("%s: Length = %d, %v", when, n, err)
		}
		if _, err := s.GetBlob(ctx, "none"); err == nil {
			t.Fatalf("%s: GetBlob of no blob: no error", when)
		}
		if _, err := s.GetCall(ctx, "log", "none"); err == nil {
			t.Fatalf("%s: GetCall of no call: no error", when)
		}
	}
	check("writer idle")
	if n := s.r.Stats().OpenConnections; n != 0 {
		t.Fatalf("reads with the writer idle opened %d read-only connections, want 0", n)
	}
	s.wal.mu.Lock() // a write holds the writer
	check("writer busy")
	s.wal.mu.Unlock()
	if s.r.Stats().OpenConnections == 0 {
		t.Fatal("reads while a write held the writer opened no read-only connection")
	}
	// every read gave the writer back
	if _, err := s.Append(ctx, "log", 2, [][]byte{[]byte(`{"t":"z"}`)}, nil); err != nil {
		t.Fatal(err)
	}
}
