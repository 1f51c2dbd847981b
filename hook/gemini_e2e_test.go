//go:build e2e

package hook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The events the real Gemini CLI sends, captured by a hook that keeps its
// input (ATTUNE_CAPTURE=1 rewrites testdata/captured/gemini-0.61.0).
func TestGeminiCapture(t *testing.T) {
	h := newHarness(t, "gemini", mainBot, nil)
	dir := t.TempDir()
	h.captureHook(t, dir)
	out := filepath.Join(h.dir, "out.txt")
	m := newModel(t, wireGemini, func(n int, body string) reply {
		switch n {
		case 0:
			return reply{Calls: []fcall{{ID: "call_echo", Name: "run_shell_command", Args: map[string]any{"command": "echo hello > " + out, "description": "write"}}}}
		case 1:
			return reply{Calls: []fcall{{ID: "call_view", Name: "read_file", Args: map[string]any{"file_path": filepath.Join(h.dir, "missing.txt")}}}}
		case 2:
			return reply{Calls: []fcall{{ID: "call_a", Name: "run_shell_command", Args: map[string]any{"command": "echo a", "description": "a"}}, {ID: "call_b", Name: "run_shell_command", Args: map[string]any{"command": "exit 3", "description": "b"}}}}
		}
		return reply{Text: "all done"}
	})
	h.gemini(t, m, "write it")
	evs := capturedDir(t, dir)
	names := eventNames(evs, "hook_event_name")
	t.Logf("events: %v\nstdout %s\nstderr %s\nother %d", names, h.lastOut, h.errOut, len(m.others()))
	for _, want := range []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s captured: %v", want, names)
		}
	}
	h.keepCaptures(t, "gemini-0.61.0", evs, func(ev map[string]any) string {
		n, _ := ev["hook_event_name"].(string)
		if a, ok := ev["tool_input"].(map[string]any); ok {
			if d, ok := a["description"].(string); ok {
				n += "-" + d
			} else {
				n += "-read"
			}
		}
		return n
	})
	if data, _ := os.ReadFile(out); strings.TrimSpace(string(data)) != "hello" {
		t.Errorf("out.txt %q", data)
	}
}

// Gemini CLI 0.61 replaces the arguments with the rewrite: an argument the
// guard dropped (dir_path) is gone, so the command runs in the project
// root; and a note's < and > reach the model as &lt; and &gt;.
func TestGeminiRewriteReplaces(t *testing.T) {
	h := newHarness(t, "gemini", mainBot, map[string]string{"p.lua": `
hook.turn("start", function(b) notify("attune note <b>bold</b>") end)
guard.tool("gemini/run_shell_command", function(call, invoke)
  return invoke({command = call.args.command})
end)`})
	os.MkdirAll(filepath.Join(h.dir, "sub"), 0o755)
	out := filepath.Join(h.dir, "where.txt")
	m := newModel(t, wireGemini, func(n int, body string) reply {
		if n == 0 {
			return reply{Calls: []fcall{{ID: "c1", Name: "run_shell_command", Args: map[string]any{"command": "pwd > " + out, "description": "where", "dir_path": "sub"}}}}
		}
		return reply{Text: "done"}
	})
	h.gemini(t, m, "where")
	data, err := os.ReadFile(out)
	if err != nil || strings.TrimSpace(string(data)) != h.dir {
		t.Fatalf("pwd = %q, %v (want %s: dir_path dropped)", data, err, h.dir)
	}
	if reqs := m.requests(); !strings.Contains(reqs[0], `attune note \u0026lt;b\u0026gt;bold\u0026lt;/b\u0026gt;`) && !strings.Contains(reqs[0], "attune note &lt;b&gt;bold&lt;/b&gt;") {
		t.Errorf("the note: %s", noteIn(reqs[0], "attune note"))
	}
}
