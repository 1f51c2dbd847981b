package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/attune-dev/attune/harness"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveRuntime starts Serve in this process on a free loopback
// port with o, a guard refusing rm -rf, and returns the URL.
func serveRuntime(t *testing.T, o ServeOptions) (*harness.Runtime, string) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "packs", "p", "p.lua"), []byte(`guard.tool("claude/Bash", function(call, invoke)
  if string.find(call.args.command or "", "rm -rf", 1, true) then return refuse("no rm -rf") end
  return invoke()
end)`), 0o644)
	path := filepath.Join(dir, "attune.toml")
	os.WriteFile(path, []byte("[engine]\npacks = [\"packs/p\"]\n"+mainBot), 0o644)
	r, err := harness.Open(t.Context(), path, harness.Options{Warm: true, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, r, ln, harness.Claude(), o) }()
	t.Cleanup(func() { cancel(); <-done; r.Close() })
	return r, "http://" + ln.Addr().String() + HTTPPath
}

const rmEvent = `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"rm -rf /"}}`

// hook serve answers only what a harness sends: the token (401 without),
// a loopback Host of its own port (403: DNS rebinding), no Origin or a
// loopback one (403: a web page), Content-Type application/json (415: a
// page's no-preflight text/plain POST), POST (405).
func TestServeRefuses(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	_, url := serveRuntime(t, ServeOptions{Token: tok})
	port := url[len("http://127.0.0.1:"):strings.Index(url, HTTPPath)]
	do := func(method, host, origin, token, ctype string) (int, string) {
		req, _ := http.NewRequest(method, url, strings.NewReader(rmEvent))
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if token != "" {
			req.Header.Set(TokenHeader, token)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		name                               string
		method, host, origin, token, ctype string
		want                               int
	}{
		{"no token", "POST", "", "", "", "application/json", 401},
		{"wrong token", "POST", "", "", tok[:31] + "x", "application/json", 401},
		{"a rebinding Host", "POST", "evil.example:" + port, "", tok, "application/json", 403},
		{"another port", "POST", "127.0.0.1:1", "", tok, "application/json", 403},
		{"a web page", "POST", "", "https://evil.example", tok, "application/json", 403},
		{"a null Origin", "POST", "", "null", tok, "application/json", 403},
		{"text/plain", "POST", "", "", tok, "text/plain", 415},
		{"no Content-Type", "POST", "", "", tok, "", 415},
		{"GET", "GET", "", "", tok, "application/json", 405},
		{"the harness", "POST", "", "", tok, "application/json", 200},
		{"localhost", "POST", "localhost:" + port, "", tok, "application/json; charset=utf-8", 200},
		{"[::1]", "POST", "[::1]:" + port, "", tok, "application/json", 200},
		{"a loopback Origin", "POST", "", "http://localhost:3000", tok, "application/json", 200},
	} {
		code, body := do(c.method, c.host, c.origin, c.token, c.ctype)
		if code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
		if code == 200 {
			var m map[string]any
			json.Unmarshal([]byte(body), &m)
			if d, r := decision(m); d != "deny" || r != "no rm -rf" {
				t.Errorf("%s: %s", c.name, body)
			}
		}
	}
	if _, url := serveRuntime(t, ServeOptions{}); true {
		if resp, err := postWith(url, "", "application/json", []byte(rmEvent)); err != nil || resp.StatusCode != 401 {
			t.Errorf("no token configured: %v %v", resp, err)
		}
	}
}

// A tool call that cannot be served because hook serve holds its most
// connections (slow bodies that never end) is still denied, at once, not
// left to hang; slow bodies are cut at the timeout.
func TestServeConnCapDenies(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	_, url := serveRuntime(t, ServeOptions{Token: tok, MaxConns: 4, Timeout: 3 * time.Second})
	addr := strings.TrimPrefix(url[:strings.Index(url, HTTPPath)], "http://")
	var slow []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", HTTPPath, addr, TokenHeader, tok)
		slow = append(slow, c)
	}
	defer func() {
		for _, c := range slow {
			c.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	resp, err := postWith(url, tok, "application/json", []byte(rmEvent))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var m map[string]any
	json.Unmarshal(b, &m)
	if d, r := decision(m); resp.StatusCode != 200 || d != "deny" || !strings.Contains(r, "connections") || time.Since(start) > 2*time.Second {
		t.Errorf("at the cap: %d %s after %s", resp.StatusCode, b, time.Since(start))
	}
	// the slow bodies are cut at the timeout: the server is free again
	time.Sleep(3500 * time.Millisecond)
	resp, err = postWith(url, tok, "application/json", []byte(rmEvent))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	json.Unmarshal(b, &m)
	if d, r := decision(m); d != "deny" || r != "no rm -rf" {
		t.Errorf("after the slow bodies' timeout: %s", b)
	}
}

// A body larger than the cap is a tool call denied; one the decode budget
// has no room for within the timeout is denied too.
func TestServeBodyCapAndDecodeBudget(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	_, url := serveRuntime(t, ServeOptions{Token: tok, MaxBody: 1 << 10, Timeout: time.Second})
	big := `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"rm -rf /` + strings.Repeat(" ", 4<<10) + `"}}`
	resp, err := postWith(url, tok, "application/json", []byte(big))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var m map[string]any
	json.Unmarshal(b, &m)
	if d, r := decision(m); d != "deny" || !strings.Contains(r, "larger than") {
		t.Errorf("over the body cap: %s", b)
	}

	_, url = serveRuntime(t, ServeOptions{Token: tok, DecodeBudget: 8 << 10, Timeout: 500 * time.Millisecond})
	// hold the whole budget with a body that never ends
	addr := strings.TrimPrefix(url[:strings.Index(url, HTTPPath)], "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: 9000000\r\n\r\n{", HTTPPath, addr, TokenHeader, tok)
	time.Sleep(100 * time.Millisecond)
	resp, err = postWith(url, tok, "application/json", []byte(rmEvent))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	json.Unmarshal(b, &m)
	if d, r := decision(m); d != "deny" || !strings.Contains(r, "decode budget") {
		t.Errorf("no room in the decode budget: %s", b)
	}
}

// Warm sessions are bounded: past MaxWarm the least recently used is
// stopped and its lock file removed; an idle one goes too; an evicted
// session's next event is answered from the store.
func TestServeEvictsWarm(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	r, url := serveRuntime(t, ServeOptions{Token: tok, MaxWarm: 2})
	for k := range 5 {
		ev := strings.Replace(rmEvent, `"s"`, fmt.Sprintf(`"s%d"`, k), 1)
		resp, err := postWith(url, tok, "application/json", []byte(ev))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if n := r.WarmCount(); n > 2 {
		t.Errorf("%d sessions warm, want at most 2", n)
	}
	for k := range 3 {
		if _, ok := r.Engine().Instance(fmt.Sprintf("claude/s%d", k)); ok {
			t.Errorf("session s%d is still warm", k)
		}
		if _, err := os.Stat(r.LockFile(fmt.Sprintf("claude/s%d", k))); !os.IsNotExist(err) {
			t.Errorf("session s%d's lock file stays: %v", k, err)
		}
	}
	if _, ok := r.Engine().Instance("claude/s4"); !ok {
		t.Error("the latest session is not warm")
	}
	if n := r.EvictWarm(t.Context(), 10, 0); n != 2 {
		t.Errorf("evicted %d idle sessions, want 2", n)
	}
	if _, ok := r.Engine().Instance("claude/s4"); ok {
		t.Error("an idle session stays warm")
	}
	resp, err := postWith(url, tok, "application/json", []byte(strings.Replace(rmEvent, `"s"`, `"s0"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte("no rm -rf")) {
		t.Errorf("an evicted session's next event: %s", b)
	}
}

// The token is created once, 0600, and read back; one open to others is
// refused.
func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadToken(dir)
	if err != nil || len(a) != 64 {
		t.Fatalf("%q %v", a, err)
	}
	b, err := LoadToken(dir)
	if err != nil || a != b {
		t.Fatalf("read back %q %v, want %q", b, err, a)
	}
	st, _ := os.Stat(TokenFile(dir))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	os.Chmod(TokenFile(dir), 0o644)
	if _, err := LoadToken(dir); err == nil {
		t.Error("a token others can read was used")
	}
}
