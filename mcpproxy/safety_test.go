package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/internal/peertest"
	"github.com/attune-dev/attune/mcpproxy"
)

// fakeUpstream builds testdata/fakeupstream once per test binary.
var fakeUpstream = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "attune-fakeupstream-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "fakeupstream")
	cmd := exec.Command("go", "build", "-o", bin, "./mcpproxy/testdata/fakeupstream")
	cmd.Dir = rootDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{string(out), err}
	}
	return bin, nil
})

var rootDir string

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return "go build fakeupstream: " + e.err.Error() + "\n" + e.out }

// inproc is attune mcp served in the test's process on pipes, relaying
// fakeupstream (whose tools are named by tools), read and written as raw
// lines.
type inproc struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
	log   string // what the upstream received, a line each
}

func startInproc(t *testing.T, toml, pack string, tools ...string) *inproc {
	t.Helper()
	rootDir = peertest.Root(t)
	bin, err := fakeUpstream()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "pack", "p.lua"), pack)
	putFile(t, filepath.Join(dir, "attune.toml"), toml)
	cfg, err := config.Load(filepath.Join(dir, "attune.toml"))
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "upstream.log")
	t.Setenv("FAKEUPSTREAM_LOG", log)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- mcpproxy.Serve(context.Background(), mcpproxy.Options{Config: cfg, In: inR, Out: outW,
			Upstreams: []mcpproxy.Upstream{{Name: "fs", Command: append([]string{bin}, tools...)}}})
		outW.Close()
	}()
	p := &inproc{t: t, in: inW, lines: make(chan string, 100), log: log}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return after the client closed")
		}
	})
	p.send(initMessage)
	if m := p.answer(`1`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *inproc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// answerLine is the raw line answering id (its token as written).
func (p *inproc) answerLine(id string) string {
	p.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("the proxy closed its output before answering id %s", id)
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal([]byte(l), &m) == nil && string(m.ID) == id {
				return l
			}
		case <-deadline:
			p.t.Fatalf("no answer to id %s", id)
		}
	}
}

func (p *inproc) answer(id string) map[string]any {
	p.t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(p.answerLine(id)), &m); err != nil {
		p.t.Fatal(err)
	}
	return m
}

func (p *inproc) upstreamCalls() []string {
	b, _ := os.ReadFile(p.log)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"method":"tools/call"`) {
			out = append(out, l)
		}
	}
	return out
}

const safetyConfig = "[engine]\nstore = \"memory:\"\npacks = [\"pack\"]\n[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\"]\n"

// R4.2: an upstream's tool named a/b or ../etc is at mcp/fs/a%2Fb and
// mcp/fs/%2E%2E%2Fetc, inside mcp/fs/*: a guard on mcp/fs/* judges it
// (before, its path mcp/fs/a/b was a segment deeper than the pattern, and
// the call ran unguarded), and so does the effects entry mcp/fs/*.
func TestToolNamesStayInsideTheirUpstream(t *testing.T) {
	pack := `
guard.tool("mcp/fs/*", function(c, invoke)
  if c.args.ok then return invoke() end
  return refuse("guarded " .. c.path)
end)
`
	p := startInproc(t, safetyConfig, pack, "a/b", "../etc", "plain", "*", "q?", "x\x01")
	for k, tc := range []struct{ name, path string }{
		{"a/b", "mcp/fs/a%2Fb"}, {"../etc", "mcp/fs/%2E%2E%2Fetc"}, {"plain", "mcp/fs/plain"}, {"*", "mcp/fs/%2A"},
		{"q?", "mcp/fs/q%3F"}, {"x\x01", "mcp/fs/x%01"},
	} {
		id := strings.Repeat("9", k+1)
		name, _ := json.Marshal(tc.name)
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + string(name) + `,"arguments":{}}}`)
		if got := asJSON(p.answer(id)); !strings.Contains(got, "guarded "+tc.path) || !strings.Contains(got, `"isError":true`) {
			t.Errorf("tool %q: not refused by the guard on mcp/fs/* at %s: %s", tc.name, tc.path, got)
		}
	}
	if calls := p.upstreamCalls(); len(calls) != 0 {
		t.Errorf("the upstream ran calls the guard refused: %v", calls)
	}
	p.send(`{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"../etc","arguments":{"ok":true}}}`)
	if got := asJSON(p.answer(`50`)); strings.Contains(got, `"isError":true`) {
		t.Errorf("an allowed call of ../etc: %s", got)
	}

	// effects: mcp/fs/* gives write, outside the ceiling: every tool of fs
	// is refused and unlisted, whatever its name
	p2 := startInproc(t, safetyConfig+"[harness.mcp.tools]\n\"mcp/fs/*\" = [\"write\"]\n", "", "a/b", "../etc")
	p2.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if got := asJSON(p2.answer(`2`)); strings.Contains(got, "etc") || strings.Contains(got, "a/b") {
		t.Errorf("tools with effects outside the ceiling are listed: %s", got)
	}
	for _, name := range []string{"a/b", "../etc"} {
		p2.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`)
		if got := asJSON(p2.answer(`3`)); !strings.Contains(got, `"isError":true`) {
			t.Errorf("%s ran with effects outside the ceiling: %s", name, got)
		}
	}
	if calls := p2.upstreamCalls(); len(calls) != 0 {
		t.Errorf("the upstream ran calls the ceiling refused: %v", calls)
	}
}

