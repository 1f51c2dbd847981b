package hook

import (
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startServe runs `attune hook serve claude` on a free loopback port and
// returns its address.
func startServe(t testing.TB, cfg string) string {
	t.Helper()
	addr, _ := startServeProc(t, cfg)
	return addr
}

// startServeProc is startServe, also returning the server's process id.
func startServeProc(t testing.TB, cfg string) (string, int) {
	t.Helper()
	cmd := exec.Command(attuneBin, "hook", "serve", "claude", "--listen", "127.0.0.1:0", "--config", cfg)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 4096)
	var got string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		n, err := stderr.Read(buf)
		got += string(buf[:n])
		if _, rest, ok := strings.Cut(got, "answering on http://"); ok {
			if addr, _, ok := strings.Cut(rest, HTTPPath); ok {
				go io.Copy(io.Discard, stderr)
				return addr, cmd.Process.Pid
			}
		}
		if err != nil {
			break
		}
	}
	t.Fatalf("hook serve did not start: %s", got)
	return "", 0
}
