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
	"time"
)

// fcall is one function call of a scripted model reply.
type fcall struct {
	ID   string
	Name string
	Args map[string]any
	// Input, when set, makes the call a freeform one (Codex's
	// apply_patch: a custom_tool_call whose input is the patch).
	Input string
}

// reply is one scripted model reply: function calls, else the text.
type reply struct {
	Text  string
	Calls []fcall
}

// wire is the API a stand-in model speaks.
type wire int

const (
	wireResponses wire = iota // OpenAI Responses API, SSE (Codex)
	wireGemini                // Gemini streamGenerateContent?alt=sse (Gemini CLI)
	wireChat                  // OpenAI chat completions, SSE or JSON (Copilot CLI)
)

// model is a scripted stand-in model server on 127.0.0.1: the requests
// that carry the agent's tools are its conversation, answered by script in
// order; every other request (a title, a routing or next-speaker check)
// gets a short text and is kept apart.
type model struct {
	t      *testing.T
	wire   wire
	url    string
	script func(n int, body string) reply

	mu    sync.Mutex
	convo []string // conversation request bodies, in order
	other []string // every other request: method, path and body
}

func newModel(t *testing.T, w wire, script func(n int, body string) reply) *model {
	t.Helper()
	m := &model{t: t, wire: w, script: script}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	m.url = "http://" + ln.Addr().String()
	return m
}

// requests returns the conversation request bodies so far.
func (m *model) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.convo...)
}

func (m *model) others() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.other...)
}

// allText is every conversation request, one string to search.
func (m *model) allText() string { return strings.Join(m.requests(), "\n") }

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	tools, _ := req["tools"].([]any)
	convo := r.Method == http.MethodPost && len(tools) > 0
	if m.wire == wireGemini {
		convo = convo && strings.Contains(r.URL.Path, ":streamGenerateContent")
	}
	var rep reply
	if convo {
		m.mu.Lock()
		n := len(m.convo)
		m.convo = append(m.convo, string(body))
		m.mu.Unlock()
		rep = m.script(n, string(body))
	} else {
		m.mu.Lock()
		m.other = append(m.other, r.Method+" "+r.URL.String()+" "+string(body))
		m.mu.Unlock()
		rep = reply{Text: "ok"}
	}
	switch m.wire {
	case wireResponses:
		m.responses(w, r, rep)
	case wireGemini:
		m.gemini(w, r, rep)
	case wireChat:
		m.chat(w, r, req, rep)
	}
}

func sse(w http.ResponseWriter) func(event string, v any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	return func(event string, v any) {
		b, _ := json.Marshal(v)
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

func argsJSON(a map[string]any) string {
	if a == nil {
		a = map[string]any{}
	}
	b, _ := json.Marshal(a)
	return string(b)
}

func (m *model) responses(w http.ResponseWriter, r *http.Request, rep reply) {
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	send := sse(w)
	id := fmt.Sprintf("resp_%d", time.Now().UnixNano())
	send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	var items []map[string]any
	for _, c := range rep.Calls {
		if c.Input != "" {
			items = append(items, map[string]any{"type": "custom_tool_call", "id": "ctc_" + c.ID, "name": c.Name, "input": c.Input, "call_id": c.ID})
			continue
		}
		items = append(items, map[string]any{"type": "function_call", "id": "fc_" + c.ID, "name": c.Name, "arguments": argsJSON(c.Args), "call_id": c.ID})
	}
	if len(rep.Calls) == 0 {
		items = append(items, map[string]any{"type": "message", "role": "assistant", "id": "msg_" + id,
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text}}})
	}
	for k, it := range items {
		send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": k, "item": it})
		send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": k, "item": it})
	}
	send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
}

func (m *model) gemini(w http.ResponseWriter, r *http.Request, rep reply) {
	usage := map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
	if strings.Contains(r.URL.Path, ":countTokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"totalTokens": 10}`)
		return
	}
	var parts []any
	for _, c := range rep.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args, "id": c.ID}})
	}
	if len(rep.Calls) == 0 {
		text := rep.Text
		if !strings.Contains(r.URL.Path, ":streamGenerateContent") {
			// a check Gemini CLI asks for as JSON (next speaker, routing)
			text = `{"reasoning": "the answer is complete", "next_speaker": "user", "model_choice": "flash", "complexity_reasoning": "simple", "complexity_score": 10}`
		}
		parts = append(parts, map[string]any{"text": text})
	}
	resp := map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
		"finishReason": "STOP", "index": 0}}, "usageMetadata": usage, "modelVersion": "stand-in"}
	if !strings.Contains(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
		return
	}
	sse(w)("", resp)
}

func (m *model) chat(w http.ResponseWriter, r *http.Request, req map[string]any, rep reply) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","data":[{"id":"stand-in","object":"model","owned_by":"attune"}]}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	id := fmt.Sprintf("chatcmpl-%d", time.Now().UnixNano())
	created := time.Now().Unix()
	finish := "stop"
	var calls []any
	for k, c := range rep.Calls {
		calls = append(calls, map[string]any{"index": k, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": argsJSON(c.Args)}})
	}
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	if s, _ := req["stream"].(bool); !s {
		msg := map[string]any{"role": "assistant", "content": rep.Text}
		if len(calls) > 0 {
			msg["content"] = nil
			msg["tool_calls"] = calls
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req["model"],
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	send := sse(w)
	chunk := func(delta map[string]any, fin any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req["model"],
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}}
	}
	send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if len(calls) > 0 {
		send("", chunk(map[string]any{"tool_calls": calls}, nil))
	} else {
		send("", chunk(map[string]any{"content": rep.Text}, nil))
	}
	last := chunk(map[string]any{}, finish)
	last["usage"] = usage
	send("", last)
	fmt.Fprint(w, "data: [DONE]\n\n")
}
