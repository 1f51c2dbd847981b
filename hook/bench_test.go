package hook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/harness"
)

// Benchmarks of one hook event, end to end as the agent pays for it: a
// fresh process (exec, event on stdin, answer on stdout) or a POST to
// `attune hook serve`. The baselines are trivial python3 and node hooks
// reading the same event, measured in the same run:
//
//	go test ./hook -run XXX -bench Hook -benchtime 50x -count 5

// benchProject writes a config whose bot runs the given programs (none:
// no guard or hook matches the event) on the SQLite store.
func benchProject(b testing.TB, behaviors string, programs map[string]string) string {
	b.Helper()
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	for name, src := range programs {
		os.WriteFile(filepath.Join(dir, "packs", "p", name), []byte(src), 0o644)
	}
	cfg := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfg, []byte(`[engine]
packs = ["packs/p"]
[bots.main]
behaviors = [`+behaviors+`]
ceiling = ["read", "write", "exec"]
`), 0o644)
	return cfg
}

func preEvent(k int) []byte {
	return []byte(fmt.Sprintf(`{"hook_event_name":"PreToolUse","session_id":"bench","cwd":"/w","tool_name":"Bash","tool_use_id":"toolu_%d","tool_input":{"command":"go test ./...","description":"test"}}`, k))
}

func execHook(b *testing.B, args []string, event []byte) {
	execHookCPU(b, args, event)
}

