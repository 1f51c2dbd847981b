package server

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/attune-dev/attune/internal/peertest"
)

// attune is cmd/attune, built once for the tests that run it as a process.
var attune peertest.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	attune.Remove()
	os.Exit(code)
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
