package store_test

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/store"
)

// A file that is not an attune store is refused with a clear error and
// left exactly as it was.
func TestSQLiteNotAStore(t *testing.T) {
	dir := t.TempDir()
	garbage := bytes.Repeat([]byte("this is not a database\n"), 400)
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for _, tc := range []struct {
		name, why string
		content   []byte // nil: other.db as it is
	}{
		{"garbage.db", "file is not a database", garbage},
		{"short.db", "file is not a database", []byte("oops")},
		{"almost.db", "file is not a database", []byte("SQLite format 2\x00 and then some more bytes")},
		{"other.db", "the database of another program", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if tc.content != nil {
				if err := os.WriteFile(path, tc.content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			info, _ := os.Stat(path)
			s, err := store.OpenSQLite(t.Context(), path)
			if err == nil {
				s.Close()
				t.Fatal("OpenSQLite succeeded")
			}
			want := "store: " + path + " is not an attune SQLite store (" + tc.why + "); move it away or set engine.store to another file"
			if err.Error() != want {
				t.Fatalf("OpenSQLite error:\n%s\nwant:\n%s", err, want)
			}
			after, _ := os.ReadFile(path)
			info2, _ := os.Stat(path)
			if !bytes.Equal(before, after) || info.Mode() != info2.Mode() || !info.ModTime().Equal(info2.ModTime()) {
				t.Fatal("the refused file was changed")
			}
			for _, suffix := range []string{"-wal", "-journal"} {
				if _, err := os.Stat(path + suffix); err == nil {
					t.Errorf("OpenSQLite left %s%s behind", tc.name, suffix)
				}
			}
		})
	}
	t.Run("directory", func(t *testing.T) {
		_, err := store.OpenSQLite(t.Context(), dir)
		if err == nil || !strings.Contains(err.Error(), "is not an attune SQLite store (a directory)") {
			t.Fatalf("OpenSQLite of a directory: %v", err)
		}
	})
}

// SQLite's own check, for a file that passes the first look: a database
// header over pages SQLite cannot read.
func TestSQLiteBadHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.db")
	content := append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xff}, 4080)...)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := store.OpenSQLite(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("OpenSQLite of a broken header succeeded")
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q does not name the file", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, content) {
		t.Fatal("the refused file was changed")
	}
	t.Log(err)
}

// Closing and opening again keeps everything.
func TestSQLiteReopen(t *testing.T) {
	ctx := t.Context()
	path := sqlitePath(t)
	s := openSQLite(t, path)
	h, err := s.PutBlob(ctx, []byte("source"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutRecord(ctx, "pin", "i1", []byte("pinned")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "l", 0, [][]byte{[]byte("a"), []byte("b")}, &store.CallRecord{ID: "c", Input: []byte("in"), Result: []byte("out")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for range 2 {
		s = openSQLite(t, path)
		if b, err := s.GetBlob(ctx, h); err != nil || string(b) != "source" {
			t.Fatalf("GetBlob after reopening = %q, %v", b, err)
		}
		if v, err := s.GetRecord(ctx, "pin", "i1"); err != nil || string(v) != "pinned" {
			t.Fatalf("GetRecord after reopening = %q, %v", v, err)
		}
		if keys, err := s.ListRecords(ctx, "pin", ""); err != nil || len(keys) != 1 {
			t.Fatalf("ListRecords after reopening = %q, %v", keys, err)
		}
		es, err := s.Read(ctx, "l", 0, 0)
		if err != nil || len(es) != 2 || string(es[1].Data) != "b" {
			t.Fatalf("Read after reopening = %v, %v", es, err)
		}
		if c, err := s.GetCall(ctx, "l", "c"); err != nil || c.Revision != 2 || string(c.Result) != "out" {
			t.Fatalf("GetCall after reopening = %+v, %v", c, err)
		}
		_, err = s.Append(ctx, "l", 1, [][]byte{[]byte("x")}, nil)
		if !errors.Is(err, store.ErrStale) {
			t.Fatalf("stale Append after reopening: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// OpenSQLite makes the missing folders (0700) and the file (0600).
func TestSQLiteCreates(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "a", "b", "state.db")
	s := openSQLite(t, path)
	defer s.Close()
	for _, d := range []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b")} {
		info, err := os.Stat(d)
		if err != nil || info.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v, %v; want a folder with mode 0700", d, info.Mode(), err)
		}
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, %v; want mode 0600", path, info.Mode(), err)
	}
}

// A path with the characters a URI gives meaning to is still just a path.
func TestSQLiteOddPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "we?ird #dir%20", "state.db?mode=ro")
	s := openSQLite(t, path)
	if _, err := s.Append(t.Context(), "l", 0, [][]byte{[]byte("x")}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the store is not at the path it was given: %v", err)
	}
}

// A store written by a newer attune is refused, not rewritten.
func TestSQLiteNewerSchema(t *testing.T) {
	path := sqlitePath(t)
	openSQLite(t, path).Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 7`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = store.OpenSQLite(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "schema version 7, newer than this attune reads") {
		t.Fatalf("OpenSQLite of a newer store: %v", err)
	}
}
