package store

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The writer runs with the settings durability rests on (R5.10).
func TestSQLiteSettings(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t)
	for _, tc := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "1"}, // NORMAL: each write flushes the WAL itself (wal.go)
		{"busy_timeout", "30000"},
		{"wal_autocheckpoint", "256"},
		{"application_id", strconv.Itoa(sqliteApplicationID)},
		{"user_version", "1"},
	} {
		var got string
		if err := s.wc.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("writer PRAGMA %s = %s, want %s", tc.pragma, got, tc.want)
		}
	}
	var qo string
	if err := s.r.QueryRowContext(ctx, "PRAGMA query_only").Scan(&qo); err != nil || qo != "1" {
		t.Errorf("reader PRAGMA query_only = %s, %v; want 1", qo, err)
	}
	// The length of a log is one descent of the primary key, not a scan.
	rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN SELECT coalesce(max(seq), 0) FROM logs WHERE log = ?", "l")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); !strings.Contains(p, "SEARCH logs USING COVERING INDEX") {
		t.Errorf("Length's query plan: %s", p)
	}
}

// Every write returns only once a flush of the WAL that started after its
// commit has finished (R5.10): the flush synchronous=FULL would make inside
// the commit, made by the store after it.
func TestSQLiteWritesFlushed(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t)
	check := func(what string) {
		t.Helper()
		if c, sy := s.wal.committed.Load(), s.wal.synced.Load(); sy < c {
			t.Errorf("after %s: commit %d returned, WAL flushed through %d", what, c, sy)
		}
	}
	if _, err := s.PutBlob(ctx, []byte("b")); err != nil {
		t.Fatal(err)
	}
	check("PutBlob")
	if err := s.PutRecord(ctx, "k", "a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	check("PutRecord")
	done := make(chan error)
	for w := range 8 {
		go func() {
			var err error
			for k := range 20 {
				if _, err = s.Append(ctx, "l"+strconv.Itoa(w), int64(k), [][]byte{[]byte("x")}, nil); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	check("Append")
	if err := s.Truncate(ctx, "l0", 3); err != nil {
		t.Fatal(err)
	}
	check("Truncate")
	if s.wal.f == nil {
		t.Fatal("the WAL was never opened for a flush")
	}
	st, err := s.wal.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if want, err := os.Stat(s.wal.path + "-wal"); err != nil || !os.SameFile(st, want) {
		t.Errorf("the file flushed is not the WAL (%v)", err)
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct {
		prefix, end string
		ok          bool
	}{
		{"", "", false},
		{"a", "b", true},
		{"p/", "p0", true},
		{"a\xff", "b", true},
		{"\xff\xff", "", false},
		{"é", "\xc3\xaa", true},
	} {
		end, ok := prefixEnd(tc.prefix)
		if end != tc.end || ok != tc.ok {
			t.Errorf("prefixEnd(%q) = %q, %v; want %q, %v", tc.prefix, end, ok, tc.end, tc.ok)
		}
	}
}

// A lazy append (the journal written behind its caller) returns once
// committed, before the WAL is flushed; Sync, or any durable write after
// it, flushes it (R5.10 holds at the boundary that syncs).
func TestSQLiteAppendLazy(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t)
	if _, err := s.AppendLazy(ctx, "j", 0, [][]byte{[]byte("a")}, nil); err != nil {
		t.Fatal(err)
	}
	if c, sy := s.wal.committed.Load(), s.wal.synced.Load(); sy >= c {
		t.Fatalf("a lazy append waited for the flush (commit %d, flushed %d)", c, sy)
	}
	if es, err := s.Read(ctx, "j", 0, 0); err != nil || len(es) != 1 {
		t.Fatalf("the lazy append is not there: %v %v", es, err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if c, sy := s.wal.committed.Load(), s.wal.synced.Load(); sy < c {
		t.Fatalf("Sync left commit %d unflushed (flushed %d)", c, sy)
	}
	if _, err := s.AppendLazy(ctx, "j", 1, [][]byte{[]byte("b")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "k", 0, [][]byte{[]byte("c")}, nil); err != nil {
		t.Fatal(err)
	}
	if c, sy := s.wal.committed.Load(), s.wal.synced.Load(); sy < c {
		t.Fatalf("a durable append left an earlier lazy one unflushed (commit %d, flushed %d)", c, sy)
	}
}

// openInternal opens a SQLite store in a temporary folder, closed when
// the test ends.
func openInternal(t *testing.T) *SQLite {
	t.Helper()
	s, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
