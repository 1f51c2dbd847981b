package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// preEvents are a tool call about to run in each dialect, as the agent
// writes it (the name first), with tool_input left open for the caller.
var preEvents = map[string]string{
	"claude": `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"t","tool_input":`,
	"codex":  `{"hook_event_name":"PreToolUse","session_id":"s","turn_id":"u","tool_name":"Bash","tool_use_id":"t","tool_input":`,
	"gemini": `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command","tool_input":`,
	"cursor": `{"hook_event_name":"preToolUse","conversation_id":"s","generation_id":"g","tool_name":"Shell","tool_input":`,
}

// denied reports whether a dialect's rendered answer to a tool call is a
// deny, and its reason.
func denied(t *testing.T, d Dialect, out []byte) (bool, string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s: the answer is not JSON: %q", d.Name(), out)
	}
	switch d.Name() {
	case "cursor":
		r, _ := m["agent_message"].(string)
		return m["permission"] == "deny", r
	case "gemini":
		r, _ := m["reason"].(string)
		return m["decision"] == "deny", r
	}
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	r, _ := hs["permissionDecisionReason"].(string)
	return hs["permissionDecision"] == "deny", r
}

// malformed are the ways a tool call's JSON can be broken: each must be
// denied in every dialect, with a reason.
func malformed(pre string) map[string]string {
	deep := strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat(`}`, 10001)
	deepList := strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001)
	return map[string]string{
		"10,001 levels":      pre + `{"command":"rm -rf /","x":` + deep + `}}`,
		"10,001 list levels": pre + `{"command":"rm -rf /","x":` + deepList + `}}`,
		"byte order mark":    "\xef\xbb\xbf" + pre + `{"command":"rm -rf /"}}`,
		"truncated":          pre + `{"command":"rm -rf /"`,
		"trailing junk":      pre + `{"command":"rm -rf /"}} {"hook_event_name":"Notification"}`,
		"invalid UTF-8":      pre + `{"command":"rm -rf /\xff"}}`,
		"not JSON after it":  pre + `{"command":rm -rf /}}`,
	}
}

// Every PreToolUse-class event attune cannot read is denied with a reason,
// in every dialect, whatever breaks it: depth past Go's decoder, a byte
// order mark, truncation, trailing junk, invalid UTF-8.
func TestMalformedToolPreDenies(t *testing.T) {
	for name, pre := range preEvents {
		d, _ := Dialects(name)
		for what, in := range malformed(pre) {
			ev, err := Read(d, []byte(in))
			if err == nil {
				t.Errorf("%s, %s: read without an error", name, what)
				continue
			}
			if ev.Kind != ToolPre {
				t.Errorf("%s, %s: read as %q (kind %d), want the tool call", name, what, ev.Name, ev.Kind)
			}
			if ok, reason := denied(t, d, d.Render(ev, BadEvent(ev, err))); !ok || reason == "" {
				t.Errorf("%s, %s: not denied with a reason: %s", name, what, d.Render(ev, BadEvent(ev, err)))
			}
		}
	}
}

