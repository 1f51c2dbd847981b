//go:build unix

package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
)

// BenchmarkHookHandOff: a fresh `attune hook claude` process per event,
// each way in turn within every iteration so that the machine's load
// falls on all alike: the quick answer (nothing matches the tool, the
// goal's yardstick); a PreToolUse and a PostToolUse with one Lua guard and
// hook on the tool handed off to a warm server (`hook serve --socket`, here
// in the benchmark's process); and the same PreToolUse answered in-process
// (no server: what the hand-off saves). It reports each way's median in
// µs and its ratio to the quick answer's. ATTUNE_HOOK_BASELINE names
// another build of attune whose quick answer and in-process PreToolUse run
// in the same rounds (base-quick, base-inprocess-pre), for a before and
// after from one run.
//
//	go test ./hook -run XXX -bench HookHandOff -benchtime 100x
func BenchmarkHookHandOff(b *testing.B) {
	run, err := os.MkdirTemp("", "aw")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(run) })
	b.Setenv("XDG_RUNTIME_DIR", run)
	quick := benchProject(b, "", nil)
	guard := map[string]string{"g.lua": `
guard.tool("claude/Bash", function(call, invoke)
  if string.find(call.args.command, "rm -rf", 1, true) then return refuse("no") end
  return invoke()
end)
hook.tool("claude/Bash", {post = function(call, out) return nil end})
`}
	warmCfg, cold := benchProject(b, `"g"`, guard), benchProject(b, `"g"`, guard)
	cfg, err := loadConfig(warmCfg)
	if err != nil {
		b.Fatal(err)
	}
	startWarmServer(b, warmCfg, cfg)
	post := func(k int) []byte {
		return []byte(fmt.Sprintf(`{"hook_event_name":"PostToolUse","session_id":"bench","cwd":"/w","tool_name":"Bash","tool_use_id":"toolu_%d","tool_input":{"command":"go test ./...","description":"test"},"tool_response":{"stdout":"ok","stderr":"","interrupted":false}}`, k))
	}
	prompt := []byte(`{"hook_event_name":"UserPromptSubmit","session_id":"bench","prompt":"go"}`)
	type way struct {
		name  string
		bin   string
		cfg   string
		event func(k int) []byte
	}
	ways := []way{
		{"quick", attuneBin, quick, preEvent},
		{"handoff-pre", attuneBin, warmCfg, preEvent},
		{"handoff-post", attuneBin, warmCfg, post},
		{"inprocess-pre", attuneBin, cold, preEvent},
	}
	if base := os.Getenv("ATTUNE_HOOK_BASELINE"); base != "" { // another build, its own projects
		ways = append(ways, way{"base-quick", base, benchProject(b, "", nil), preEvent},
			way{"base-inprocess-pre", base, benchProject(b, `"g"`, guard), preEvent})
	}
	for _, w := range ways {
		execHook(b, []string{w.bin, "hook", "claude", "--config", w.cfg}, prompt)
	}
	times := make([][]time.Duration, len(ways))
	b.ResetTimer()
	for k := range b.N {
		for j := range ways {
			w := ways[(k+j)%len(ways)]
			ev := w.event(k)
			if w.name == "handoff-post" {
				ev = post(k) // its PreToolUse ran in handoff-pre this iteration or the last
			}
			start := time.Now()
			execHook(b, []string{w.bin, "hook", "claude", "--config", w.cfg}, ev)
			times[(k+j)%len(ways)] = append(times[(k+j)%len(ways)], time.Since(start))
		}
	}
	b.StopTimer()
	med := make([]float64, len(ways))
	for k, w := range ways {
		slices.Sort(times[k])
		med[k] = float64(times[k][len(times[k])/2])
		b.ReportMetric(med[k]/1e3, w.name+"-µs")
		if k > 0 {
			b.ReportMetric(med[k]/med[0], w.name+"/quick")
		}
	}
	for k, w := range ways {
		if w.name == "base-inprocess-pre" {
			b.ReportMetric(med[k]/med[k-1], w.name+"/base-quick")
		}
	}
	b.ReportMetric(0, "ns/op")
}

// benchProject writes a config whose bot runs the given programs (none:
// no guard or hook matches the event) on the SQLite store.
func benchProject(b *testing.B, behaviors string, programs map[string]string) string {
	b.Helper()
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	for name, src := range programs {
		os.WriteFile(filepath.Join(dir, "packs", "p", name), []byte(src), 0o644)
	}
	cfg := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfg, []byte("[engine]\npacks = [\"packs/p\"]\n[bots.main]\nbehaviors = ["+behaviors+"]\nceiling = [\"read\", \"write\", \"exec\"]\n"), 0o644)
	return cfg
}

func preEvent(k int) []byte {
	return []byte(fmt.Sprintf(`{"hook_event_name":"PreToolUse","session_id":"bench","cwd":"/w","tool_name":"Bash","tool_use_id":"toolu_%d","tool_input":{"command":"go test ./...","description":"test"}}`, k))
}

func execHook(b *testing.B, args []string, event []byte) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = bytes.NewReader(event)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil || out.Len() == 0 {
		b.Fatalf("%v: %v (%q)", args, err, out.String())
	}
}

// loadConfig is config.Load, for the benchmark.
func loadConfig(path string) (*config.Config, error) { return config.Load(filepath.Clean(path)) }