// execHookCPU runs one hook process and returns the CPU time it used
// (user and system, as the kernel accounts it to the child).
func execHookCPU(b *testing.B, args []string, event []byte) time.Duration {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = bytes.NewReader(event)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil || out.Len() == 0 {
		b.Fatalf("%v: %v (%q)", args, err, out.String())
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func benchProcess(b *testing.B, cfg string, full bool) {
	args := []string{attuneBin, "hook", "claude", "--config", cfg}
	execHook(b, args, []byte(`{"hook_event_name":"UserPromptSubmit","session_id":"bench","prompt":"go"}`))
	reaches := filepath.Join(filepath.Dir(cfg), ".attune", "state.db.locks", "*.reach")
	b.ResetTimer()
	var cpu time.Duration
	for k := range b.N {
		if full {
			b.StopTimer()
			names, _ := filepath.Glob(reaches)
			if len(names) == 0 {
				b.Fatalf("no reach in %s", reaches)
			}
			for _, n := range names {
				os.Remove(n)
			}
			b.StartTimer()
		}
		cpu += execHookCPU(b, args, preEvent(k))
	}
	// the CPU time of the hook process: on a busy machine a steadier
	// measure than the wall clock, which waits for the disk and the other
	// processes too
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkHookProcessNoMatch: a fresh attune process per event, no
// guard or hook matches the tool (the quick answer), against the floor of
// any hook written in Go: a minimal Go binary that reads the event from
// stdin and prints {} ("minimal-go", built here with the same go build),
// in the same run; the goal is attune within 1.5x of it:
//
//	go test ./hook -run XXX -bench HookProcessNoMatch$ -benchtime 50x -count 5
func BenchmarkHookProcessNoMatch(b *testing.B) {
	cfg := benchProject(b, "", nil)
	minimal := minimalGo(b)
	b.Run("attune", func(b *testing.B) { benchProcess(b, cfg, false) })
	b.Run("minimal-go", func(b *testing.B) {
		for k := range b.N {
			execHook(b, []string{minimal}, preEvent(k))
		}
	})
}

// minimalGo builds the Go program a minimal hook is: read stdin, print {}.
func minimalGo(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module minimal\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(`package main

import (
	"io"
	"os"
)

func main() {
	io.ReadAll(os.Stdin)
	os.Stdout.WriteString("{}\n")
}
`), 0o644)
	bin := filepath.Join(dir, "minimal")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building the minimal Go hook: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkHookProcessNoMatchFull: the same, each event on the full path
// (store, lock, journal): the session's reach is removed before each event.
// What the quick answer (quick.go) saves.
func BenchmarkHookProcessNoMatchFull(b *testing.B) {
	benchProcess(b, benchProject(b, "", nil), true)
}

// BenchmarkHookProcessLuaGuard: a fresh attune process per event, one Lua
// guard on the tool, the SQLite store ("guard"), against the quick answer
// of a project where nothing matches ("quick") in the same run; the goal
// is the guarded event within 1.6x of the quick answer:
//
//	go test ./hook -run XXX -bench HookProcessLuaGuard -benchtime 50x -count 5
func BenchmarkHookProcessLuaGuard(b *testing.B) {
	guarded := benchProject(b, `"g"`, map[string]string{"g.lua": `
guard.tool("claude/Bash", function(call, invoke)
  if string.find(call.args.command, "rm -rf", 1, true) then return refuse("no") end
  return invoke()
end)`})
	quick := benchProject(b, "", nil)
	b.Run("guard", func(b *testing.B) { benchProcess(b, guarded, false) })
	b.Run("quick", func(b *testing.B) { benchProcess(b, quick, false) })
}

// BenchmarkHookProcessScheme: a fresh attune process per event, the five
// .scm programs of the engine's own pack selected, each event on the full
// path (the session's reach removed before it), so every process loads
// the five programs: "cached" reads their compiled protos from the program
// cache (made by the first event), "uncached" lowers and compiles them
// (ATTUNE_NO_PROGRAM_CACHE=1). Against BenchmarkHookProcessLuaGuard of the
// same run:
//
//	go test ./hook -run XXX -bench 'HookProcess(Scheme|LuaGuard)' -benchtime 30x -count 5
func BenchmarkHookProcessScheme(b *testing.B) {
	for _, cached := range []bool{true, false} {
		name := "cached"
		if !cached {
			name = "uncached"
		}
		b.Run(name, func(b *testing.B) {
			b.Setenv("XDG_CACHE_HOME", b.TempDir()) // the cache's key
			if !cached {
				b.Setenv(engine.NoProgramCacheEnv, "1")
			}
			benchProcess(b, benchProject(b, `"branch", "fusion", "tasks", "goal", "offload"`, nil), true)
		})
	}
}

// BenchmarkHookServe: the same event and guard through `attune hook serve`
// (pre); a PostToolUse after 10 and after 10,000 calls in the open turn
// (post/calls=N, its median as post-p50-ns, and the CPU the server spent
// on each PreToolUse + PostToolUse pair as serve-cpu-ns/pair where the
// platform tells it), which a warm instance answers at the same cost; and
// the floor of the transport, a trivial HTTP server reading the same event
// and answering {} (echo). The floor of the durable write every
// PostToolUse makes before its answer (one fdatasync of the WAL,
// docs/storage.md) is store's BenchmarkFdatasync, run in the same command:
//
//	go test ./hook ./store -run XXX -bench 'HookServe$|Fdatasync' -benchtime 300x -count 3
func BenchmarkHookServe(b *testing.B) {
	b.Run("pre", func(b *testing.B) {
		cfg := benchProject(b, `"g"`, map[string]string{"g.lua": luaGuard})
		post := servePoster(b, "http://"+startServe(b, cfg)+HTTPPath, serveToken(b, cfg))
		post([]byte(`{"hook_event_name":"UserPromptSubmit","session_id":"bench","prompt":"go"}`))
		b.ResetTimer()
		for k := range b.N {
			post(preEvent(k))
		}
	})
	for _, calls := range []int{10, 10000} {
		b.Run(fmt.Sprintf("post/calls=%d", calls), func(b *testing.B) {
			cfg := benchProject(b, `"g"`, map[string]string{"g.lua": luaGuard})
			openTurn(b, cfg, calls)
			addr, pid := startServeProc(b, cfg)
			post := servePoster(b, "http://"+addr+HTTPPath, serveToken(b, cfg))
			post(preEventID("warm")) // the instance brought back once
			post(postEventID("warm"))
			lat := make([]time.Duration, 0, b.N)
			cpu0, cpuOK := processCPU(pid)
			b.ResetTimer()
			for k := range b.N {
				b.StopTimer()
				post(preEvent(k))
				b.StartTimer()
				t0 := time.Now()
				post(postToolEvent(k))
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportP50(b, "post-p50-ns", lat)
			if cpu1, ok := processCPU(pid); ok && cpuOK {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "serve-cpu-ns/pair")
			}
		})
	}
	b.Run("echo", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		}))
		defer srv.Close()
		post := servePoster(b, srv.URL+HTTPPath, "")
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for k := range b.N {
			t0 := time.Now()
			post(postToolEvent(k))
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		reportP50(b, "post-p50-ns", lat)
	})
}

const luaGuard = `
guard.tool("claude/Bash", function(call, invoke)
  if string.find(call.args.command, "rm -rf", 1, true) then return refuse("no") end
  return invoke()
end)`

// servePoster posts events to url, failing on anything but a 200 answer.
func servePoster(b *testing.B, url, tok string) func([]byte) {
	return func(event []byte) {
		resp, err := postWith(url, tok, "application/json", event)
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		out.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || out.Len() == 0 {
			b.Fatalf("%d %q", resp.StatusCode, out.String())
		}
	}
}

// reportP50 reports the median of lat as metric.
func reportP50(b *testing.B, metric string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), metric)
}

// BenchmarkHookPython3: the baseline, a trivial python3 hook.
func BenchmarkHookPython3(b *testing.B) {
	args := []string{"python3", "-c", `import json, sys; e = json.load(sys.stdin); print("{}")`}
	for k := range b.N {
		execHook(b, args, preEvent(k))
	}
}

// BenchmarkHookNode: the baseline, a trivial node hook.
func BenchmarkHookNode(b *testing.B) {
	args := []string{"node", "-e", `let s = ""; process.stdin.on("data", d => s += d).on("end", () => { JSON.parse(s); console.log("{}") })`}
	for k := range b.N {
		execHook(b, args, preEvent(k))
	}
}

