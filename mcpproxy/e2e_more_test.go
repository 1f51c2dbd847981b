//go:build e2e

package mcpproxy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Resources, prompts, sampling, roots and notifications pass through; the
// server-everything's lists through the proxy equal its own.
func TestPassThroughEverything(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	steps := []map[string]any{
		{"op": "wait", "ms": 300},
		{"op": "list"},
		{"op": "resources"},
		{"op": "templates"},
		{"op": "prompts"},
		{"op": "read", "uri": "demo://resource/static/document/features.md"},
		{"op": "prompt", "name": "args-prompt", "arguments": map[string]any{"city": "Lyon"}},
		{"op": "call", "name": "trigger-sampling-request", "arguments": map[string]any{"prompt": "hi"}},
		{"op": "call", "name": "get-roots-list"},
		{"op": "call", "name": "echo", "arguments": map[string]any{"message": "hello"}},
		{"op": "call", "name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 1, "steps": 3}, "progress": true},
		{"op": "notifications"},
	}
	direct := runClient(t, plan{Command: "node", Args: []string{everythingServer(t)}, Sampling: "the client's sample", Roots: []string{dir}, Steps: steps})
	p := proxyPlan(t, filepath.Join(dir, "attune.toml"), nil, "node", everythingServer(t))
	p.Steps, p.Sampling, p.Roots = steps, "the client's sample", []string{dir}
	via := runClient(t, p)
	if !jsonEqual(mustJSON(t, via[0].Capabilities), mustJSON(t, direct[0].Capabilities)) {
		t.Errorf("capabilities through the proxy %v, want the upstream's %v", via[0].Capabilities, direct[0].Capabilities)
	}
	for i := 2; i < len(steps); i++ { // list ... echo
		if via[i].Error != "" || !jsonEqual(via[i].Result, direct[i].Result) {
			t.Errorf("%s through the proxy: %s %s\nwant %s", steps[i-1]["op"], clipS(via[i].Result), via[i].Error, clipS(direct[i].Result))
		}
	}
	// the SDK's client drops a progress notification it handles after the
	// call's answer (the last one, at times, even directly): the order on
	// the wire is checked by TestProgressBeforeAnswer
	if len(via[11].Progress) == 0 {
		t.Errorf("no progress notification reached the client through the proxy")
	}
	if !strings.Contains(string(via[8].Result), "the client's sample") {
		t.Errorf("sampling did not reach the client: %s", via[8].Result)
	}
	n := result[struct {
		Methods []string `json:"methods"`
	}](t, via[len(via)-1])
	if !contains(n.Methods, "notifications/tools/list_changed") {
		t.Errorf("notifications through the proxy: %v, want tools/list_changed relayed", n.Methods)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func clipS(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// Several upstreams: each tool is NAME__TOOL, lists merge, and a request
// naming a prompt or a resource goes to the upstream that listed it.
func TestSeveralUpstreams(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "a.txt"), "text of a")
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	p := plan{Command: attuneBin.Path(t), Args: []string{"mcp", "--config", filepath.Join(dir, "attune.toml"),
		"--upstream", "fs=node " + fsServer(t) + " " + work,
		"--upstream", "ev=node " + everythingServer(t)}}
	p.Steps = []map[string]any{
		{"op": "list"},
		{"op": "call", "name": "fs__read_text_file", "arguments": map[string]any{"path": filepath.Join(work, "a.txt")}},
		{"op": "call", "name": "ev__echo", "arguments": map[string]any{"message": "hi"}},
		{"op": "prompts"},
		{"op": "prompt", "name": "simple-prompt"},
		{"op": "resources"},
		{"op": "read", "uri": "demo://resource/static/document/features.md"},
	}
	s := runClient(t, p)
	tools := toolsOf(t, s[1])
	for _, want := range []string{"fs__read_text_file", "fs__write_file", "ev__echo", "ev__get-sum"} {
		if _, ok := tools[want]; !ok {
			t.Errorf("tool %s is not listed: %v", want, keys(tools))
		}
	}
	if r := result[toolResult](t, s[2]); r.IsError || texts(r)[0] != "text of a" {
		t.Errorf("fs__read_text_file: %s", s[2].Result)
	}
	if r := result[toolResult](t, s[3]); r.IsError || texts(r)[0] != "Echo: hi" {
		t.Errorf("ev__echo: %s", s[3].Result)
	}
	for i := 4; i <= 7; i++ {
		if s[i].Error != "" {
			t.Errorf("%s: %s", s[i].Op, s[i].Error)
		}
	}
	if !strings.Contains(string(s[6].Result), "features.md") || !strings.Contains(string(s[7].Result), "demo://resource/static/document/features.md") {
		t.Errorf("resources: %s\nread: %s", clipS(s[6].Result), clipS(s[7].Result))
	}
	if s[0].Capabilities["resources"] == nil || s[0].Capabilities["tools"] == nil {
		t.Errorf("merged capabilities: %v", s[0].Capabilities)
	}
}

// The upstream crashing while a call runs gives the client a tool error
// at once, not a hang; later calls fail at once too.
func TestUpstreamCrashMidCall(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	p := proxyPlan(t, filepath.Join(dir, "attune.toml"), nil, "node", everythingServer(t))
	p.Steps = []map[string]any{
		{"op": "call", "name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 30, "steps": 30}, "killUpstreamAfterMs": 700},
		{"op": "call", "name": "echo", "arguments": map[string]any{"message": "after"}},
	}
	s := runClient(t, p)
	r := result[toolResult](t, s[1])
	if !r.IsError || !strings.Contains(texts(r)[0], "upstream upstream, tools/call: the upstream is gone: upstream exited (signal: killed)") {
		t.Errorf("call during the crash: %s", s[1].Result)
	}
	if s[1].Ms > 10000 {
		t.Errorf("the crash took %d ms to reach the client", s[1].Ms)
	}
	if r := result[toolResult](t, s[2]); !r.IsError || !strings.Contains(texts(r)[0], "the upstream is gone") || s[2].Ms > 2000 {
		t.Errorf("call after the crash (%d ms): %s", s[2].Ms, s[2].Result)
	}
}

// A tools/call the upstream does not answer within call_timeout is a tool
// error; the upstream is told to cancel it and the next call works.
func TestToolCallTimeout(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n[harness.mcp]\ncall_timeout = \"700ms\"\n")
	p := proxyPlan(t, filepath.Join(dir, "attune.toml"), nil, "node", everythingServer(t))
	p.Steps = []map[string]any{
		{"op": "call", "name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 20, "steps": 20}},
		{"op": "call", "name": "echo", "arguments": map[string]any{"message": "next"}},
	}
	s := runClient(t, p)
	r := result[toolResult](t, s[1])
	if !r.IsError || !strings.Contains(texts(r)[0], "the call failed: upstream upstream, tools/call: the upstream did not answer in time (call_timeout 700ms in [harness.mcp])") {
		t.Errorf("slow call: %s", s[1].Result)
	}
	if s[1].Ms > 5000 {
		t.Errorf("the timeout took %d ms", s[1].Ms)
	}
	if r := result[toolResult](t, s[2]); r.IsError || texts(r)[0] != "Echo: next" {
		t.Errorf("the call after: %s", s[2].Result)
	}
}

// pidsWith lists the processes whose command line holds marker.
func pidsWith(marker string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			out = append(out, pid)
		}
	}
	return out
}

func without(pids []int, pid int) []int {
	var out []int
	for _, p := range pids {
		if p != pid {
			out = append(out, p)
		}
	}
	return out
}

// The client closing its side ends the upstream and the proxy.
func TestClientDisconnectEndsUpstream(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work-disconnect")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	r := startRaw(t, "--config", filepath.Join(dir, "attune.toml"), "--", "node", fsServer(t), work)
	r.send(initLine)
	if m := r.recv(20 * time.Second); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	upstream := without(pidsWith(work), r.cmd.Process.Pid)
	if len(upstream) != 1 {
		t.Fatalf("want one upstream process naming %s, got %v", work, upstream)
	}
	r.in.Close()
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		t.Fatal("attune mcp did not exit after the client closed its side")
	}
	if pids := without(pidsWith(work), r.cmd.Process.Pid); len(pids) != 0 {
		t.Errorf("the upstream still runs after the client left: %v", pids)
	}
}

