package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// attune store migrate makes the named store's schema current; a store
// kind with no schema, or a stray argument, is a usage error.
func TestStoreMigrateCmd(t *testing.T) {
	var out, errb bytes.Buffer
	db := filepath.Join(t.TempDir(), "state.db")
	if code := dispatch([]string{"store", "migrate", "--store", "sqlite:" + db}, &out, &errb); code != 0 || !strings.Contains(out.String(), "up to date") {
		t.Fatalf("sqlite: %d %q %q", code, out.String(), errb.String())
	}
	for _, args := range [][]string{{"store"}, {"store", "migrate", "--store", "memory:"}, {"store", "migrate", "extra"}} {
		errb.Reset()
		if code := dispatch(args, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Fatalf("%v: %d %q", args, code, errb.String())
		}
	}
}
