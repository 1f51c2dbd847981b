package harness

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzDialects are the dialects FuzzHookEvent runs, by its first argument.
var fuzzDialects = []Dialect{Claude(), Codex(), Gemini(), Cursor()}

// FuzzHookEvent gives whole hook events, in each dialect, to the path a
// hook process takes (Read, then BadEvent or Handle) with a behavior that
// marks every tool call with an ask mark, so that every tool call the
// runtime judges is answered "ask" (Gemini: deny). It asserts that input
// which is not a well-formed event of another kind (valid UTF-8 JSON whose
// hook_event_name, as encoding/json reads it, names an event the dialect
// does not handle as a tool call) always gets a decision: deny, ask or
// allow, never no decision.
func FuzzHookEvent(f *testing.F) {
	dir := f.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "packs", "p", "p.lua"), []byte(`guard.tool("**", function(call, invoke)
  mark(call, "seen")
  return invoke()
end)`), 0o644)
	var harness strings.Builder
	for _, d := range fuzzDialects {
		harness.WriteString("[harness." + d.Name() + "]\nask_marks = [\"seen\"]\n")
	}
	path := filepath.Join(dir, "attune.toml")
	os.WriteFile(path, []byte("[engine]\nstore = \"memory:\"\npacks = [\"packs/p\"]\n[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\", \"write\", \"exec\", \"network\", \"spawn\"]\n"+harness.String()), 0o644)
	r, err := Open(context.Background(), path, Options{Stderr: io.Discard})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })

	for k, name := range []string{"claude", "codex", "gemini", "cursor"} {
		pre := preEvents[name]
		f.Add(uint8(k), []byte(pre+`{"command":"ls"}}`))
		for _, in := range malformed(pre) {
			if len(in) < 4096 {
				f.Add(uint8(k), []byte(in))
			}
		}
		f.Add(uint8(k), []byte(pre + `{"command":"ls"}}`)[:len(pre)/2])
	}
	f.Add(uint8(0), []byte(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"p"}`))
	f.Add(uint8(3), []byte(`{"hook_event_name":"beforeShellExecution","conversation_id":"s","command":"rm -rf /"}`))
	f.Add(uint8(2), []byte(`{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"x","tool_input":[1]}`))
	f.Add(uint8(0), []byte("not json"))

	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		d := fuzzDialects[int(which)%len(fuzzDialects)]
		ev, err := Read(d, data)
		var a Answer
		if err != nil {
			a = BadEvent(ev, err)
		} else if ev.Kind == ToolPre {
			a = r.Handle(t.Context(), d, ev)
		}
		if !otherEvent(d, data) && a.Decision != "deny" && a.Decision != "ask" && a.Decision != "allow" {
			t.Fatalf("%s: %q got no decision (read as %q, kind %d, %v): %s", d.Name(), data, ev.Name, ev.Kind, err, d.Render(ev, a))
		}
		if ev.Kind == ToolPre {
			out := d.Render(ev, a)
			var m map[string]any
			if json.Unmarshal(out, &m) != nil || len(m) == 0 {
				t.Fatalf("%s: %q: the answer to a tool call is %s", d.Name(), data, out)
			}
		}
	})
}

// otherEvent: data is well-formed (valid UTF-8, one JSON object) and names,
// as encoding/json reads it, an event d does not take for a tool call.
func otherEvent(d Dialect, data []byte) bool {
	if !utf8.Valid(data) || len(data) > MaxEvent {
		return false
	}
	var in struct {
		Event *string `json:"hook_event_name"`
	}
	if json.Unmarshal(data, &in) != nil || in.Event == nil {
		return false
	}
	probe, _ := json.Marshal(map[string]string{"hook_event_name": *in.Event, "session_id": "-", "conversation_id": "-"})
	ev, _ := d.Parse(probe)
	return ev.Kind != ToolPre
}
