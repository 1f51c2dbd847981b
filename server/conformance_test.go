package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func initialized(t *testing.T, o Options, caps map[string]any) *peer {
	p := newPeer(t, peerConfig, map[string]string{"p.lua": peerProgram}, o, caps)
	p.call("tools/register", map[string]any{"path": "fs/read", "effects": []string{"read"}})
	p.call("tools/register", map[string]any{"path": "fs/plain", "effects": []string{"read"}})
	return p
}

// JSON-RPC 2.0, case by case (the table in docs/protocol.md).
func TestServeJSONRPC(t *testing.T) {
	p := initialized(t, Options{MaxMessage: 4096}, map[string]any{})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})

	t.Run("id types", func(t *testing.T) {
		for _, id := range []string{`"s-1"`, `7`, `-3`, `1.5`, `null`} {
			p.line([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tool","params":{"instance":"a","path":"fs/plain","args":1}}`))
			m := p.next()
			got, _ := json.Marshal(m["id"])
			if string(got) != id && !(id == "7" && string(got) == "7") {
				t.Errorf("id %s came back as %s", id, got)
			}
			if r, _ := m["result"].(map[string]any); r["status"] != "ok" {
				t.Errorf("id %s: %v", id, m)
			}
		}
		for _, id := range []string{`true`, `{"a":1}`, `[1]`} {
			p.line([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tool","params":{"instance":"a","path":"fs/plain"}}`))
			if m := p.next(); errCode(m) != "-32600 " || m["id"] != nil {
				t.Errorf("id %s: %v", id, m)
			}
		}
	})
	t.Run("invalid request", func(t *testing.T) {
		for line, want := range map[string]string{
			`{"id":1,"method":"tool","params":{"instance":"a","path":"fs/plain"}}`:                 "-32600 ",
			`{"jsonrpc":"1.0","id":2,"method":"tool","params":{"instance":"a","path":"fs/plain"}}`: "-32600 ",
			`{"jsonrpc":"2.0","id":3,"method":5}`:                                                  "-32600 ",
			`{"jsonrpc":"2.0","id":4}`:                                                             "-32600 ",
			`{"jsonrpc":"2.0","id":5,"method":"tool","params":{"instance":"a","path":"x"},"x":1}`:  "-32600 ",
			`"just a string"`: "-32600 ",
			`{"jsonrpc":"2.0","id":6,"method":"tool","params":["a","fs/plain"]}`: "-32602 ",
			`{"jsonrpc":"2.0","id":7,"method":"no/such"}`:                        "-32601 ",
			`{"jsonrpc":"2.0","id":8,"method":"tool","params":{"instance":"a"`:   "-32700 ",
		} {
			p.line([]byte(line))
			if m := p.next(); errCode(m) != want {
				t.Errorf("%s: %v, want %s", line, m, want)
			}
		}
	})
	t.Run("invalid params", func(t *testing.T) {
		for _, c := range []struct {
			method string
			params map[string]any
			param  string
		}{
			{"rollback", map[string]any{"instance": "a"}, "to_turn"}, // no silent rollback to turn 0
			{"tool", map[string]any{"instance": "a"}, "path"},
			{"tool", map[string]any{"path": "fs/plain"}, "instance"},
			{"tool", map[string]any{"instance": "a", "path": 5}, "path"},
			{"tool", map[string]any{"instance": "a", "path": "fs/plain", "argz": 1}, "argz"},
			{"round/end", map[string]any{"instance": "a", "host_continue": "yes"}, "host_continue"},
			{"rollback", map[string]any{"instance": "a", "to_turn": 1.5}, "to_turn"},
			{"turn/end", map[string]any{"instance": "a", "addenda": "x"}, "addenda"},
			{"rollback", map[string]any{"instance": "a", "to_turn": -1}, "to_turn"}, // not a turn, not a rollback of everything
			{"rollback", map[string]any{"instance": "a", "to_turn": "1"}, "to_turn"},
			{"tools/register", map[string]any{"path": ""}, "path"},
			{"start", map[string]any{"instance": "k", "bot": "main", "kind": "weird"}, "kind"}, // not started as a foreground instance
		} {
			r := p.call(c.method, c.params)
			e, _ := r["error"].(map[string]any)
			d, _ := e["data"].(map[string]any)
			if errCode(r) != "-32602 " || d["param"] != c.param || !strings.Contains(e["message"].(string), c.param) {
				t.Errorf("%s %v: %v", c.method, c.params, r)
			}
		}
	})
	t.Run("whole numbers", func(t *testing.T) {
		// JSON has one number type: 1.0 is the integer 1 (the schema's
		// "integer"), as a JavaScript or Python client may write it
		p.line([]byte(`{"jsonrpc":"2.0","id":"w1","method":"rollback","params":{"instance":"a","to_turn":0.0}}`))
		if m := p.next(); m["error"] != nil {
			t.Errorf("to_turn 0.0: %v", m)
		}
	})
	t.Run("engine errors", func(t *testing.T) {
		if r := p.call("round/begin", map[string]any{"instance": "a"}); errCode(r) != "-32000 no-open-turn" {
			t.Errorf("%v", r)
		}
		if r := p.call("start", map[string]any{"instance": "b", "bot": "nobody"}); errCode(r) != "-32000 unknown-bot" {
			t.Errorf("%v", r)
		}
		if r := p.call("rollback", map[string]any{"instance": "a", "to_turn": 9}); errCode(r) != "-32000 invalid" {
			t.Errorf("%v", r)
		}
	})
	t.Run("notification", func(t *testing.T) {
		// no answer, but it runs: the next request of the instance sees its effect
		p.send(map[string]any{"jsonrpc": "2.0", "method": "turn/begin", "params": map[string]any{"instance": "a"}})
		p.send(map[string]any{"jsonrpc": "2.0", "method": "nope"})
		if r := p.call("round/begin", map[string]any{"instance": "a"}); r["status"] != "ok" || r["turn"] != 1.0 {
			t.Errorf("after a notification: %v", r)
		}
		p.call("turn/end", map[string]any{"instance": "a"})
	})
	t.Run("batch", func(t *testing.T) {
		p.line([]byte(`[{"jsonrpc":"2.0","id":"b1","method":"tool","params":{"instance":"a","path":"fs/plain","args":1}},` +
			`{"jsonrpc":"2.0","method":"tool","params":{"instance":"a","path":"fs/plain"}},` +
			`{"jsonrpc":"2.0","id":"b2","method":"nope"},` +
			`{"jsonrpc":"2.0","id":"b3","method":"start","params":{"instance":"c","bot":"main"}},` +
			`1]`))
		m := p.next()
		batch, _ := m["batch"].([]map[string]any)
		ids := map[string]map[string]any{}
		for _, r := range batch {
			ids[fmt.Sprint(r["id"])] = r
		}
		if len(batch) != 4 || ids["b1"]["result"].(map[string]any)["status"] != "ok" || errCode(ids["b2"]) != "-32601 " ||
			ids["b3"]["result"].(map[string]any)["instance"] != "c" || errCode(ids["<nil>"]) != "-32600 " {
			t.Errorf("batch: %v (%v)", batch, m)
		}
		p.line([]byte(`[]`))
		if m := p.next(); errCode(m) != "-32600 " {
			t.Errorf("empty batch: %v", m)
		}
		p.line([]byte(`[{"jsonrpc":"2.0","method":"tool","params":{"instance":"a","path":"fs/plain"}}]`))
		if r := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": 2}); r["status"] != "ok" {
			t.Errorf("after a batch of notifications: %v", r)
		}
	})
	t.Run("oversize line", func(t *testing.T) {
		// the id, when it comes before the large value, is kept
		p.line([]byte(`{"jsonrpc":"2.0","id":"big","method":"tool","params":{"instance":"a","path":"fs/plain","args":"` + strings.Repeat("x", 5000) + `"}}`))
		if m := p.next(); errCode(m) != "-32600 oversize" || m["id"] != "big" {
			t.Errorf("oversize: %v", m)
		}
		p.line([]byte(`{"jsonrpc":"2.0","method":"tool","params":{"instance":"a","path":"fs/plain","args":"` + strings.Repeat("x", 5000) + `"},"id":"late"}`))
		if m := p.next(); errCode(m) != "-32600 oversize" || m["id"] != nil {
			t.Errorf("oversize, id at the end: %v", m)
		}
		if r := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": 3}); r["status"] != "ok" {
			t.Errorf("after an oversize line the instance is lost: %v", r)
		}
	})
}

// Requests for one instance run in the order they arrive (pipelined
// without waiting); different instances run concurrently.
func TestServePipelinedOrder(t *testing.T) {
	p := initialized(t, Options{}, map[string]any{})
	var chans []chan map[string]any
	_, ch := p.start("start", map[string]any{"instance": "a", "bot": "main"})
	chans = append(chans, ch)
	for k := 0; k < 20; k++ {
		for _, m := range []string{"turn/begin", "round/begin", "round/end", "turn/end"} {
			_, ch := p.start(m, map[string]any{"instance": "a"})
			chans = append(chans, ch)
		}
	}
	for k, ch := range chans {
		if r := p.wait(ch); r["error"] != nil || (k > 0 && r["status"] != "ok") {
			t.Fatalf("request %d: %v", k, r)
		}
	}
	// a child named in spawn takes the requests pipelined right behind it
	chans = chans[:0]
	for k := 0; k < 10; k++ {
		child := fmt.Sprintf("child-%d", k)
		for _, m := range []struct {
			method string
			params map[string]any
		}{
			{"spawn", map[string]any{"instance": "a", "child": child}},
			{"turn/begin", map[string]any{"instance": child}},
			{"turn/end", map[string]any{"instance": child}},
		} {
			_, ch := p.start(m.method, m.params)
			chans = append(chans, ch)
		}
	}
	for k, ch := range chans {
		if r := p.wait(ch); r["error"] != nil {
			t.Fatalf("spawn pipelined, request %d: %v", k, r)
		}
	}
	// instance b's core blocks until instance c has been served
	release := make(chan struct{})
	var cores atomic.Int32
	p.mu.Lock()
	p.handler = func(method string, params map[string]any) (any, *rpcError) {
		if method == "host/core" && params["instance"] == "b" {
			cores.Add(1)
			<-release
		}
		return "ok", nil
	}
	p.mu.Unlock()
	p.call("start", map[string]any{"instance": "b", "bot": "main"})
	p.call("start", map[string]any{"instance": "c", "bot": "main"})
	_, chB := p.start("tool", map[string]any{"instance": "b", "path": "fs/read", "args": map[string]any{"path": "x"}})
	for cores.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if r := p.call("tool", map[string]any{"instance": "c", "path": "fs/plain", "args": 1}); r["status"] != "ok" {
		t.Fatalf("c while b waits: %v", r)
	}
	close(release)
	if r := p.wait(chB); r["status"] != "ok" {
		t.Fatalf("b: %v", r)
	}
}

// $/cancelRequest cancels a request in flight: its pending callback ends
// and it is answered -32800; the instance carries on.
func TestServeCancel(t *testing.T) {
	p := initialized(t, Options{}, map[string]any{})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})
	entered := make(chan struct{}, 1)
	p.mu.Lock()
	p.handler = func(method string, params map[string]any) (any, *rpcError) {
		if method == "host/core" && params["path"] == "fs/read" {
			entered <- struct{}{}
			time.Sleep(time.Hour) // never answers
		}
		return "ok", nil
	}
	p.mu.Unlock()
	id, ch := p.start("tool", map[string]any{"instance": "a", "path": "fs/read", "args": map[string]any{"path": "x"}})
	<-entered
	p.send(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": id}})
	if r := p.wait(ch); errCode(r) != "-32800 cancelled" {
		t.Fatalf("cancelled: %v", r)
	}
	if r := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": 1}); r["status"] != "ok" {
		t.Fatalf("after: %v", r)
	}
	// a cancel for no request in flight is ignored
	p.send(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": 99999}})
}

