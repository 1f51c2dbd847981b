package store

import (
	"errors"
	"path/filepath"
	"testing"
)

// The read cache answers from memory only while no commit happened since
// it learned what it holds: a second store on the same file (as a second
// process would be) writes, and the first sees every write at once.
func TestSQLiteReadCacheSeesOtherWriters(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	a, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	e := func(s string) [][]byte { return [][]byte{[]byte(s)} }
	if _, err := a.Append(ctx, "l", 0, e("1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, "l", 1, e("2"), &CallRecord{ID: "c", Input: []byte("i")}); err != nil {
		t.Fatal(err)
	}
	// a's own appends are in its cache, current at the header now
	h, ok := a.shm.header()
	if !ok {
		t.Fatal("the WAL-index header cannot be read")
	}
	if es, hit := a.cache.read(h, "l", 0, 0); !hit || len(es) != 2 || string(es[1].Data) != "2" || es[1].Seq != 2 {
		t.Fatalf("a's appends are not served from memory: %v %v", es, hit)
	}
	readAll := func(s *SQLite, want ...string) {
		t.Helper()
		es, err := s.Read(ctx, "l", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			got = append(got, string(e.Data))
		}
		if len(got) != len(want) {
			t.Fatalf("read %q, want %q", got, want)
		}
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("read %q, want %q", got, want)
			}
		}
		if n, err := s.Length(ctx, "l"); err != nil || n != int64(len(want)) {
			t.Fatalf("length %d %v, want %d", n, err, len(want))
		}
	}
	readAll(a, "1", "2")
	if _, err := b.Append(ctx, "l", 2, e("3"), nil); err != nil {
		t.Fatal(err)
	}
	readAll(a, "1", "2", "3")
	if es, err := a.Read(ctx, "l", 2, 1); err != nil || len(es) != 1 || string(es[0].Data) != "3" {
		t.Fatalf("read after 2: %v %v", es, err)
	}

	// records and blobs, present and missing
	if err := a.PutRecord(ctx, "k", "x", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if v, err := a.GetRecord(ctx, "k", "x"); err != nil || string(v) != "v1" {
		t.Fatal(string(v), err)
	}
	if _, err := a.GetRecord(ctx, "k", "y"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	sha := blobHash([]byte("blob"))
	if _, err := a.GetBlob(ctx, sha); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err := b.PutRecord(ctx, "k", "x", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.PutRecordIfAbsent(ctx, "k", "y", []byte("w")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutBlob(ctx, []byte("blob")); err != nil {
		t.Fatal(err)
	}
	if v, err := a.GetRecord(ctx, "k", "x"); err != nil || string(v) != "v2" {
		t.Fatalf("a read %q %v after b's write", v, err)
	}
	if v, err := a.GetRecord(ctx, "k", "y"); err != nil || string(v) != "w" {
		t.Fatalf("a read %q %v after b's write", v, err)
	}
	if v, err := a.GetBlob(ctx, sha); err != nil || string(v) != "blob" {
		t.Fatalf("a read %q %v after b's write", v, err)
	}
	if err := b.DeleteRecord(ctx, "k", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetRecord(ctx, "k", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a still reads a record b deleted: %v", err)
	}

	// truncation, by the other store and by this one
	if err := b.Truncate(ctx, "l", 1); err != nil {
		t.Fatal(err)
	}
	readAll(a, "1")
	if _, err := a.Append(ctx, "l", 1, e("2b"), nil); err != nil {
		t.Fatal(err)
	}
	readAll(a, "1", "2b")
	readAll(b, "1", "2b")
	if err := a.Truncate(ctx, "l", 0); err != nil {
		t.Fatal(err)
	}
	readAll(a)
	readAll(b)

	// a value handed out is the caller's
	if _, err := a.Append(ctx, "m", 0, e("x"), nil); err != nil {
		t.Fatal(err)
	}
	es, _ := a.Read(ctx, "m", 0, 0)
	es[0].Data[0] = 'y'
	if es, _ := a.Read(ctx, "m", 0, 0); string(es[0].Data) != "x" {
		t.Fatalf("the cache handed out its own bytes: %q", es[0].Data)
	}
}

// Tails keep the last maxTail entries; a read from before them goes to SQLite.
func TestSQLiteReadCacheLongLog(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t)
	var batch [][]byte
	for k := range maxTail + 10 {
		batch = append(batch, []byte{byte(k)})
	}
	if _, err := s.Append(ctx, "l", 0, batch, nil); err != nil {
		t.Fatal(err)
	}
	for _, after := range []int64{0, 5, 10, 11, int64(maxTail + 9), int64(maxTail + 10), int64(maxTail + 50)} {
		es, err := s.Read(ctx, "l", after, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := max(0, int64(maxTail+10)-after)
		if int64(len(es)) != want || (want > 0 && (es[0].Seq != after+1 || es[0].Data[0] != byte(after))) {
			t.Fatalf("after %d: %d entries, want %d", after, len(es), want)
		}
	}
}