// A tools/call whose params name a member twice is refused with -32602
// and never reaches the upstream: the guard read the last "path" while a
// first-wins upstream would have run the first.
func TestDuplicateMembersRefused(t *testing.T) {
	pack := `
guard.tool("mcp/fs/*", function(c, invoke)
  if tostring(c.args.path):find("secret") then return refuse("no secrets") end
  return invoke()
end)
`
	p := startInproc(t, safetyConfig, pack, "read")
	for k, params := range []string{
		`{"name":"read","arguments":{"path":"secret","path":"ok"}}`,
		`{"name":"read","arguments":{"path":"secret","\u0070ath":"ok"}}`,
		`{"name":"read","arguments":{"o":{"path":"secret","path":"ok"}}}`,
		`{"name":"read","name":"read","arguments":{"path":"ok"}}`,
		`{"name":"read","arguments":{"path":"ok"},"_meta":{"a":1,"a":2}}`,
		`{"Name":"read","arguments":{"path":"secret","path":"ok"}}`,
	} {
		id := string(rune('a' + k))
		p.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":` + params + `}`)
		m := p.answer(`"` + id + `"`)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) || !strings.Contains(e["message"].(string), "twice") {
			t.Errorf("%s: not refused as a duplicate: %v", params, m)
		}
	}
	if calls := p.upstreamCalls(); len(calls) != 0 {
		t.Errorf("the upstream received calls with duplicate members: %v", calls)
	}
}

// The upstream receives the arguments the guard judged: a number float64
// cannot hold exactly and a byte that is not UTF-8 are what the guard
// saw (2^53+1 read as 2^53, the byte as U+FFFD), encoded again, not the
// client's text, which a reader of exact numbers or bytes would run
// differently.
func TestUpstreamGetsJudgedArguments(t *testing.T) {
	pack := `
guard.tool("mcp/fs/*", function(c, invoke)
  if c.args.n == 9007199254740992 and c.args.s == "\239\191\189" then return invoke() end
  return refuse("judged " .. tostring(c.args.n))
end)
`
	p := startInproc(t, safetyConfig, pack, "read")
	p.send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"n\":9007199254740993,\"s\":\"\xff\"}}}")
	if got := asJSON(p.answer(`2`)); strings.Contains(got, `"isError":true`) {
		t.Fatalf("the call: %s", got)
	}
	calls := p.upstreamCalls()
	if len(calls) != 1 || strings.Contains(calls[0], "9007199254740993") || !strings.Contains(calls[0], "9007199254740992") ||
		strings.Contains(calls[0], "\xff") {
		t.Fatalf("the upstream received %q, not the judged arguments", calls)
	}
	var sent struct {
		Params struct {
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(calls[0]), &sent); err != nil || sent.Params.Arguments["s"] != "\ufffd" {
		t.Errorf("the upstream's string: %v %v", sent.Params.Arguments, err)
	}
	// arguments whose text says what their value says go as written
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{ "n" : 9007199254740992, "s":"\ufffd" }}}`)
	p.answer(`3`)
	if calls := p.upstreamCalls(); len(calls) != 2 || !strings.Contains(calls[1], `{ "n" : 9007199254740992, "s":"\ufffd" }`) {
		t.Errorf("the client's own text did not go as written: %q", calls)
	}
}

// Ids are answered as the client wrote them: before, 1.5 came back as 1,
// 0.1 as 0, 2^63 as -2^63 (the SDK's integer ids).
func TestIDsEchoedAsSent(t *testing.T) {
	p := startInproc(t, safetyConfig, "", "read")
	for _, id := range []string{`1.5`, `0.1`, `9223372036854775808`, `1e2`, `-7`, `"1.5"`, `"x\u0079"`, `12345678901234567890123`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if l := p.answerLine(id); !strings.Contains(l, `"id":`+id+`,`) && !strings.HasSuffix(l, `"id":`+id+`}`) {
			t.Errorf("id %s answered as %s", id, l)
		}
	}
	// a tools/call too, and an error answer
	p.send(`{"jsonrpc":"2.0","id":2.5,"method":"tools/call","params":{"name":"read","arguments":{}}}`)
	if l := p.answerLine(`2.5`); !strings.Contains(l, `"id":2.5`) {
		t.Errorf("tools/call: %s", l)
	}
	p.send(`{"jsonrpc":"2.0","id":3.5,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	if l := p.answerLine(`3.5`); !strings.Contains(l, `"id":3.5`) || !strings.Contains(l, `"error"`) {
		t.Errorf("an error answer: %s", l)
	}
}

const initMessage = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func putFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