// A callback the client never answers times out (the engine's
// host_timeout): its call fails host-timeout, the instance stays usable.
// Duplicate and late answers are ignored and never block the reader.
func TestServeCallbackTimeoutAndDuplicates(t *testing.T) {
	p := initialized(t, Options{}, map[string]any{"floor": true, "log": true})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})
	var ids []any
	p.mu.Lock()
	p.handler = nil
	p.mu.Unlock()
	// answer host/floor three times, and host/core never (the peer's reader
	// runs the handler: replace it with one that answers by hand)
	p.mu.Lock()
	p.handler = func(method string, params map[string]any) (any, *rpcError) {
		if method == "host/core" {
			time.Sleep(3 * time.Second) // past host_timeout (2s)
		}
		return map[string]any{"refused": false}, nil
	}
	p.mu.Unlock()
	t0 := time.Now()
	out := p.call("tool", map[string]any{"instance": "a", "path": "fs/read", "args": map[string]any{"path": "x"}})
	if out["status"] != "failed" || out["code"] != "host-timeout" || time.Since(t0) > 10*time.Second {
		t.Fatalf("timeout: %v", out)
	}
	// duplicates: resend answers to every callback id seen so far, three times
	p.mu.Lock()
	p.handler = func(method string, params map[string]any) (any, *rpcError) {
		return map[string]any{"refused": false}, nil
	}
	p.mu.Unlock()
	for k := 1; k <= 5; k++ {
		ids = append(ids, fmt.Sprintf("e%d", k))
	}
	for range 3 {
		for _, id := range ids {
			p.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"refused": true, "reason": "late"}})
		}
	}
	out = p.call("tool", map[string]any{"instance": "a", "path": "fs/read", "args": map[string]any{"path": "y"}})
	if out["status"] != "ok" {
		t.Fatalf("after duplicates: %v", out)
	}
	time.Sleep(3 * time.Second) // the late core answer arrives
	if r := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": 1}); r["status"] != "ok" {
		t.Fatalf("after a late answer: %v", r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	warned := 0
	for _, l := range p.logs {
		if strings.Contains(fmt.Sprint(l["message"]), "ignored an answer") {
			warned++
		}
	}
	if warned < 10 {
		t.Fatalf("%d ignored answers logged: %v", warned, p.logs)
	}
}

