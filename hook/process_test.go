package hook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/harness"
	"github.com/attune-dev/attune/internal/peertest"
	"github.com/attune-dev/attune/session"
)

// attuneBin is the attune binary the process tests exec, built once.
var attuneBin string

var attuneBuild peertest.Binary

func TestMain(m *testing.M) { attuneBuild.Main(m, &attuneBin) }

// runHook runs `attune hook claude --config cfg` on one event as a fresh
// process and returns its decoded answer.
func runHook(t *testing.T, cfg string, event any) map[string]any {
	t.Helper()
	return peertest.Hook(t, attuneBin, cfg, event)
}

const counterProg = `
define.reducer("calls", function(state, action)
  state.n = state.n + 1
  return state
end, {scope = {"project"}, init = {n = 0}})
define.method("calls", "bump", function(ctx, state, input)
  propose({type = "bump"})
  return state.n + 1
end, {kind = "command"})
-- two sessions may commit to the project owner at once: the loser gets
-- stale-revision and tries again on the new state
local function bump()
  for _ = 1, 50 do
    local ok, n = pcall(call.method, "calls", "bump", {})
    if ok then return n end
    if not string.find(tostring(n), "stale-revision", 1, true) then error(n) end
  end
  error("calls: too busy")
end
hook.tool("claude/*", {post = function(c, out)
  local n = bump()
  notify("counted " .. c.path)
  return "count " .. n
end})
`

// Parallel hook processes of two sessions (harness.Claude Code runs the hooks of
// parallel tool calls in parallel processes): every call is journaled once,
// note ids never repeat, and the project owner loses no update.
func TestParallelHookProcesses(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "packs", "p", "p.lua"), []byte(counterProg), 0o644)
	cfg := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfg, []byte("[engine]\npacks = [\"packs/p\"]\n"+mainBot), 0o644)
	const n = 6
	sessions := []string{"sa", "sb"}
	for _, s := range sessions {
		runHook(t, cfg, map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": s, "prompt": "go"})
	}
	var mu sync.Mutex
	counts := map[string]bool{}
	var wg sync.WaitGroup
	for _, s := range sessions {
		for k := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("%s-t%d", s, k)
				input := map[string]any{"command": "echo " + id}
				runHook(t, cfg, map[string]any{"hook_event_name": "PreToolUse", "session_id": s, "tool_name": "Bash", "tool_use_id": id, "tool_input": input})
				a := runHook(t, cfg, map[string]any{"hook_event_name": "PostToolUse", "session_id": s, "tool_name": "Bash", "tool_use_id": id, "tool_input": input, "tool_response": map[string]any{"stdout": id}})
				hs, _ := a["hookSpecificOutput"].(map[string]any)
				c, _ := hs["additionalContext"].(string)
				c, _, _ = strings.Cut(c, "\n\n") // the :post's count; its note follows, placed at once
				mu.Lock()
				if counts[c] {
					t.Errorf("two calls got %q", c)
				}
				counts[c] = true
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if len(counts) != 2*n {
		t.Fatalf("answers %v", counts)
	}
	for k := 1; k <= 2*n; k++ {
		if !counts[fmt.Sprintf("count %d", k)] {
			t.Errorf("no call got count %d: %v", k, counts)
		}
	}
	r, err := harness.Open(context.Background(), cfg, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	for _, s := range sessions {
		inst, err := r.Engine().Start(ctx, engine.StartOptions{ID: "claude/" + s})
		if err != nil {
			t.Fatal(err)
		}
		st, _, err := inst.State(ctx, "calls@project")
		if err != nil {
			t.Fatal(err)
		}
		if got := st.(map[string]any)["n"]; got != float64(2*n) {
			t.Errorf("project owner n = %v, want %d", got, 2*n)
		}
		entries, err := session.OpenJournal(r.Engine().Store(), inst.Session(), inst.ID()).Entries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		opened, closed, notes := map[string]int{}, map[string]int{}, map[string]int{}
		for _, en := range entries {
			switch en.Type {
			case "tool-open":
				opened[en.Key]++
			case session.Tool:
				closed[en.CallID]++
			case session.Emit:
				notes[en.Note.ID]++
			}
		}
		if len(opened) != n || len(closed) != n || len(notes) != n {
			t.Errorf("session %s: %d opened, %d closed, %d notes; want %d each", s, len(opened), len(closed), len(notes), n)
		}
		for _, m := range []map[string]int{opened, closed, notes} {
			var keys []string
			for k, c := range m {
				if c != 1 {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			if len(keys) > 0 {
				t.Errorf("session %s: journaled more than once: %v", s, keys)
			}
		}
		inst.Stop()
	}
}
