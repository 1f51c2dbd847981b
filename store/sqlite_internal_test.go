package store

import (
	"bytes"
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

// A read's entries share a few large blocks of memory (entryArena), yet
// each is a slice of its own: growing one never writes into another, an
// entry larger than a block stands alone, an empty one is not nil, and a
// read of thousands of entries allocates far fewer blocks than entries.
func TestSQLiteReadEntriesIndependent(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t)
	var want [][]byte
	for i := range 3000 {
		var e []byte
		switch {
		case i%1000 == 7:
			e = bytes.Repeat([]byte{'b'}, 600<<10) // past entryBlockMax/4
		case i%100 == 3:
			e = []byte{}
		default:
			e = []byte(strconv.Itoa(i) + strings.Repeat("x", i%50))
		}
		want = append(want, e)
	}
	if _, err := s.Append(ctx, "l", 0, want, nil); err != nil {
		t.Fatal(err)
	}
	es, err := s.read(ctx, "l", 0, 0) // SQLite's, not the cache's
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(want) {
		t.Fatalf("read %d entries, want %d", len(es), len(want))
	}
	for k := range es {
		if es[k].Data == nil {
			t.Fatalf("entry %d: nil data", es[k].Seq)
		}
		es[k].Data = append(es[k].Data, '!', '!', '!')
	}
	for k := range es {
		if got := es[k].Data[:len(es[k].Data)-3]; !bytes.Equal(got, want[k]) || es[k].Seq != int64(k+1) {
			t.Fatalf("entry %d after the others grew: %.40q, want %.40q", es[k].Seq, got, want[k])
		}
	}
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := s.read(ctx, "l", 0, len(want)); err != nil {
			t.Fatal(err)
		}
	})
	// the driver's own copy of each row, its boxed values and
	// database/sql's part: about 4 a row; 5 (and more) would mean the
	// entries' bytes are copied one allocation each again
	t.Logf("%.2f allocations a row", allocs/float64(len(want)))
	if perRow := allocs / float64(len(want)); perRow > 4.4 {
		t.Errorf("a read allocates %.2f times a row", perRow)
	}
}

// The WAL a flush syncs is the file its name names: the held one while it
// has a name (one fstat), else the new file at the name (another
// program's last connection removed the WAL and a writer made a new one),
// else the database file (no WAL at all).
func TestSQLiteFlushedFile(t *testing.T) {
	s := openInternal(t)
	if _, err := s.Append(t.Context(), "l", Any, [][]byte{[]byte("e")}, nil); err != nil {
		t.Fatal(err)
	}
	held := s.wal.f
	name := s.wal.path + "-wal"
	same := func(f *os.File, name string) bool {
		a, err1 := f.Stat()
		b, err2 := os.Stat(name)
		return err1 == nil && err2 == nil && os.SameFile(a, b)
	}
	f, ok, err := s.wal.file()
	if err != nil || !ok || f != held || !same(f, name) {
		t.Fatalf("the held WAL: %v %v %v", f == held, ok, err)
	}
	// taken away from under the store (a test only: SQLite's own WAL is
	// never removed while a connection is open)
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	f, ok, err = s.wal.file()
	if err != nil || ok || !same(f, s.wal.path) {
		t.Fatalf("no WAL: the database file is not the one flushed (%v %v)", ok, err)
	}
	f.Close()
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, ok, err = s.wal.file()
	if err != nil || !ok || f == held || !same(f, name) {
		t.Fatalf("a new WAL: not the file flushed (%v %v)", ok, err)
	}
	os.Remove(name)
}
