// Package peertest finds what the end-to-end tests drive: the repository
// root, the peer programs `bash scripts/peers` installs under
// testdata/peers, and an attune binary built from the tree. A test that
// needs a peer that is not installed fails, saying what to run; it never
// skips.
package peertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Root returns the repository root: the nearest folder above the working
// directory (a test runs in its package's folder) that holds go.mod.
func Root(t testing.TB) string {
	t.Helper()
	root, err := root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// Peers returns testdata/peers, the folder whose node_modules holds the
// peers; it fails t when one of the named files or packages (paths under
// node_modules, as "@modelcontextprotocol/sdk" or ".bin/claude") is not
// installed.
func Peers(t testing.TB, installed ...string) string {
	t.Helper()
	dir := filepath.Join(Root(t), "testdata", "peers")
	for _, p := range installed {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p)); err != nil {
			t.Fatalf("the test peer %s is not installed in %s: run `bash scripts/peers` (%v)", p, filepath.Join(dir, "node_modules"), err)
		}
	}
	return dir
}

// Node fails t when node is not on PATH.
func Node(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH: the end-to-end tests drive their peers with it (install Node.js 20+, then `bash scripts/peers`)")
	}
}

// Binary is cmd/attune built once for a test binary, in a folder of its own
// that lives until Remove (call it from TestMain after m.Run): the tests
// that run it share one file, so no test's own temporary folder may hold it.
type Binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Path builds the binary the first time and returns its path; a failed
// build fails every test that asks.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	path, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Build is Path for TestMain, before any test runs.
func (b *Binary) Build() (string, error) {
	b.once.Do(b.build) // no t inside: a Fatal there would leave the once done and the path empty
	return b.path, b.err
}

func (b *Binary) build() {
	root, err := root()
	if err != nil {
		b.err = err
		return
	}
	if b.dir, b.err = os.MkdirTemp("", "attune-test-bin-"); b.err != nil {
		return
	}
	b.path = filepath.Join(b.dir, "attune")
	cmd := exec.Command("go", "build", "-o", b.path, "./cmd/attune")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.err = fmt.Errorf("go build ./cmd/attune: %v\n%s", err, out)
	}
}

// Remove deletes the binary's folder, if it was built.
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// Main is a package's TestMain for tests that exec attune: it builds the
// binary once, sets *bin to it, runs the tests, removes the build and
// exits with their status.
func (b *Binary) Main(m *testing.M, bin *string) {
	path, err := b.Build()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building attune: %v\n", err)
		os.Exit(1)
	}
	*bin = path
	code := m.Run()
	b.Remove()
	os.Exit(code)
}

// Hook runs `attune hook claude --config cfg` (bin) on one event as a
// fresh process and returns its decoded answer; a process that fails or
// prints no JSON fails t.
func Hook(t testing.TB, bin, cfg string, event any) map[string]any {
	t.Helper()
	in, _ := json.Marshal(event)
	cmd := exec.Command(bin, "hook", "claude", "--config", cfg)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Errorf("attune hook: %v\n%s", err, errOut.String())
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Errorf("answer %q: %v (stderr %s)", out.String(), err, errOut.String())
	}
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return m
}
