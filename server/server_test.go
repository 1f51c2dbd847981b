package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// peer is a host in another language, speaking JSON-RPC over two pipes:
// requests may be pipelined; the engine's callbacks are answered by
// handler; notifications are kept.
type peer struct {
	t       testing.TB
	in      *io.PipeWriter
	done    chan error
	srv     *Server
	handler func(method string, params map[string]any) (any, *rpcError)

	mu      sync.Mutex
	waiting map[string]chan map[string]any
	notes   []map[string]any
	logs    []map[string]any
	traces  []map[string]any    // trace notifications
	calls   map[string]int      // callbacks by method
	rawc    chan map[string]any // the same, as they come
	lines   chan []byte         // every line, when tapped
	tap     bool
	methods map[string]string // request id -> method, to check results against the schema
	schema  *jsonSchema
}

// validate checks one message the server sent against
// docs/protocol.schema.json.
func (p *peer) validate(line []byte) {
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		p.t.Errorf("the server sent %s: %v", line, err)
		return
	}
	if err := p.schema.check("#/$defs/serverMessage", v); err != nil {
		p.t.Errorf("schema: %s: %v", line, err)
		return
	}
	msgs := []any{v}
	if l, ok := v.([]any); ok {
		msgs = l
	}
	for _, x := range msgs {
		m := x.(map[string]any)
		method, isCall := m["method"].(string)
		group := "notifications"
		if _, hasID := m["id"]; hasID {
			group = "callbacks"
		}
		switch {
		case isCall:
			if err := p.schema.check(ref(group, method), m["params"]); err != nil {
				p.t.Errorf("schema: %s %s: %s: %v", group, method, line, err)
			}
		case m["result"] != nil:
			p.mu.Lock()
			method := p.methods[fmt.Sprint(m["id"])]
			p.mu.Unlock()
			if method != "" {
				if err := p.schema.check(ref("results", method), m["result"]); err != nil {
					p.t.Errorf("schema: result of %s: %s: %v", method, line, err)
				}
			}
		}
	}
}

const peerConfig = "[engine]\nhost_timeout = \"2s\"\n[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\"]\n"

const peerProgram = `
hook.tool("fs/read", {post = function(c, o) return "seen " .. c.args.path end})
guard.tool("fs/marked", function(c, invoke) mark(c, "checked") return invoke() end)
hook.round("end", function(b) notify("branch " .. admit.read("vcs/branch"), "activating") end)
hook.turn("start", function(b) print("turn " .. b.turn) end)
define.reducer("counter", function(state, action)
  if action.type == "add" then state.n = (state.n or 0) + action.by end
  return state
end, {init = {n = 0}})
define.method("counter", "add", function(ctx, state, input)
  propose({type = "add", by = input.by})
  return state.n + input.by
end, {kind = "command", input = {by = "number"}})
`

