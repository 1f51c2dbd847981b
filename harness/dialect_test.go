package harness

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Every dialect's table holds together: its tool-call event is one of its
// events and a tool call, Strict answers it, a name it knows is read
// (Named) as its kind, and its built-in tools have paths of its own.
func TestDialectTables(t *testing.T) {
	for _, name := range []string{"claude", "codex", "copilot", "cursor", "gemini"} {
		d, ok := Dialects(name)
		if !ok || d.Name() != name {
			t.Fatalf("Dialects(%q) = %q, %v", name, d.Name(), ok)
		}
		if k, ok := d.kind(d.pre); !ok || k != ToolPre {
			t.Errorf("%s: its tool-call event %q is %v (known %v)", name, d.pre, k, ok)
		}
		if ev := Strict(d); ev.Kind != ToolPre || ev.Name != d.pre {
			t.Errorf("%s: Strict = %+v", name, ev)
		}
		for _, m := range d.kinds {
			for ev := range m {
				want, _ := d.kind(ev) // the first table that names it
				if got := Named(d, []byte(`{"hook_event_name":"`+ev+`","tool_input":{`)); got.Kind != want || got.Name != ev {
					t.Errorf("%s: Named(%s) = %+v, want kind %v", name, ev, got, want)
				}
			}
		}
		if got := Named(d, []byte(`{"hook_event_name":"NoSuchEvent","tool_input":{`)); got.Kind != ToolPre || got.Name != d.pre {
			t.Errorf("%s: an unknown name in broken input is %+v, want Strict", name, got)
		}
		for eff, tools := range d.effects {
			for _, tool := range tools {
				if p := d.ToolPath(tool); !strings.HasPrefix(p, name+"/") {
					t.Errorf("%s: tool %s has path %s", name, tool, p)
				}
				if got := d.Effects(tool); len(got) != 1 || got[0] != eff {
					t.Errorf("%s: Effects(%s) = %v, want %s (a tool of two effects?)", name, tool, got, eff)
				}
			}
		}
	}
}

// The one answer path fails closed however the answer goes wrong: a crash
// or no answer within the event's time is a denied tool call, and input
// that is not an event is answered as what its start names.
func TestResponderFailsClosed(t *testing.T) {
	const pre = `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"ls"}}`
	var log strings.Builder
	r := Responder{Dialect: Claude(), Log: &log, Who: "attune hook claude", Timeout: 50 * time.Millisecond}
	denied := func(out []byte) bool { return strings.Contains(string(out), `"permissionDecision":"deny"`) }

	r.Answer = func(context.Context, Event) Answer { panic("boom") }
	if out := r.Respond(context.Background(), []byte(pre), nil); !denied(out) || !strings.Contains(log.String(), "internal error: boom") {
		t.Errorf("a crash: %s (log %q)", out, log.String())
	}
	r.Answer = func(ctx context.Context, ev Event) Answer {
		<-ctx.Done()
		time.Sleep(10 * time.Millisecond)
		return Answer{Decision: "allow"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.Timeout)
	defer cancel()
	if out := r.Respond(ctx, []byte(pre), nil); !denied(out) || !strings.Contains(log.String(), "no answer within 50ms") {
		t.Errorf("no answer in time: %s (log %q)", out, log.String())
	}
	r.Answer = func(context.Context, Event) Answer {
		t.Error("an event that did not arrive whole was answered")
		return Answer{}
	}
	if out := r.Respond(context.Background(), []byte(pre[:60]), errors.New("cut short")); !denied(out) {
		t.Errorf("a tool call cut short: %s", out)
	}
	if out := r.Respond(context.Background(), []byte(`{"hook_event_name":"Stop","session_id":"s"`), nil); denied(out) || string(out) != `{}` {
		t.Errorf("a broken Stop: %s, want no decision", out)
	}
	r.Answer = func(context.Context, Event) Answer { return Answer{Decision: "ask", Reason: "sure?"} }
	if out := r.Respond(context.Background(), []byte(pre), nil); !strings.Contains(string(out), `"permissionDecision":"ask"`) {
		t.Errorf("an answer: %s", out)
	}
}