// Input that names no event attune can find (not JSON, no
// hook_event_name, the name after a broken value) gets the strictest answer
// a tool call can get: a deny of the dialect's PreToolUse. An event of
// another kind that is broken after its name gets no decision.
func TestNamelessInputDenies(t *testing.T) {
	for name := range preEvents {
		d, _ := Dialects(name)
		for _, in := range []string{"not json", "", "{", `{"session_id":"s"}`, `{"tool_input":` + strings.Repeat("[", 20000) + `, "hook_event_name":"PreToolUse"}`, "\xff\xfe{}"} {
			ev, err := Read(d, []byte(in))
			if err == nil {
				t.Errorf("%s, %q: read without an error", name, in)
				continue
			}
			if ok, _ := denied(t, d, d.Render(ev, BadEvent(ev, err))); !ok {
				t.Errorf("%s, %.40q: not denied: %s", name, in, d.Render(ev, BadEvent(ev, err)))
			}
		}
	}
	ev, err := Read(Claude(), []byte(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"`+"\xff"+`"}`))
	if err == nil || ev.Kind != Prompt || BadEvent(ev, err).Decision != "" {
		t.Errorf("a broken prompt event: %+v %v", ev, err)
	}
	// a broken event of a name the dialect does not know: nothing says it
	// is not a tool call
	ev, err = Read(Claude(), []byte(`{"hook_event_name":"Bogus","x":`))
	if err == nil || ev.Kind != ToolPre {
		t.Errorf("a broken unknown event: %+v %v", ev, err)
	}
	ev, err = Read(Claude(), []byte(`{"hook_event_name":"Notification","x":`))
	if err == nil || ev.Kind != Other || ev.Name != "Notification" {
		t.Errorf("a broken Notification: %+v %v", ev, err)
	}
}

// The event's name is found past values of any depth and in input cut
// short after it; never in a nested object.
func TestEventName(t *testing.T) {
	for in, want := range map[string]string{
		`{"hook_event_name":"A"}`:                                                                    "A",
		` {"x":1,"y":true,"z":null,"hook_event_name":"B","q":`:                                       "B",
		`{"x":"a\"}","hook_event_name" : "C\u0041"}`:                                                 "CA",
		`{"x":` + strings.Repeat("[", 50000) + strings.Repeat("]", 50000) + `,"hook_event_name":"D"`: "D",
	} {
		if got, ok := eventName([]byte(in)); !ok || got != want {
			t.Errorf("%.60q: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`{"x":{"hook_event_name":"A"}}`, `["hook_event_name","A"]`, `{"x":[}`, `{"hook_event_name":1}`} {
		if got, ok := eventName([]byte(in)); ok {
			t.Errorf("%q: found %q", in, got)
		}
	}
}

// A runtime error (here: the store cannot be opened) denies a tool call
// even with fail_open, which is about script errors only.
func TestRuntimeErrorDeniesDespiteFailOpen(t *testing.T) {
	r, _ := setup(t, mainBot+"[harness.claude]\nfail_open = true\n", map[string]string{"p.lua": `guard.tool("**", function(c, invoke) return invoke() end)`})
	ev, err := Claude().Parse([]byte(preBash))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the session's lock cannot be waited for: a runtime error
	unlock, err := lockSession(t.Context(), r.dir, "claude/s")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	a := r.Handle(ctx, Claude(), ev)
	if a.Decision != "deny" || !strings.Contains(a.Reason, "busy") {
		t.Errorf("a runtime error with fail_open: %+v", a)
	}
}

// --timeout covers reading stdin: a PreToolUse whose input never ends is
// denied at the timeout, not waited for.
func TestStdinTimeoutDenies(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(attuneBin, "hook", "claude", "--timeout", "300ms")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, preEvents["claude"]+`{"command":"rm -rf /"`) // and never more, never closed
	err = cmd.Wait()
	w.Close()
	if err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("answered after %s", time.Since(start))
	}
	if ok, reason := denied(t, Claude(), out.Bytes()); !ok || !strings.Contains(reason, "--timeout") {
		t.Errorf("a never-ending stdin: %s %s", out.String(), errOut.String())
	}
	// nothing at all within the timeout: the strictest answer
	cmd = exec.Command(attuneBin, "hook", "gemini", "--timeout", "200ms")
	cmd.Dir = dir
	w, _ = cmd.StdinPipe()
	out.Reset()
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if ok, _ := denied(t, Gemini(), out.Bytes()); !ok {
		t.Errorf("no input within the timeout: %s", out.String())
	}
}

// Malformed tool calls through the process: denied, exit 0, JSON out.
func TestMalformedToolPreProcess(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "attune.toml"), []byte("[bots.main]\nceiling = [\"exec\"]\n"), 0o644)
	for what, in := range malformed(preEvents["claude"]) {
		code, m, stderr := hookRaw(t, dir, in)
		if d, r := decision(m); code != 0 || d != "deny" || r == "" {
			t.Errorf("%s: %d %v %q", what, code, m, stderr)
		}
	}
}
