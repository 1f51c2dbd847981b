//go:build e2e

package server

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/internal/peertest"
)

// runHost runs a host program in another language against `attune serve`
// and fails when it fails.
func runHost(t *testing.T, name string, args ...string) {
	root := peertest.Root(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(),
		"ATTUNE_BIN="+attune.Path(t),
		"ATTUNE_CONFIG="+filepath.Join(root, "server", "testdata", "hosts", "attune.toml"),
		"PEERS="+filepath.Join(root, "testdata", "peers"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil || strings.TrimSpace(out.String()) != "ok" {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
}

// R9.2: a host in JavaScript built on the npm package vscode-jsonrpc drives
// attune serve: turns, rounds, tool calls with host cores, the floor and
// reads, methods, cancellation, a callback timeout, errors, replay, the log
// and notes notifications, and the end of input.
func TestNodeHost(t *testing.T) {
	root := peertest.Root(t)
	peertest.Peers(t, "vscode-jsonrpc/package.json")
	peertest.Node(t)
	runHost(t, "node", filepath.Join(root, "server", "testdata", "hosts", "node_host.cjs"))
}

// R9.2: a host on vscode-jsonrpc with the package's own framing
// (StreamMessageReader/Writer: Content-Length headers) drives attune serve,
// which answers in that framing: a tool call with a host core, an error,
// cancellation, the log notifications, the end of input.
func TestNodeHostHeaderFraming(t *testing.T) {
	root := peertest.Root(t)
	peertest.Peers(t, "vscode-jsonrpc/package.json")
	peertest.Node(t)
	runHost(t, "node", filepath.Join(root, "server", "testdata", "hosts", "node_host_headers.cjs"))
}

// R9.2: a host in Python with only the standard library drives attune
// serve: pipelined requests, a batch, the same turn as the Node host.
func TestPythonHost(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is not on PATH: the Python host test needs it (%v)", err)
	}
	runHost(t, "python3", filepath.Join(peertest.Root(t), "server", "testdata", "hosts", "python_host.py"))
}