// At the end of input, a callback waiting for the client is cancelled, the
// request in flight is answered, and Serve returns nil.
func TestServeEOFWithPendingCallback(t *testing.T) {
	p := initialized(t, Options{}, map[string]any{})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})
	entered := make(chan struct{}, 1)
	p.mu.Lock()
	p.handler = func(method string, params map[string]any) (any, *rpcError) {
		entered <- struct{}{}
		time.Sleep(time.Hour)
		return nil, nil
	}
	p.mu.Unlock()
	_, ch := p.start("tool", map[string]any{"instance": "a", "path": "fs/read", "args": map[string]any{"path": "x"}})
	<-entered
	p.in.Close()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the end of input")
	}
	if r := p.wait(ch); r["status"] != "failed" || r["code"] != "cancelled" || !strings.Contains(fmt.Sprint(r["error"]), "input ended") {
		t.Fatalf("the request in flight: %v", r)
	}
}

// The engine's fast path (no guard, no hook, the configuration's floor, no
// turn) hands host/core the request's own ctx: the callback still gets the
// host_timeout deadline.
func TestServeFastPathTimeout(t *testing.T) {
	p := newPeer(t, peerConfig, map[string]string{"p.lua": peerProgram}, Options{}, nil)
	p.call("initialize", map[string]any{"host_timeout_ms": 200})
	p.call("tools/register", map[string]any{"path": "fs/plain", "effects": []string{"read"}})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})
	p.mu.Lock()
	p.handler = func(method string, params map[string]any) (any, *rpcError) {
		if params["args"] == "hang" {
			time.Sleep(time.Hour)
		}
		return "ok", nil
	}
	p.mu.Unlock()
	t0 := time.Now()
	out := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": "hang"})
	if out["status"] != "failed" || out["code"] != "host-timeout" || time.Since(t0) > 5*time.Second {
		t.Fatalf("%v", out)
	}
	if out := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": 1}); out["status"] != "ok" {
		t.Fatalf("after: %v", out)
	}
}

