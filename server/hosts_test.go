package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/attune-dev/attune/internal/peertest"
)

// attune is cmd/attune, built once for the tests that run it as a process.
var attune peertest.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	attune.Remove()
	os.Exit(code)
}

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

// SIGTERM is the end of input: a callback waiting for the client is
// cancelled, the request in flight is answered, and attune serve exits 0.
func TestServeSIGTERM(t *testing.T) {
	root := peertest.Root(t)
	cmd := exec.Command(attune.Path(t), "serve", filepath.Join(root, "server", "testdata", "hosts", "attune.toml"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/register","params":{"path":"slow/never","effects":["slow"]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"start","params":{"instance":"a","bot":"main"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tool","params":{"instance":"a","path":"slow/never","args":{}}}`,
	} {
		if _, err := io.WriteString(stdin, m+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	var last string
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"host/core"`) { // the callback is pending: terminate
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":4,`) {
			last = line
		}
	}
	err = cmd.Wait()
	if err != nil || !strings.Contains(last, `"code":"cancelled"`) || !strings.Contains(last, `"status":"failed"`) {
		t.Fatalf("exit %v; the request in flight was answered %s", err, last)
	}
}
