package mcpproxy_test

// Tests that drive the attune binary built from the tree, with upstreams
// that are plain shell commands: they need no Node peer and run in the
// default `go test ./...`. The end-to-end suites with the MCP SDK and the
// reference servers are in the files built with -tags e2e.

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/internal/peertest"
)

var attuneBin = &peertest.Binary{} // built once, by the first test that needs it

func TestMain(m *testing.M) {
	code := m.Run()
	attuneBin.Remove()
	os.Exit(code)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tmpDir is a temporary folder with symlinks resolved: the filesystem
// server resolves its allowed folders the same way.
func tmpDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// rawProxy is attune mcp driven line by line over pipes.
type rawProxy struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	done  chan error
}

func startRaw(t *testing.T, args ...string) *rawProxy {
	t.Helper()
	cmd := exec.Command(attuneBin.Path(t), append([]string{"mcp"}, args...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawProxy{t: t, cmd: cmd, in: in, lines: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
		r.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("attune mcp stderr:\n%s", stderr.String())
		}
	})
	return r
}

func (r *rawProxy) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// recv returns the next message, failing after wait.
func (r *rawProxy) recv(wait time.Duration) map[string]any {
	r.t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			r.t.Fatal("attune mcp closed its output")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			r.t.Fatalf("attune mcp wrote %q: %v", l, err)
		}
		return m
	case <-time.After(wait):
		r.t.Fatalf("no answer within %s", wait)
	}
	return nil
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func errorOf(m map[string]any) (code float64, msg string) {
	e, _ := m["error"].(map[string]any)
	code, _ = e["code"].(float64)
	msg, _ = e["message"].(string)
	return code, msg
}

// An upstream that never answers times out (initialize after
// start_timeout); one that
// sends a line that is not JSON-RPC fails the pending request at once.
func TestUpstreamSilentOrMalformed(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n[harness.mcp]\nstart_timeout = \"500ms\"\n")
	silent := startRaw(t, "--config", filepath.Join(dir, "attune.toml"), "--", "sh", "-c", "cat >/dev/null")
	start := time.Now()
	silent.send(initLine)
	m := silent.recv(10 * time.Second)
	if code, msg := errorOf(m); code != -32001 || !strings.Contains(msg, "the upstream did not answer in time (start_timeout 500ms in [harness.mcp])") {
		t.Errorf("silent upstream: %v", m)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	bad := startRaw(t, "--config", filepath.Join(dir, "attune.toml"), "--", "sh", "-c", `read line; echo '{"jsonrpc": oops'; cat >/dev/null`)
	bad.send(initLine)
	m = bad.recv(10 * time.Second)
	if code, msg := errorOf(m); code != -32603 || !strings.HasPrefix(msg, "attune mcp: upstream upstream, initialize: it sent a line that is not a JSON-RPC 2.0 message") {
		t.Errorf("malformed upstream: %v", m)
	}
	bad.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := bad.recv(10 * time.Second); m["id"] != float64(2) {
		t.Errorf("ping after a malformed upstream: %v", m)
	}
}
