//go:build e2e && linux

package hook

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The fsyncs of one hook event on the SQLite store, as docs/storage.md
// states them, counted by strace over the whole `attune hook claude`
// process (R5.10: each durable write is one fdatasync of the WAL; opening
// and closing the store sync nothing): a guarded PreToolUse, and its
// PostToolUse, 1 each; a prompt (the turn and its first round begin) and
// a stop (the round and the turn end) 2 each. The store's own test
// (store.TestSQLiteOpenSyncs) counts SQLite's syncs in-process.
func TestHookEventSyncs(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Fatal("strace is needed to count a hook process's fsyncs (apt-get install strace; .ci/run installs it)")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "packs", "p", "g.lua"), []byte(`
guard.tool("claude/Bash", function(call, invoke)
  if string.find(call.args.command, "rm -rf", 1, true) then return refuse("no") end
  return invoke()
end)`), 0o644)
	cfg := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfg, []byte(`[engine]
packs = ["packs/p"]
[bots.main]
behaviors = ["g"]
ceiling = ["read", "write", "exec"]
`), 0o644)
	prompt := `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`
	pre := func(id string) string {
		return `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/w","tool_name":"Bash","tool_use_id":"` + id + `","tool_input":{"command":"go test ./..."}}`
	}
	post := func(id string) string {
		return `{"hook_event_name":"PostToolUse","session_id":"s","cwd":"/w","tool_name":"Bash","tool_use_id":"` + id + `","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok"}}`
	}
	stop := `{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"done"}`
	syncs := func(event string) int {
		t.Helper()
		trace := filepath.Join(t.TempDir(), "trace")
		cmd := exec.Command(strace, "-f", "-qq", "-o", trace, "-e", "trace=fsync,fdatasync,sync_file_range,syncfs,sync",
			attuneBin, "hook", "claude", "--config", cfg)
		cmd.Stdin = strings.NewReader(event)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil || !bytes.HasPrefix(out.Bytes(), []byte("{")) {
			t.Fatalf("attune hook under strace: %v (%s) %s", err, out.String(), errOut.String())
		}
		data, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "sync") && strings.Contains(line, "(") {
				n++
			}
		}
		return n
	}
	// the first events make the store and the session: not counted
	syncs(prompt)
	syncs(pre("toolu_0"))
	syncs(post("toolu_0"))
	syncs(stop)
	for k, id := range []string{"toolu_1", "toolu_2"} {
		for _, step := range []struct {
			name, event string
			want        int
		}{
			{"UserPromptSubmit", prompt, 2},
			{"PreToolUse", pre(id), 1},
			{"PostToolUse", post(id), 1},
			{"Stop", stop, 2},
		} {
			if got := syncs(step.event); got != step.want {
				t.Errorf("turn %d, %s: %d fsyncs, want %d", k+1, step.name, got, step.want)
			}
		}
	}
}
