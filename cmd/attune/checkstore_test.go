package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/store"
)

// attune check --store runs SQLite's integrity check; a pack file nested
// two million deep is a clear compile limit error, not a crash.
func TestCheckStoreAndHostilePack(t *testing.T) {
	dir := t.TempDir()
	cfg := write(t, dir, "attune.toml", "[engine]\nstore = \"state.db\"\npacks = [\"pack\"]\n[bots.main]\nbehaviors = [\"deep\"]\nceiling = [\"read\"]\n")
	write(t, dir, "pack/deep.lua", "return "+strings.Repeat("not ", 200_000)+"1\n")
	code, out, _ := run("check", cfg)
	if code != 1 || !strings.Contains(out, "deep.lua:1: compile limit: expressions or blocks nest deeper than 200") {
		t.Fatalf("check of a deeply nested pack file: code %d, output:\n%s", code, out)
	}
	write(t, dir, "pack/deep.lua", "return "+strings.Repeat("not ", 2_000_000)+"1\n")
	code, out, _ = run("check", cfg)
	if code != 1 || !strings.Contains(out, "compile limit: the source is 8000009 bytes") {
		t.Fatalf("check of a huge pack file: code %d, output:\n%s", code, out)
	}
	write(t, dir, "pack/deep.lua", "-- fine\n")

	code, out, _ = run("check", "--store", cfg)
	if code != 0 || !strings.Contains(out, "does not exist yet") {
		t.Fatalf("no store yet: code %d, output:\n%s", code, out)
	}
	path := filepath.Join(dir, "state.db")
	s, err := store.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if _, err := s.Append(context.Background(), "log", -1, [][]byte{bytes.Repeat([]byte{byte('a' + i%26)}, 500)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	code, out, _ = run("check", "--store", cfg)
	if code != 0 || !strings.Contains(out, "passes SQLite's integrity check") {
		t.Fatalf("sound store: code %d, output:\n%s", code, out)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.WriteAt(bytes.Repeat([]byte{0x5A}, 4096), (st.Size()/4096/2)*4096)
	f.Close()
	code, out, _ = run("check", "--store", cfg)
	if code != 1 || !strings.Contains(out, "integrity check") && !strings.Contains(out, "not an attune") {
		t.Fatalf("corrupted store: code %d, output:\n%s", code, out)
	}
}