// An answer to a callback with neither result nor error (JavaScript's
// JSON.stringify drops "result": undefined), with both, or over the
// message limit fails the call at once, saying so, instead of at the
// callback's deadline.
func TestServeMalformedCallbackAnswer(t *testing.T) {
	p := initialized(t, Options{MaxMessage: 4096}, map[string]any{})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})
	for _, c := range []struct {
		answer rawAnswer
		want   string
	}{
		{rawAnswer{}, `neither "result" nor "error"`},
		{rawAnswer{"result": 1, "error": map[string]any{"code": 1, "message": "x"}}, `both "result" and "error"`},
	} {
		p.mu.Lock()
		p.handler = func(method string, params map[string]any) (any, *rpcError) { return c.answer, nil }
		p.mu.Unlock()
		t0 := time.Now()
		out := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": 1})
		if out["status"] != "failed" || !strings.Contains(fmt.Sprint(out["error"]), "host/core: the client's answer has "+c.want) || time.Since(t0) > time.Second {
			t.Errorf("answer %v: %v after %v", c.answer, out, time.Since(t0))
		}
	}
	// an answer over the message limit fails its call at once too
	p.mu.Lock()
	p.handler = func(method string, params map[string]any) (any, *rpcError) { return strings.Repeat("z", 5000), nil }
	p.mu.Unlock()
	t0 := time.Now()
	out := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": 1})
	if out["status"] != "failed" || !strings.Contains(fmt.Sprint(out["error"]), "host/core: the client's answer: a message longer than 4096 bytes") || time.Since(t0) > time.Second {
		t.Errorf("oversize answer: %v after %v", out, time.Since(t0))
	}
	if m := p.next(); errCode(m) != "-32600 oversize" || m["id"] != nil {
		t.Errorf("oversize answer: %v", m)
	}
	p.mu.Lock()
	p.handler = p.defaultHandler
	p.mu.Unlock()
	if out := p.call("tool", map[string]any{"instance": "a", "path": "fs/plain", "args": 1}); out["status"] != "ok" {
		t.Errorf("after: %v", out)
	}
}