// BenchmarkHookProcessSession: a fresh process per event (a Lua guard on
// the tool, so the full path) in a session that ran 1 or 300 turns before
// (a prompt, one tool call, a stop each). The instance is brought back from
// the last turn-end snapshot, so the long session costs what the short one
// does:
//
//	go test ./hook -run XXX -bench HookProcessSession -benchtime 20x -count 3
func BenchmarkHookProcessSession(b *testing.B) {
	for _, turns := range []int{1, 300} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			cfg := benchProject(b, `"g"`, map[string]string{"g.lua": `
guard.tool("claude/Bash", function(call, invoke)
  if string.find(call.args.command, "rm -rf", 1, true) then return refuse("no") end
  return invoke()
end)`})
			r, err := harness.Open(context.Background(), cfg, harness.Options{})
			if err != nil {
				b.Fatal(err)
			}
			for k := range turns {
				for _, ev := range []string{
					`{"hook_event_name":"UserPromptSubmit","session_id":"bench","prompt":"go"}`,
					fmt.Sprintf(`{"hook_event_name":"PreToolUse","session_id":"bench","tool_name":"Bash","tool_use_id":"old_%d","tool_input":{"command":"ls"}}`, k),
					fmt.Sprintf(`{"hook_event_name":"PostToolUse","session_id":"bench","tool_name":"Bash","tool_use_id":"old_%d","tool_input":{"command":"ls"},"tool_response":{"stdout":"x"}}`, k),
					`{"hook_event_name":"Stop","session_id":"bench","last_assistant_message":"done"}`,
				} {
					e, err := harness.Claude().Parse([]byte(ev))
					if err != nil {
						b.Fatal(err)
					}
					if a := r.Handle(context.Background(), harness.Claude(), e); a.Decision != "" {
						b.Fatalf("%s: %+v", ev, a)
					}
				}
			}
			r.Close()
			benchProcess(b, cfg, false)
		})
	}
}

// BenchmarkHookDialect: a fresh attune process per PreToolUse event of
// each dialect (the events the real CLIs sent, testdata/captured; Cursor's
// its published format), one Lua guard on the agent's shell tool, the
// SQLite store: every dialect costs what Claude's does, measured in the
// same run:
//
//	go test ./hook -run XXX -bench HookDialect -benchtime 30x -count 3
func BenchmarkHookDialect(b *testing.B) {
	shell := func(k int) map[string]any { return map[string]any{"command": fmt.Sprintf("go test ./... # %d", k)} }
	dialects := []struct {
		name, path string
		prompt     func() []byte
		pre        func(k int) []byte
	}{
		{"claude", "claude/Bash",
			func() []byte {
				return []byte(`{"hook_event_name":"UserPromptSubmit","session_id":"bench","prompt":"go"}`)
			}, preEvent},
		{"codex", "codex/Bash",
			func() []byte { return []byte(captured(b, "codex-0.169.0/UserPromptSubmit.json", nil)) },
			func(k int) []byte {
				return []byte(captured(b, "codex-0.169.0/PreToolUse-echo.json", map[string]any{"tool_use_id": fmt.Sprintf("call_%d", k), "tool_input": shell(k)}))
			}},
		{"gemini", "gemini/run_shell_command",
			func() []byte { return []byte(captured(b, "gemini-0.61.0/BeforeAgent.json", nil)) },
			func(k int) []byte {
				return []byte(captured(b, "gemini-0.61.0/BeforeTool-write.json", map[string]any{"tool_input": shell(k)}))
			}},
		{"copilot", "copilot/bash",
			func() []byte { return []byte(captured(b, "copilot-1.0.102/userPromptSubmitted.json", nil)) },
			func(k int) []byte {
				return []byte(captured(b, "copilot-1.0.102/preToolUse-write.json", map[string]any{"toolArgs": shell(k)}))
			}},
		{"cursor", "cursor/Shell",
			func() []byte {
				return []byte(`{"hook_event_name":"beforeSubmitPrompt","conversation_id":"bench","generation_id":"g","prompt":"go"}`)
			},
			func(k int) []byte {
				return []byte(fmt.Sprintf(`{"hook_event_name":"preToolUse","conversation_id":"bench","generation_id":"g","tool_name":"Shell","tool_use_id":"tu_%d","tool_input":{"command":"go test ./... # %d"}}`, k, k))
			}},
	}
	for _, d := range dialects {
		b.Run(d.name, func(b *testing.B) {
			cfg := benchProject(b, `"g"`, map[string]string{"g.lua": `
guard.tool("` + d.path + `", function(call, invoke)
  if string.find(call.args.command, "rm -rf", 1, true) then return refuse("no") end
  return invoke()
end)`})
			args := []string{attuneBin, "hook", d.name, "--config", cfg}
			execHook(b, args, d.prompt())
			events := make([][]byte, b.N)
			for k := range events {
				events[k] = d.pre(k)
			}
			b.ResetTimer()
			for k := range b.N {
				execHook(b, args, events[k])
			}
		})
	}
}
