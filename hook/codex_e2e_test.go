//go:build e2e

package hook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The events the real Codex sends, captured by a hook that keeps its
// input: the shapes the codex dialect reads (ATTUNE_CAPTURE=1 rewrites
// testdata/captured/codex-0.169.0).
func TestCodexCapture(t *testing.T) {
	h := newHarness(t, "codex", mainBot, nil)
	dir := t.TempDir()
	h.captureHook(t, dir)
	out := filepath.Join(h.dir, "out.txt")
	m := newModel(t, wireResponses, func(n int, body string) reply {
		switch n {
		case 0:
			return reply{Calls: []fcall{{ID: "call_echo", Name: "exec_command", Args: map[string]any{"cmd": "echo hello > " + out}}}}
		case 1:
			return reply{Calls: []fcall{{ID: "call_patch", Name: "apply_patch", Input: "*** Begin Patch\n*** Add File: " + filepath.Join(h.dir, "new.txt") + "\n+patched\n*** End Patch\n"}}}
		case 2:
			return reply{Calls: []fcall{{ID: "call_a", Name: "exec_command", Args: map[string]any{"cmd": "echo a"}}, {ID: "call_b", Name: "exec_command", Args: map[string]any{"cmd": "false"}}}}
		}
		return reply{Text: "all done"}
	})
	h.codex(t, m, "write it")
	evs := capturedDir(t, dir)
	names := eventNames(evs, "hook_event_name")
	t.Logf("events: %v", names)
	for _, want := range codexEvents {
		if !slices.Contains(names, want) {
			t.Errorf("no %s captured: %v", want, names)
		}
	}
	h.keepCaptures(t, "codex-0.169.0", evs, func(ev map[string]any) string {
		n, _ := ev["hook_event_name"].(string)
		if id, ok := ev["tool_use_id"].(string); ok {
			n += "-" + strings.TrimPrefix(id, "call_")
		}
		return n
	})
	if data, _ := os.ReadFile(out); strings.TrimSpace(string(data)) != "hello" {
		t.Errorf("out.txt %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(h.dir, "new.txt")); strings.TrimSpace(string(data)) != "patched" {
		t.Errorf("new.txt %q", data)
	}
}
