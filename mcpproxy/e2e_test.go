//go:build e2e

package mcpproxy_test

// End-to-end tests: the official TypeScript MCP SDK's Client and
// StdioClientTransport (testdata/client.mjs) spawn `attune mcp`, which runs
// the reference servers @modelcontextprotocol/server-filesystem and
// @modelcontextprotocol/server-everything as upstreams. The peers are
// installed by `bash scripts/peers` under testdata/peers.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/internal/peertest"
)

// peers returns the folder holding node_modules with the MCP SDK and the
// reference servers; it fails the test when they are not installed.
func peers(t testing.TB) string {
	t.Helper()
	dir := peertest.Peers(t, "@modelcontextprotocol/sdk/package.json", "@modelcontextprotocol/server-filesystem/package.json", "@modelcontextprotocol/server-everything/package.json")
	peertest.Node(t)
	return dir
}

func fsServer(t testing.TB) string {
	return filepath.Join(peers(t), "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

func everythingServer(t testing.TB) string {
	return filepath.Join(peers(t), "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

// step is one line the client script prints.
type step struct {
	Op           string          `json:"op"`
	Result       json.RawMessage `json:"result"`
	Error        string          `json:"error"`
	Ms           int             `json:"ms"`
	PID          int             `json:"pid"`
	Capabilities map[string]any  `json:"capabilities"`
	Progress     []any           `json:"progress"`
}

// plan is what the client script runs.
type plan struct {
	Peers    string            `json:"peers"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env,omitempty"`
	Sampling string            `json:"sampling,omitempty"`
	Roots    []string          `json:"roots,omitempty"`
	Elicit   map[string]any    `json:"elicit,omitempty"`
	Steps    []map[string]any  `json:"steps"`
}

// runClient runs the SDK client on a plan and returns its steps, the
// connection first.
func runClient(t *testing.T, p plan) []step {
	t.Helper()
	p.Peers = peers(t)
	data, _ := json.Marshal(p)
	file := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(peertest.Root(t), "mcpproxy", "testdata", "client.mjs"), file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		t.Fatalf("client: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var steps []step
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var s step
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("client printed %q: %v", sc.Text(), err)
		}
		steps = append(steps, s)
	}
	if len(steps) != len(p.Steps)+1 {
		t.Fatalf("client printed %d steps, want %d\nstdout:\n%s\nstderr:\n%s", len(steps), len(p.Steps)+1, stdout.String(), stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client stderr:\n%s", stderr.String())
		}
	})
	return steps
}

// proxyPlan runs attune mcp with config in front of the upstream command.
func proxyPlan(t *testing.T, config string, extra []string, upstream ...string) plan {
	args := append([]string{"mcp", "--config", config}, extra...)
	args = append(args, "--")
	args = append(args, upstream...)
	return plan{Command: attuneBin.Path(t), Args: args}
}

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func result[T any](t *testing.T, s step) T {
	t.Helper()
	if s.Error != "" {
		t.Fatalf("%s failed: %s", s.Op, s.Error)
	}
	var v T
	if err := json.Unmarshal(s.Result, &v); err != nil {
		t.Fatalf("%s: %v: %s", s.Op, err, s.Result)
	}
	return v
}

func texts(r toolResult) []string {
	var out []string
	for _, c := range r.Content {
		out = append(out, c.Text)
	}
	return out
}

// exampleConfig is examples/mcp/attune.toml with its pack, the folder
// writes must stay in (inside) and the store given.
func exampleConfig(t *testing.T, dir, inside, store string) string {
	t.Helper()
	root := peertest.Root(t)
	src, err := os.ReadFile(filepath.Join(root, "examples/mcp/attune.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for old, repl := range map[string]string{
		`store = ".attune/state.db"`:  fmt.Sprintf("store = %q", store),
		`packs = ["pack"]`:            fmt.Sprintf("packs = [%q]", filepath.Join(root, "examples/mcp/pack")),
		`inside = "/srv/project/src"`: fmt.Sprintf("inside = %q", inside),
	} {
		if !strings.Contains(text, old) {
			t.Fatalf("examples/mcp/attune.toml no longer holds %s", old)
		}
		text = strings.ReplaceAll(text, old, repl)
	}
	file := filepath.Join(dir, "attune.toml")
	writeFile(t, file, text)
	return file
}

func toolsOf(t *testing.T, s step) map[string]json.RawMessage {
	t.Helper()
	l := result[struct {
		Tools []json.RawMessage `json:"tools"`
	}](t, s)
	out := map[string]json.RawMessage{}
	for _, raw := range l.Tools {
		var n struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &n)
		out[n.Name] = raw
	}
	return out
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

var writeTools = []string{"write_file", "edit_file", "create_directory", "move_file"}

// The list through the proxy is the upstream's own list, minus the tools
// outside the bot's ceiling, plus the pin's defined tools; an allowed call
// returns the upstream's result unchanged.
func TestListAndAllowedCallMatchUpstream(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "src", "a.txt"), "hello from a\n")
	cfg := exampleConfig(t, dir, filepath.Join(work, "src"), "memory:")
	calls := []map[string]any{
		{"op": "list"},
		{"op": "call", "name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(work, "src", "a.txt")}},
		{"op": "call", "name": "list_directory", "arguments": map[string]any{"path": work}},
	}
	direct := runClient(t, plan{Command: "node", Args: []string{fsServer(t), work}, Steps: calls})
	for _, bot := range []string{"editor", "reader"} {
		t.Run(bot, func(t *testing.T) {
			p := proxyPlan(t, cfg, []string{"--bot", bot, "--name", "fs"}, "node", fsServer(t), work)
			p.Steps = calls
			via := runClient(t, p)
			want, got := toolsOf(t, direct[1]), toolsOf(t, via[1])
			if bot == "reader" {
				for _, w := range writeTools {
					if _, ok := want[w]; !ok {
						t.Fatalf("the filesystem server no longer has %s; the example names it", w)
					}
					delete(want, w)
				}
			}
			if _, ok := got["writes"]; !ok {
				t.Errorf("the defined tool writes is not listed: %v", keys(got))
			}
			delete(got, "writes")
			if len(got) != len(want) {
				t.Errorf("through the proxy %v, want %v", keys(got), keys(want))
			}
			for name, w := range want {
				if !bytes.Equal(got[name], w) {
					t.Errorf("tool %s through the proxy:\n%s\nwant (as the upstream sent it):\n%s", name, got[name], w)
				}
			}
			for i := 2; i <= 3; i++ {
				if !jsonEqual(via[i].Result, direct[i].Result) || via[i].Error != "" {
					t.Errorf("call %d through the proxy: %s %s\nwant %s", i-1, via[i].Result, via[i].Error, direct[i].Result)
				}
			}
		})
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A write outside the folder is refused by the guard: the client gets a
// tool error with the reason, and the file system shows the server never
// wrote. A write inside succeeds and gets the post hook's reminder; the
// write count is a project owner that outlives the proxy process.
func TestGuardRefusesAndOwnerPersists(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(work, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := exampleConfig(t, dir, filepath.Join(work, "src"), filepath.Join(dir, "state", "attune.db"))
	outside := filepath.Join(work, "outside.txt")
	in1, in2 := filepath.Join(work, "src", "one.txt"), filepath.Join(work, "src", "two.txt")
	first := proxyPlan(t, cfg, []string{"--name", "fs"}, "node", fsServer(t), work)
	first.Steps = []map[string]any{
		{"op": "call", "name": "write_file", "arguments": map[string]any{"path": outside, "content": "x"}},
		{"op": "call", "name": "write_file", "arguments": map[string]any{"path": in1, "content": "one"}},
	}
	s := runClient(t, first)
	refused := result[toolResult](t, s[1])
	if !refused.IsError || len(refused.Content) == 0 || !strings.Contains(refused.Content[0].Text, "refused by guard: path "+outside+" is outside") {
		t.Errorf("write outside: %+v, want isError with the guard's reason", refused)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("%s exists: the upstream saw a refused call (%v)", outside, err)
	}
	ok := result[toolResult](t, s[2])
	if ok.IsError || len(ok.Content) != 2 || !strings.Contains(ok.Content[0].Text, "Successfully wrote") ||
		ok.Content[1].Text != "attune: "+in1+" changed (write 1 in this project); run the tests before you go on" {
		t.Errorf("write inside: %q, want the upstream's text then the post hook's reminder (write 1)", texts(ok))
	}
	if b, err := os.ReadFile(in1); err != nil || string(b) != "one" {
		t.Errorf("%s: %q %v", in1, b, err)
	}
	// a second proxy process: the project owner counts on
	second := proxyPlan(t, cfg, []string{"--name", "fs"}, "node", fsServer(t), work)
	second.Steps = []map[string]any{
		{"op": "call", "name": "write_file", "arguments": map[string]any{"path": in2, "content": "two"}},
		{"op": "call", "name": "writes", "arguments": map[string]any{}},
	}
	s = runClient(t, second)
	ok = result[toolResult](t, s[1])
	if len(ok.Content) != 2 || !strings.Contains(ok.Content[1].Text, "(write 2 in this project)") {
		t.Errorf("second process: %q, want write 2", texts(ok))
	}
	count := result[struct {
		toolResult
		Structured map[string]any `json:"structuredContent"`
	}](t, s[2])
	if count.Structured["writes"] != float64(2) || count.Structured["last"] != in2 {
		t.Errorf("writes tool: %s", s[2].Result)
	}
}

// A guard's rewrite of the arguments is what the upstream receives, a
// note is appended to the result, and an upstream tool error passes
// through as the upstream sent it.
func TestRewriteReachesUpstream(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(dir, "pack", "stamp.lua"), `
guard.tool("mcp/upstream/write_file", function(call, invoke)
  local args = call.args
  args.content = args.content .. "\n-- checked by attune"
  return invoke(args)
end)
define.tool("notes/write_file", function(ctx, args) return "noted " .. args.text end,
  {effect = {"write"}, input = {text = "string"}})
define.tool("notes/count", function(ctx, args) return {n = 1} end)
hook.tool("mcp/upstream/write_file", {post = function(c, outcome)
  notify("ambient: wrote " .. c.args.path)
end})
`)
	writeFile(t, filepath.Join(dir, "attune.toml"), `
[engine]
store = "memory:"
packs = ["pack"]
[harness.mcp.tools]
"mcp/upstream/write_file" = ["write"]
[bots.main]
behaviors = ["stamp"]
ceiling = ["write"]
`)
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(work, "f.txt")
	p := proxyPlan(t, filepath.Join(dir, "attune.toml"), nil, "node", fsServer(t), work)
	p.Steps = []map[string]any{
		{"op": "call", "name": "write_file", "arguments": map[string]any{"path": target, "content": "body"}},
		{"op": "call", "name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(dir, "elsewhere.txt")}},
		{"op": "list"},
		{"op": "call", "name": "notes__write_file", "arguments": map[string]any{"text": "t"}},
	}
	s := runClient(t, p)
	// defined tools keep their last segment unless it collides
	tools := toolsOf(t, s[3])
	for _, want := range []string{"write_file", "read_text_file", "notes__write_file", "count"} {
		if _, ok := tools[want]; !ok {
			t.Errorf("tool %s is not listed: %v", want, keys(tools))
		}
	}
	if !strings.Contains(string(tools["notes__write_file"]), `"required":["text"]`) {
		t.Errorf("defined tool: %s", tools["notes__write_file"])
	}
	if r := result[toolResult](t, s[4]); r.IsError || texts(r)[0] != "noted t" {
		t.Errorf("defined tool call: %s", s[4].Result)
	}
	// the note the post hook emitted is placed into the next round, which
	// begins as the call ends: it is appended to the call's result
	if r := result[toolResult](t, s[1]); r.IsError || len(r.Content) != 2 || r.Content[1].Text != "ambient: wrote "+target {
		t.Fatalf("write: %q, want the upstream's text and the note", texts(r))
	}
	if b, _ := os.ReadFile(target); string(b) != "body\n-- checked by attune" {
		t.Errorf("the file holds %q, want the guard's rewrite", b)
	}
	// the server refuses a path outside its folder itself: its own error
	r := result[toolResult](t, s[2])
	if !r.IsError || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, "outside allowed directories") {
		t.Errorf("upstream's own error: %s", s[2].Result)
	}
}

func mkdirWrite(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
