package scenario_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/scenario"
	"github.com/attune-dev/attune/server"
	"github.com/attune-dev/attune/store"
)

// rpcClient is a host in another language: it sends requests one at a
// time and answers the engine's callbacks (host/read, host/core).
type rpcClient struct {
	t     *testing.T
	in    *io.PipeWriter
	mu    sync.Mutex
	wait  map[string]chan map[string]any
	seq   int
	cores int
}

func (c *rpcClient) write(v any) {
	data, _ := json.Marshal(v)
	c.in.Write(append(data, '\n'))
}

func (c *rpcClient) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		id, hasID := m["id"]
		method, _ := m["method"].(string)
		switch {
		case method != "" && hasID: // a callback
			var res any = "main"
			if method == "host/core" {
				c.mu.Lock()
				c.cores++
				n := c.cores
				c.mu.Unlock()
				if n == 2 {
					c.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": 1, "message": "disk full"}})
					continue
				}
				res = map[string]any{"text": "contents"}
			}
			c.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
		case hasID:
			c.mu.Lock()
			ch := c.wait[string(mustJSON(id))]
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func (c *rpcClient) call(method string, params any) map[string]any {
	c.mu.Lock()
	c.seq++
	id := c.seq
	ch := make(chan map[string]any, 1)
	c.wait[string(mustJSON(id))] = ch
	c.mu.Unlock()
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	m := <-ch
	if m["error"] != nil {
		c.t.Fatalf("%s: %v", method, m["error"])
	}
	r, _ := m["result"].(map[string]any)
	return r
}

// A session a host drove over `attune serve` (JSON-RPC, its cores and
// reads answered by the client) records and replays without the client.
func TestRecordServeSession(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewMemory()
	pack := fstest.MapFS{"p.lua": &fstest.MapFile{Data: []byte(`
guard.tool("fs/*", function(c, invoke)
  if c.args.path:sub(1, 1) == "/" then return refuse("absolute paths are not allowed") end
  return invoke()
end)
hook.round("end", function(b) notify("branch " .. admit.read("vcs/branch")) end)
`)}}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := server.New(outW, server.Options{Engine: engine.Options{Config: cfg, Store: st, PacksFirst: []pin.Pack{{Name: "t", FS: pack}}}})
	go func() { srv.Serve(ctx, inR); outW.Close() }()
	c := &rpcClient{t: t, in: inW, wait: map[string]chan map[string]any{}}
	go c.read(outR)
	c.call("initialize", map[string]any{"protocol_version": 1, "capabilities": map[string]any{}})
	c.call("tools/register", map[string]any{"path": "fs/read", "effects": []string{"read"}})
	c.call("start", map[string]any{"instance": "a", "bot": "main"})
	c.call("turn/begin", map[string]any{"instance": "a", "input": "hello"})
	c.call("round/begin", map[string]any{"instance": "a"})
	for _, p := range []string{"x", "/etc/passwd", "y"} {
		c.call("tool", map[string]any{"instance": "a", "path": "fs/read", "args": map[string]any{"path": p}})
	}
	c.call("round/end", map[string]any{"instance": "a"})
	c.call("turn/end", map[string]any{"instance": "a"})
	eng := srv.Engine()

	rec, err := engine.LoadSession(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	data, err := scenario.Record(ctx, rec, scenario.RecordOptions{Config: cfg, Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	inW.Close()
	srv.Close()
	sc, err := scenario.Parse("serve.toml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if res := scenario.Run(ctx, sc); !res.Passed {
		t.Fatalf("the recorded serve session fails:\n%s\n%s", res.Failure, data)
	}
	text := string(data)
	for _, want := range []string{`answers = [{result = {text = "contents"}}, {fail = "host/core: the client answered error 1: disk full"}]`, `"vcs/branch" = [{value = "main"}]`,
		`refused_by = "guard"`, `expect = {error = "host/core: the client answered error 1: disk full", status = "failed"}`} {
		if !strings.Contains(text, want) {
			t.Errorf("the recording lacks %s:\n%s", want, text)
		}
	}
	// the guard lets absolute paths through: the second call diverges
	for k, p := range sc.Programs {
		sc.Programs[k].Source = strings.Replace(p.Source, `== "/"`, `== "~"`, 1)
	}
	res := scenario.Run(ctx, sc)
	if res.Passed || res.Fail == nil || res.Fail.Op != "tool" || res.Fail.Index != 5 {
		t.Fatalf("the changed guard: %+v\n%s", res.Fail, res.Failure)
	}
}