// command takes the name as a user types it (/hello) or bare (hello).
func TestServeCommandName(t *testing.T) {
	p := newPeer(t, peerConfig, map[string]string{"p.lua": peerProgram,
		"commands/hello.lua": `define.command(function(ctx, text) notify("hello " .. text, "ambient") end)`}, Options{}, map[string]any{})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})
	p.call("turn/begin", map[string]any{"instance": "a"})
	for _, name := range []string{"hello", "/hello"} {
		r := p.call("command", map[string]any{"instance": "a", "name": name, "text": "you"})
		if r["status"] != "ok" || !strings.Contains(fmt.Sprint(r["notes"]), "hello you") {
			t.Errorf("command %q: %v", name, r)
		}
	}
}

// Ids come back token for token: 1.5, 0.1, 1e2, 2^63 and a string with an
// escape are never read into a number or re-encoded (attune mcp answered
// 1.5 as 1 and 2^63 as -2^63; serve must not).
func TestServeIDsEchoedAsWritten(t *testing.T) {
	p := initialized(t, Options{}, map[string]any{})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})
	p.mu.Lock()
	p.tap = true
	p.mu.Unlock()
	for _, id := range []string{`1.5`, `0.1`, `1e2`, `9223372036854775808`, `-0`, `12345678901234567890123`, `"a\u0062"`, `"1.5"`} {
		p.line([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tool","params":{"instance":"a","path":"fs/plain","args":1}}`))
		deadline := time.After(20 * time.Second)
	wait:
		for {
			select {
			case l := <-p.lines:
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(l, &m) == nil && string(m.ID) == id {
					break wait
				}
			case <-deadline:
				t.Fatalf("id %s: no answer under that token", id)
			}
		}
		<-p.rawc
	}
}
