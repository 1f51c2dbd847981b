//go:build e2e

package hook

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// block is one content block of a scripted reply: text, or a tool_use
// when Tool is set.
type block struct {
	Text  string
	Tool  string
	ID    string
	Input map[string]any
}

// fakeAPI is a scripted stand-in for the Anthropic Messages API: it
// answers POST /v1/messages (streaming SSE or plain JSON) and records every
// request. Requests that carry tools are the agent's conversation and are
// answered by script, in order; others (titles, summaries) get a short text.
type fakeAPI struct {
	t      *testing.T
	url    string
	script func(n int, req map[string]any) []block

	mu    sync.Mutex
	convo []map[string]any // conversation requests, in order
	other []string         // every other request: method, path and body
}

func newFakeAPI(t *testing.T, script func(n int, req map[string]any) []block) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, script: script}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	f.url = "http://" + ln.Addr().String()
	return f
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		f.mu.Lock()
		f.other = append(f.other, r.Method+" "+r.URL.Path+" "+string(body))
		f.mu.Unlock()
		if strings.Contains(r.URL.Path, "count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"input_tokens": 10}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var blocks []block
	if tools, _ := req["tools"].([]any); len(tools) > 0 {
		f.mu.Lock()
		n := len(f.convo)
		f.convo = append(f.convo, req)
		f.mu.Unlock()
		blocks = f.script(n, req)
	} else {
		f.mu.Lock()
		f.other = append(f.other, "POST "+r.URL.Path+" "+string(body))
		f.mu.Unlock()
		blocks = []block{{Text: "ok"}}
	}
	stop := "end_turn"
	for _, b := range blocks {
		if b.Tool != "" {
			stop = "tool_use"
		}
	}
	if s, _ := req["stream"].(bool); !s {
		content := []any{}
		for _, b := range blocks {
			if b.Tool != "" {
				content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Tool, "input": b.Input})
			} else {
				content = append(content, map[string]any{"type": "text", "text": b.Text})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": req["model"],
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_fake", "type": "message", "role": "assistant",
		"model": req["model"], "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	for k, b := range blocks {
		if b.Tool != "" {
			send("content_block_start", map[string]any{"type": "content_block_start", "index": k,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Tool, "input": map[string]any{}}})
			in, _ := json.Marshal(b.Input)
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": k,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		} else {
			send("content_block_start", map[string]any{"type": "content_block_start", "index": k,
				"content_block": map[string]any{"type": "text", "text": ""}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": k,
				"delta": map[string]any{"type": "text_delta", "text": b.Text}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": k})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// requests returns the conversation requests so far.
func (f *fakeAPI) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.convo...)
}

// text returns every text a request carries (messages and system), as
// one string to search.
func requestText(req map[string]any) string {
	b, _ := json.Marshal(req["messages"])
	return string(b)
}