// newPeer starts a server with an engine on a memory store and a client
// that has sent initialize with caps (nil: no initialize).
func newPeer(t testing.TB, cfgTOML string, programs map[string]string, o Options, caps map[string]any) *peer {
	t.Helper()
	cfg, err := config.Parse("attune.toml", []byte(cfgTOML))
	if err != nil {
		t.Fatal(err)
	}
	pack := fstest.MapFS{}
	for name, src := range programs {
		pack[name] = &fstest.MapFile{Data: []byte(src)}
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	o.Engine = engine.Options{Config: cfg, Store: store.NewMemory(), PacksFirst: []pin.Pack{{Name: "t", FS: pack}}}
	srv := New(outW, o)
	p := &peer{t: t, in: inW, done: make(chan error, 1), srv: srv, waiting: map[string]chan map[string]any{},
		calls: map[string]int{}, rawc: make(chan map[string]any, 100), lines: make(chan []byte, 1000),
		methods: map[string]string{}, schema: protocolSchema(t)}
	p.handler = p.defaultHandler
	go func() { p.done <- srv.Serve(context.Background(), inR); outW.Close() }()
	go p.read(outR)
	t.Cleanup(func() { inW.Close(); srv.Close() })
	if caps != nil {
		if r := p.call("initialize", map[string]any{"protocol_version": 1, "capabilities": caps}); r["error"] != nil {
			t.Fatal(r)
		}
	}
	return p
}

func (p *peer) defaultHandler(method string, params map[string]any) (any, *rpcError) {
	switch method {
	case "host/read":
		return "main", nil
	case "host/core":
		return map[string]any{"echo": params["args"]}, nil
	case "host/floor":
		return map[string]any{"refused": false}, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "no " + method}
}

func (p *peer) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		p.validate(line)
		p.mu.Lock()
		if p.tap {
			p.lines <- line
		}
		p.mu.Unlock()
		if len(line) > 0 && line[0] == '[' {
			var batch []map[string]any
			if err := json.Unmarshal(line, &batch); err != nil {
				p.t.Errorf("the server sent %s: %v", line, err)
				continue
			}
			p.rawc <- map[string]any{"batch": batch}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			p.t.Errorf("the server sent %s: %v", line, err)
			continue
		}
		if m["jsonrpc"] != "2.0" {
			p.t.Errorf("no jsonrpc 2.0: %s", line)
		}
		method, isCall := m["method"].(string)
		id, hasID := m["id"]
		switch {
		case isCall && hasID: // the engine asks the host
			prm, _ := m["params"].(map[string]any)
			p.mu.Lock()
			p.calls[method]++
			h := p.handler
			p.mu.Unlock()
			go func() {
				res, rerr := h(method, prm)
				ans := map[string]any{"jsonrpc": "2.0", "id": id}
				if raw, ok := res.(rawAnswer); ok { // the members as given: a malformed answer
					maps.Copy(ans, raw)
					p.send(ans)
					return
				}
				if rerr != nil {
					ans["error"] = rerr
				} else {
					ans["result"] = res
				}
				p.send(ans)
			}()
		case isCall:
			p.mu.Lock()
			if method == "notes" {
				p.notes = append(p.notes, m["params"].(map[string]any))
			} else if method == "log" {
				p.logs = append(p.logs, m["params"].(map[string]any))
			} else if method == "trace" {
				p.traces = append(p.traces, m["params"].(map[string]any))
			}
			p.mu.Unlock()
		default:
			key := fmt.Sprint(id)
			p.mu.Lock()
			ch := p.waiting[key]
			delete(p.waiting, key)
			p.mu.Unlock()
			if ch != nil {
				ch <- m
			} else {
				p.rawc <- m
			}
		}
	}
}

// rawAnswer, returned by a handler, is sent as the answer's members
// beside jsonrpc and id, with no result added.
type rawAnswer map[string]any

func (p *peer) send(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	p.line(data)
}

func (p *peer) line(data []byte) {
	if _, err := p.in.Write(append(data, '\n')); err != nil {
		p.t.Errorf("write: %v", err)
	}
}

var peerSeq sync.Mutex
var peerNext int

// start sends a request and returns a channel for its response.
func (p *peer) start(method string, params any) (int, chan map[string]any) {
	p.mu.Lock()
	peerSeq.Lock()
	peerNext++
	id := peerNext
	peerSeq.Unlock()
	ch := make(chan map[string]any, 1)
	p.waiting[fmt.Sprint(float64(id))] = ch
	p.methods[fmt.Sprint(float64(id))] = method
	p.mu.Unlock()
	p.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return id, ch
}

// wait returns a response's result, or {"error": ...}.
func (p *peer) wait(ch chan map[string]any) map[string]any {
	p.t.Helper()
	select {
	case m := <-ch:
		if m["error"] != nil {
			return map[string]any{"error": m["error"]}
		}
		r, _ := m["result"].(map[string]any)
		if r == nil {
			r = map[string]any{"result": m["result"]}
		}
		return r
	case <-time.After(20 * time.Second):
		p.t.Fatal("no answer in 20s")
	}
	return nil
}

