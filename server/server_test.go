package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/fstest"

	"attune/config"
	"attune/engine"
	"attune/pin"
	"attune/store"
)

// client is a host in another language, speaking JSON-RPC over two pipes.
type client struct {
	t     *testing.T
	in    *io.PipeWriter // to the server
	out   *bufio.Scanner // from the server
	next  int
	reads int
	cores int
}

func (c *client) request(method string, params any) map[string]any {
	c.t.Helper()
	c.next++
	p, _ := json.Marshal(params)
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": json.RawMessage(p)})
	if _, err := c.in.Write(append(msg, '\n')); err != nil {
		c.t.Fatal(err)
	}
	for c.out.Scan() {
		var m map[string]any
		if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
			c.t.Fatal(err)
		}
		if method, ok := m["method"].(string); ok { // the engine asks the host
			var res any
			switch method {
			case "host/read":
				c.reads++
				res = "main"
			case "host/core":
				c.cores++
				res = map[string]any{"echo": m["params"].(map[string]any)["args"]}
			case "host/floor":
				res = map[string]any{"refused": false}
			}
			ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": res})
			c.in.Write(append(ans, '\n'))
			continue
		}
		if m["error"] != nil {
			return map[string]any{"error": m["error"]}
		}
		return m["result"].(map[string]any)
	}
	c.t.Fatal("server closed")
	return nil
}

// R9.2: attune serve is the engine as a JSON-RPC 2.0 service over stdio; the
// engine calls back host/read, host/floor and host/core.
func TestServe(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := New(outW)
	pack := fstest.MapFS{"p.lua": {Data: []byte(`
hook.tool("fs/read", {post = function(c, o) return "seen " .. c.args.path end})
hook.round("end", function(b) notify("branch " .. admit.read("vcs/branch"), "activating") end)`)}}
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: store.NewMemory(), Read: srv.Read, Floor: srv.Floor,
		PacksFirst: []pin.Pack{{Name: "t", FS: pack}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv.Attach(e)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, inR); outW.Close() }()
	c := &client{t: t, in: inW, out: bufio.NewScanner(outR)}

	if r := c.request("tools/register", map[string]any{"path": "fs/read", "effects": []string{"read"}}); r["error"] != nil {
		t.Fatal(r)
	}
	if r := c.request("start", map[string]any{"instance": "a", "bot": "main"}); r["instance"] != "a" {
		t.Fatal(r)
	}
	c.request("turn/begin", map[string]any{"instance": "a", "input": "hello"})
	c.request("round/begin", map[string]any{"instance": "a"})
	out := c.request("tool", map[string]any{"instance": "a", "path": "fs/read", "args": map[string]any{"path": "x"}})
	if out["status"] != "ok" || c.cores != 1 || out["diagnostics"].([]any)[0] != "seen x" {
		t.Fatalf("tool: %v (cores %d)", out, c.cores)
	}
	end := c.request("round/end", map[string]any{"instance": "a"})
	notes := end["notes"].([]any)
	if end["continue"] != true || len(notes) != 1 || !strings.Contains(notes[0].(map[string]any)["text"].(string), "branch main") || c.reads != 1 {
		t.Fatalf("round end: %v", end)
	}
	if r := c.request("nope", map[string]any{"instance": "a"}); r["error"] == nil {
		t.Fatal("an unknown method must be an error")
	}
	if r := c.request("tool", map[string]any{"instance": "ghost", "path": "fs/read"}); r["error"] == nil {
		t.Fatal("a stopped instance must be an error")
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
