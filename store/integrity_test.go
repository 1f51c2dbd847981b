package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/store"
)

// A zero-length file attune did not create is refused, and left as it was.
func TestSQLiteEmptyFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := store.OpenSQLite(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "is an empty file that attune did not create") {
		t.Fatalf("got %v, want the empty file refused", err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 0 {
		t.Fatalf("the file changed: %v, %v", st, err)
	}
	// a file attune creates itself is a store at once
	fresh := filepath.Join(t.TempDir(), "new.db")
	s := openSQLite(t, fresh)
	if err := s.IntegrityCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openSQLite(t, fresh) // and opens again
	s.Close()
}

// One corrupted 4 KiB block in the middle of the file is found by the
// integrity check (`attune check --store`).
func TestSQLiteIntegrityCheckFindsCorruption(t *testing.T) {
	ctx := context.Background()
	path := sqlitePath(t)
	s := openSQLite(t, path)
	for i := range 400 {
		data := bytes.Repeat([]byte(fmt.Sprintf("entry %d ", i)), 60)
		if _, err := s.Append(ctx, fmt.Sprintf("log-%d", i%7), -1, [][]byte{data}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatalf("a sound store: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, path) // the store's close leaves the entries in the WAL
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	if st.Size() < 16*4096 {
		t.Fatalf("store is only %d bytes", st.Size())
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, 4096), (st.Size()/4096/2)*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, err = store.OpenSQLite(ctx, path)
	if err != nil {
		return // refused at open: found too
	}
	defer s.Close()
	if err := s.IntegrityCheck(ctx); err == nil || !strings.Contains(err.Error(), "fails SQLite's integrity check") {
		t.Fatalf("got %v, want the corruption found", err)
	}
}

// checkpoint copies the WAL of the SQLite file at path into the file and
// empties it, as a program other than attune may.
func checkpoint(t testing.TB, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var busy, frames, done int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done); err != nil || busy != 0 {
		t.Fatalf("checkpoint: %v (busy %d)", err, busy)
	}
}