func (p *peer) call(method string, params any) map[string]any {
	p.t.Helper()
	_, ch := p.start(method, params)
	return p.wait(ch)
}

// next returns the next message no request waited for.
func (p *peer) next() map[string]any {
	p.t.Helper()
	select {
	case m := <-p.rawc:
		return m
	case <-time.After(20 * time.Second):
		p.t.Fatal("no message in 20s")
	}
	return nil
}

// errCode is "CODE DATA.CODE" of an error response ("" when none).
func errCode(r map[string]any) string {
	e, _ := r["error"].(map[string]any)
	if e == nil {
		return ""
	}
	d, _ := e["data"].(map[string]any)
	c, _ := d["code"].(string)
	return fmt.Sprintf("%v %s", e["code"], c)
}

// R9.2: attune serve is the engine as a JSON-RPC 2.0 service over stdio; the
// engine calls back host/read, host/floor and host/core.
func TestServe(t *testing.T) {
	p := newPeer(t, peerConfig, map[string]string{"p.lua": peerProgram}, Options{}, map[string]any{"floor": true})
	if r := p.call("tools/register", map[string]any{"path": "fs/read", "effects": []string{"read"}}); r["error"] != nil {
		t.Fatal(r)
	}
	if r := p.call("start", map[string]any{"instance": "a", "bot": "main"}); r["instance"] != "a" || r["bot"] != "main" {
		t.Fatal(r)
	}
	if r := p.call("turn/begin", map[string]any{"instance": "a", "input": "hello"}); r["status"] != "ok" || r["turn"] != 1.0 {
		t.Fatal(r)
	}
	p.call("round/begin", map[string]any{"instance": "a"})
	out := p.call("tool", map[string]any{"instance": "a", "path": "fs/read", "args": map[string]any{"path": "x"}})
	if out["status"] != "ok" || out["diagnostics"].([]any)[0] != "seen x" || out["result"].(map[string]any)["echo"].(map[string]any)["path"] != "x" {
		t.Fatalf("tool: %v", out)
	}
	end := p.call("round/end", map[string]any{"instance": "a"})
	notes := end["notes"].([]any)
	if end["continue"] != true || len(notes) != 1 || !strings.Contains(notes[0].(map[string]any)["text"].(string), "branch main") {
		t.Fatalf("round end: %v", end)
	}
	// the README's counter from another language: a number input
	if m := p.call("method", map[string]any{"instance": "a", "owner": "counter", "method": "add", "input": map[string]any{"by": 5}}); m["status"] != "ok" || m["result"] != 5.0 || m["revision"] != 1.0 {
		t.Fatalf("method: %v", m)
	}
	if r := p.call("state", map[string]any{"instance": "a", "owner": "counter"}); r["revision"] != 1.0 || r["state"].(map[string]any)["n"] != 5.0 {
		t.Fatalf("state: %v", r)
	}
	le := p.call("turn/end", map[string]any{"instance": "a", "addenda": []string{"bye"}})
	if le["loop_end"] == nil {
		t.Fatalf("turn end: %v", le)
	}
	rp := p.call("replay", map[string]any{"instance": "a"})
	if rp["steps"].(float64) < 4 || len(rp["diverged"].([]any)) != 0 || len(rp["notes"].([]any)) != 1 {
		t.Fatalf("replay: %v", rp)
	}
	p.mu.Lock()
	calls := fmt.Sprint(p.calls)
	p.mu.Unlock()
	if calls != "map[host/core:1 host/floor:1 host/read:1]" {
		t.Fatalf("callbacks: %s (the replay must not call the host)", calls)
	}
	if r := p.call("tool", map[string]any{"instance": "ghost", "path": "fs/read"}); errCode(r) != "-32000 not-running" {
		t.Fatalf("a stopped instance: %v", r)
	}
	p.in.Close()
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
}