// Malformed JSON-RPC from the client is answered with an error and the
// connection goes on.
func TestMalformedFromClient(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n[harness.mcp]\nmax_message = 4096\n")
	r := startRaw(t, "--config", filepath.Join(dir, "attune.toml"), "--", "node", everythingServer(t))
	r.send(`{this is not json`)
	m := r.recv(10 * time.Second)
	if _, has := m["id"]; has { // MCP's SDKs take an error without an id, not a null one
		t.Errorf("answer to a line that is not JSON has an id member: %v", m)
	}
	if code, msg := errorOf(m); code != -32700 || m["id"] != nil || !strings.Contains(msg, "a line that is not a JSON-RPC 2.0 message") {
		t.Errorf("answer to a line that is not JSON: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`)
	m = r.recv(10 * time.Second)
	if code, msg := errorOf(m); code != -32600 || m["id"] != float64(9) || !strings.Contains(msg, "over the limit of 4096 (max_message in [harness.mcp])") {
		t.Errorf("answer to a message over max_message: %v", m)
	}
	r.send(`{"jsonrpc":"1.0","id":7,"method":"ping"}`)
	m = r.recv(10 * time.Second)
	if code, _ := errorOf(m); code != -32600 || m["id"] != float64(7) {
		t.Errorf("answer to a JSON-RPC 1.0 request: %v", m)
	}
	for _, c := range []struct {
		line, want string
		id         any
	}{
		// JSON that is not a request: a batch (MCP has none since 2025-06-18), a number, no method nor id
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, "a JSON array (a batch): MCP has no batches, send each message on a line of its own", float64(3)},
		{`42`, "a message is a JSON object, not a number", nil},
		{`{"jsonrpc":"2.0","id":5,"method":7}`, `"method" is a JSON number, not what JSON-RPC 2.0 wants there`, float64(5)},
		{`{"jsonrpc":"2.0"}`, "a response without an id, or a request without a method", nil},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "the id is a JSON object: it must be a string, a number or absent", nil},
		{`{"jsonrpc":"2.0","id":4,"method":"ping"` + "\x00" + `}`, "invalid character", float64(4)},
	} {
		r.send(c.line)
		m := r.recv(10 * time.Second)
		if code, msg := errorOf(m); code != -32600 && !(code == -32700 && strings.Contains(c.line, "\x00")) || m["id"] != c.id || !strings.Contains(msg, c.want) {
			t.Errorf("answer to %s: %v, want -32600 naming %q, id %v", c.line, m, c.want, c.id)
		}
	}
	r.send(initLine)
	if m := r.recv(20 * time.Second); m["result"] == nil || m["id"] != float64(1) {
		t.Errorf("initialize after the bad lines: %v", m)
	}
	// an answer to a request the proxy never sent is dropped (and logged)
	r.send(`{"jsonrpc":"2.0","id":77,"result":{}}`)
	// tools/call whose params are not {name, arguments}
	for k, params := range []string{`"read"`, `{"name":""}`, `{"name":"echo","arguments":[1]}`, `{"name":"echo","arguments":"hi"}`} {
		id := 20 + k
		r.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":` + params + `}`)
		m := r.recv(10 * time.Second)
		for m["id"] == nil { // the server's notifications
			m = r.recv(10 * time.Second)
		}
		if code, msg := errorOf(m); code != -32602 || m["id"] != float64(id) || !strings.HasPrefix(msg, "attune mcp: tools/call") || strings.Count(msg, "attune mcp") != 1 {
			t.Errorf("tools/call with params %s: %v", params, m)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := r.recv(10 * time.Second); m["id"] != float64(2) || m["error"] != nil {
		t.Errorf("ping: %v", m)
	}
}

// A tool result larger than max_message is a clear tool error; the next
// call works, and a large result under the limit arrives whole.
func TestHugeResult(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "big.txt"), strings.Repeat("0123456789abcdef", 1<<17)) // 2 MiB
	writeFile(t, filepath.Join(work, "small.txt"), "small")
	mid := strings.Repeat("0123456789abcdef", 1<<14) // 256 KiB: in two copies (text and structured), under the limit
	writeFile(t, filepath.Join(work, "mid.txt"), mid)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n[harness.mcp]\nmax_message = 1048576\n")
	p := proxyPlan(t, filepath.Join(dir, "attune.toml"), nil, "node", fsServer(t), work)
	p.Steps = []map[string]any{
		{"op": "call", "name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(work, "big.txt")}},
		{"op": "call", "name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(work, "small.txt")}},
		{"op": "call", "name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(work, "mid.txt")}},
	}
	s := runClient(t, p)
	r := result[toolResult](t, s[1])
	if !r.IsError || !strings.Contains(texts(r)[0], "over the limit of 1048576 (max_message in [harness.mcp])") {
		t.Errorf("huge result: %s", clipS(s[1].Result))
	}
	if r := result[toolResult](t, s[2]); r.IsError || texts(r)[0] != "small" {
		t.Errorf("the call after: %s", s[2].Result)
	}
	if r := result[toolResult](t, s[3]); r.IsError || len(r.Content) != 1 || r.Content[0].Text != mid {
		t.Errorf("a large result under the limit: %s", clipS(s[3].Result))
	}
}

// A call's progress notifications reach the client, with the client's own
// token, in order and before the call's answer.
func TestProgressBeforeAnswer(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	r := startRaw(t, "--config", filepath.Join(dir, "attune.toml"), "--", "node", everythingServer(t))
	r.send(initLine)
	if m := r.recv(30 * time.Second); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("first message: %v, want the answer to initialize", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":3},"_meta":{"progressToken":"tok"}}}`)
	var seen []float64
	for {
		m := r.recv(10 * time.Second)
		if m["method"] == "notifications/progress" {
			p, _ := m["params"].(map[string]any)
			if p["progressToken"] != "tok" {
				t.Errorf("progress with token %v, want the client's", p["progressToken"])
			}
			n, _ := p["progress"].(float64)
			seen = append(seen, n)
		}
		if m["id"] == float64(3) {
			break
		}
	}
	if !reflect.DeepEqual(seen, []float64{1, 2, 3}) {
		t.Errorf("progress before the answer: %v, want [1 2 3]", seen)
	}
}

// notifications/cancelled from the client ends its call: no answer comes
// for it, and the connection goes on.
func TestClientCancelsCall(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	r := startRaw(t, "--config", filepath.Join(dir, "attune.toml"), "--", "node", everythingServer(t))
	r.send(initLine)
	if m := r.recv(30 * time.Second); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":10,"steps":10}}}`)
	time.Sleep(500 * time.Millisecond)
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"the user changed their mind"}}`)
	r.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	// the operation would end after 10 s: watch until then for an answer
	pinged := false
	watch := time.After(11 * time.Second)
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				t.Fatal("attune mcp closed its output")
			}
			var m map[string]any
			_ = json.Unmarshal([]byte(l), &m)
			if m["id"] == "slow" {
				t.Fatalf("the cancelled call was answered: %v", m)
			}
			if m["id"] == float64(6) {
				pinged = true
			}
		case <-watch:
			if !pinged {
				t.Fatal("no answer to the ping after the cancellation")
			}
			return
		}
	}
}
