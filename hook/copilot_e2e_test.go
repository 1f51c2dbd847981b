//go:build e2e

package hook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The events the real Copilot CLI sends, captured by a hook that keeps its
// input (ATTUNE_CAPTURE=1 rewrites testdata/captured/copilot-1.0.102).
func TestCopilotCapture(t *testing.T) {
	for _, pascal := range []bool{false, true} {
		copilotCapture(t, pascal)
	}
}

func copilotCapture(t *testing.T, pascal bool) {
	h := newHarness(t, "copilot", mainBot, nil)
	h.pascal = pascal
	dir := t.TempDir()
	h.captureHook(t, dir)
	out := filepath.Join(h.dir, "out.txt")
	m := newModel(t, wireChat, func(n int, body string) reply {
		switch n {
		case 0:
			return reply{Calls: []fcall{{ID: "call_echo", Name: "bash", Args: map[string]any{"command": "echo hello > " + out, "description": "write"}}}}
		case 1:
			return reply{Calls: []fcall{{ID: "call_view", Name: "view", Args: map[string]any{"path": filepath.Join(h.dir, "missing.txt")}}}}
		case 2:
			return reply{Calls: []fcall{{ID: "call_a", Name: "bash", Args: map[string]any{"command": "echo a", "description": "a"}}, {ID: "call_b", Name: "bash", Args: map[string]any{"command": "exit 3", "description": "b"}}}}
		}
		return reply{Text: "all done"}
	})
	h.copilot(t, m, "write it")
	evs := capturedDir(t, dir)
	names := eventNames(evs, "(event)")
	t.Logf("events: %v", names)
	fixtures := "copilot-1.0.102"
	if pascal {
		fixtures += "-pascal"
	}
	h.keepCaptures(t, fixtures, evs, func(ev map[string]any) string {
		n, _ := ev["(event)"].(string)
		for _, k := range []string{"toolArgs", "tool_input"} {
			if a, ok := ev[k].(map[string]any); ok {
				if d, ok := a["description"].(string); ok {
					n += "-" + d
				} else if _, ok := a["path"]; ok {
					n += "-view"
				}
			}
		}
		return n
	})
	want := copilotEvents
	if pascal {
		want = copilotPascal
	}
	for _, want := range want {
		if !slices.Contains(names, want) {
			t.Errorf("no %s captured: %v", want, names)
		}
	}
	if data, _ := os.ReadFile(out); strings.TrimSpace(string(data)) != "hello" {
		t.Errorf("out.txt %q", data)
	}
}