// initialize: the engine's and the protocol's version, the capabilities;
// nothing runs before it; a client without host/floor gets no floor round
// trip (the configuration's floor decides).
func TestServeInitialize(t *testing.T) {
	p := newPeer(t, peerConfig+"[floor]\nrefuse_marks = [\"checked\"]\n", map[string]string{"p.lua": peerProgram}, Options{MaxMessage: 1 << 20}, nil)
	if r := p.call("start", map[string]any{"instance": "a", "bot": "main"}); errCode(r) != "-32002 " {
		t.Fatalf("before initialize: %v", r)
	}
	if r := p.call("initialize", map[string]any{"protocol_version": 2}); errCode(r) != "-32602 " {
		t.Fatalf("protocol 2: %v", r)
	}
	for _, c := range []struct {
		params map[string]any
		param  string
		text   string
	}{
		{map[string]any{"host_timeout_ms": 1e15}, "host_timeout_ms", "between 1 and"}, // more than a time.Duration holds
		{map[string]any{"host_timeout_ms": -5}, "host_timeout_ms", "between 1 and"},
		{map[string]any{"capabilities": map[string]any{"floor": "yes"}}, "capabilities", `"capabilities.floor": want a boolean`},
	} {
		r := p.call("initialize", c.params)
		e, _ := r["error"].(map[string]any)
		d, _ := e["data"].(map[string]any)
		if errCode(r) != "-32602 " || d["param"] != c.param || !strings.Contains(fmt.Sprint(e["message"]), c.text) {
			t.Fatalf("initialize %v: %v", c.params, r)
		}
	}
	r := p.call("initialize", map[string]any{"protocol_version": 1, "client": map[string]any{"name": "t"}, "capabilities": map[string]any{"log": true, "notes": true}, "host_timeout_ms": 1500})
	caps, _ := r["capabilities"].(map[string]any)
	if r["protocol_version"] != 1.0 || r["engine"].(map[string]any)["version"] != engine.Version || caps["floor"] != false ||
		caps["host_timeout_ms"] != 1500.0 || caps["max_message"] != float64(1<<20) || fmt.Sprint(caps["notifications"]) != "[log notes]" {
		t.Fatalf("initialize: %v", r)
	}
	if r := p.call("initialize", map[string]any{}); errCode(r) != "-32600 " {
		t.Fatalf("twice: %v", r)
	}
	p.call("tools/register", map[string]any{"path": "fs/marked", "effects": []string{"read"}})
	p.call("tools/register", map[string]any{"path": "fs/plain", "effects": []string{"read"}})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})
	if out := p.call("tool", map[string]any{"instance": "a", "path": "fs/marked", "args": map[string]any{}}); out["refused_by"] != "floor" || out["code"] != "floor" {
		t.Fatalf("the config's floor: %v", out)
	}
	if out := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": 1}); out["status"] != "ok" {
		t.Fatalf("plain: %v", out)
	}
	p.call("turn/begin", map[string]any{"instance": "a"})
	p.call("round/begin", map[string]any{"instance": "a"})
	p.call("round/end", map[string]any{"instance": "a"})
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls["host/floor"] != 0 || p.calls["host/core"] != 1 {
		t.Fatalf("callbacks without the floor capability: %v", p.calls)
	}
	// notes as they are emitted; Lua print as a log notification
	if len(p.notes) != 1 || p.notes[0]["instance"] != "a" || !strings.Contains(fmt.Sprint(p.notes[0]["note"]), "branch main") {
		t.Fatalf("notes: %v", p.notes)
	}
	found := false
	for _, l := range p.logs {
		f, _ := l["fields"].(map[string]any)
		found = found || (l["message"] == "print" && f["text"] == "turn 1" && f["program"] == "p" && f["instance"] == "a")
	}
	if !found {
		t.Fatalf("logs: %v", p.logs)
	}
}
