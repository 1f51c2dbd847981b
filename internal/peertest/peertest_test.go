package peertest

import (
	"os"
	"path/filepath"
	"testing"
)

// The root is the folder of go.mod, found from a package folder.
func TestRoot(t *testing.T) {
	root := Root(t)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "peertest", "peertest.go")); err != nil {
		t.Fatalf("%s is not this repository's root: %v", root, err)
	}
}

// The binary outlives the test that built it: the tests of a package share
// one file, so it may not sit in a test's own temporary folder.
func TestBinaryOutlivesItsTest(t *testing.T) {
	var b Binary
	var first string
	t.Run("builds", func(t *testing.T) { first = b.Path(t) })
	t.Run("reuses", func(t *testing.T) {
		if got := b.Path(t); got != first {
			t.Fatalf("built again: %s, then %s", first, got)
		}
		if _, err := os.Stat(first); err != nil {
			t.Fatalf("the binary went with the test that built it: %v", err)
		}
	})
	b.Remove()
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Fatalf("Remove left %s: %v", first, err)
	}
}
