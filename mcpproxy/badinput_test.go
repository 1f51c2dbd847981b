//go:build e2e

package mcpproxy_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/internal/peertest"
)

// rawCall sends a tools/call and returns its answer, skipping notifications.
func (r *rawProxy) rawCall(id int, line string, wait time.Duration) map[string]any {
	r.t.Helper()
	r.send(line)
	for {
		m := r.recv(wait)
		if m["id"] == float64(id) {
			return m
		}
	}
}

// toolText is the text of a tools/call answer and whether it is a tool error.
func toolText(m map[string]any) (string, bool) {
	res, _ := m["result"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	var parts []string
	content, _ := res["content"].([]any)
	for _, c := range content {
		if c, ok := c.(map[string]any); ok {
			s, _ := c["text"].(string)
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n"), isErr
}

// An upstream that breaks the protocol (testdata/badserver.mjs) fails the
// call it breaks with a tool error saying what it sent, and only that call:
// an answer cut off mid-JSON (its id still read), a result that is not an
// object, an answer to an id never sent (ignored), a request it never
// answers (call_timeout, and -32001 for a forwarded request), a line that
// is not JSON. Each next call is answered.
func TestUpstreamBreaksProtocol(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n[harness.mcp]\ncall_timeout = \"1500ms\"\n")
	r := startRaw(t, "--config", filepath.Join(dir, "attune.toml"), "--", "node", filepath.Join(peertest.Root(t), "mcpproxy", "testdata", "badserver.mjs"))
	r.send(initLine)
	if m := r.recv(20 * time.Second); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := func(id int, tool string) (string, bool, time.Duration) {
		start := time.Now()
		m := r.rawCall(id, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":{"n":`+strconv.Itoa(id)+`}}}`, 10*time.Second)
		text, isErr := toolText(m)
		if m["error"] != nil {
			t.Errorf("%s: a JSON-RPC error %v, want a tool error", tool, m["error"])
		}
		return text, isErr, time.Since(start)
	}
	echo := func(id int) {
		t.Helper()
		if text, isErr, _ := call(id, "echo"); isErr || text != `echo {"n":`+strconv.Itoa(id)+`}` {
			t.Errorf("echo after: %q %v", text, isErr)
		}
	}
	for k, c := range []struct{ tool, want string }{
		{"truncated", "the call failed: upstream upstream, tools/call: it sent a line that is not a JSON-RPC 2.0 message: unmarshaling jsonrpc message: unexpected end of JSON input"},
		{"notobject", `the call failed: upstream upstream, tools/call: its result is not an object: "a string"`},
		{"silent", "the call failed: upstream upstream, tools/call: the upstream did not answer in time (call_timeout 1.5s in [harness.mcp])"},
		{"notjson", "the call failed: upstream upstream, tools/call: it sent a line that is not a JSON-RPC 2.0 message: unmarshaling jsonrpc message: invalid character 'S' looking for beginning of value"},
	} {
		id := 10 + 2*k
		text, isErr, took := call(id, c.tool)
		if !isErr || text != c.want {
			t.Errorf("%s: %q (isError %v)\nwant %q", c.tool, text, isErr, c.want)
		}
		if took > 5*time.Second {
			t.Errorf("%s took %s", c.tool, took)
		}
		echo(id + 1)
	}
	if text, isErr, _ := call(30, "strayid"); isErr || text != "after the stray" {
		t.Errorf("strayid: %q %v, want the answer to the call (the stray answer ignored)", text, isErr)
	}
	m := r.rawCall(31, `{"jsonrpc":"2.0","id":31,"method":"prompts/get","params":{"name":"p"}}`, 10*time.Second)
	if code, msg := errorOf(m); code != -32001 || msg != "attune mcp: upstream upstream, prompts/get: the upstream did not answer in time (call_timeout 1.5s in [harness.mcp])" {
		t.Errorf("a forwarded request never answered: %v", m)
	}
	echo(32)
}
