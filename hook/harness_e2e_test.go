//go:build e2e

package hook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/internal/peertest"
)

// peerBin returns a real CLI of testdata/peers (node_modules/.bin/NAME),
// or fails.
func peerBin(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(peertest.Peers(t, ".bin/"+name), "node_modules", ".bin", name)
}

// harness is a project folder of one of the real CLIs, its own home, and
// attune's configuration and packs.
type agentRun struct {
	name            string // codex, gemini, copilot
	dir, home, cfg  string
	hook            string // the hook command every event runs
	env             []string
	trust           string // Codex: the [hooks.state] entries that trust h.hook
	pascal          bool   // Copilot: configure the events in Claude Code's spelling
	mayFail         bool   // a run may end with an error status
	lastOut, errOut string
}

// newHarness writes attune.toml (packs/p) and the programs into a fresh
// project; the hook command is attune's dialect of the harness.
func newHarness(t *testing.T, name, cfgTOML string, programs map[string]string) *agentRun {
	t.Helper()
	h := &agentRun{name: name, dir: t.TempDir(), home: t.TempDir()}
	for file, src := range programs {
		f := filepath.Join(h.dir, "packs", "p", file)
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.cfg = filepath.Join(h.dir, "attune.toml")
	if err := os.WriteFile(h.cfg, []byte("[engine]\npacks = [\"packs/p\"]\n"+cfgTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	h.hook = attuneBin + " hook " + name + " --config " + h.cfg
	return h
}

// captureHook makes every event of h write its input to dir and answer {}.
func (h *agentRun) captureHook(t *testing.T, dir string) {
	t.Helper()
	script := filepath.Join(h.home, "capture.sh")
	src := "#!/bin/sh\nf=" + dir + "/$(date +%s%N)-$$-$1.json\ncat > \"$f.tmp\" && mv \"$f.tmp\" \"$f\"\necho '{}'\n"
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	h.hook = script
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	b, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (h *agentRun) baseEnv() []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.home, "TERM=dumb", "NO_COLOR=1", "LANG=C.UTF-8"}, h.env...)
}

// exec runs the CLI with args in the project and returns its stdout.
func (h *agentRun) exec(t *testing.T, bin string, args []string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = h.dir
	cmd.Env = append(h.baseEnv(), env...)
	cmd.Stdin = strings.NewReader("")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	h.lastOut, h.errOut = out.String(), errOut.String()
	if err != nil && !(h.mayFail && ctx.Err() == nil) {
		t.Fatalf("%s %v: %v\nstdout: %s\nstderr: %s", filepath.Base(bin), args, err, out.String(), errOut.String())
	}
	return out.String()
}

// --- Codex ---

var codexEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}

// codexSetup writes $CODEX_HOME/config.toml (the stand-in model as its
// provider) and hooks.json (h.hook for every event), then trusts the hooks
// with the hashes `codex app-server` reports, as /hooks would.
func (h *agentRun) codexSetup(t *testing.T, m *model) {
	t.Helper()
	cfg := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
[model_providers.fake]
name = "stand-in"
base_url = "%s/v1"
env_key = "STAND_IN_KEY"
wire_api = "responses"
[projects.%q]
trust_level = "trusted"
`, m.url, h.dir)
	if err := os.WriteFile(filepath.Join(h.home, "config.toml"), []byte(cfg+h.trust), 0o644); err != nil {
		t.Fatal(err)
	}
	hooks := map[string]any{}
	for _, ev := range codexEvents {
		g := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": h.hook, "timeout": 60}}}
		if ev == "PreToolUse" || ev == "PostToolUse" {
			g["matcher"] = "*"
		}
		hooks[ev] = []any{g}
	}
	writeJSON(t, filepath.Join(h.home, "hooks.json"), map[string]any{"hooks": hooks})
	if h.trust == "" {
		h.codexTrust(t)
	}
}

// codexTrust asks `codex app-server` for the hooks' keys and hashes and
// writes [hooks.state."KEY"] trusted_hash for each into config.toml.
func (h *agentRun) codexTrust(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, peerBin(t, "codex"), "app-server")
	cmd.Dir = h.dir
	cmd.Env = append(h.baseEnv(), "CODEX_HOME="+h.home)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	fmt.Fprintln(in, `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"attune-test","version":"1"}}}`)
	fmt.Fprintln(in, `{"method":"initialized"}`)
	fmt.Fprintf(in, `{"id":2,"method":"hooks/list","params":{"cwds":[%q]}}`+"\n", h.dir)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []struct {
						Key, CurrentHash, TrustStatus string
					}
				}
			}
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		var b strings.Builder
		n := 0
		for _, d := range msg.Result.Data {
			for _, hk := range d.Hooks {
				fmt.Fprintf(&b, "[hooks.state.%q]\ntrusted_hash = %q\n", hk.Key, hk.CurrentHash)
				n++
			}
		}
		if n < len(codexEvents) {
			t.Fatalf("codex app-server lists %d hooks, want %d: %s", n, len(codexEvents), sc.Text())
		}
		h.trust = b.String()
		f, err := os.OpenFile(filepath.Join(h.home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(h.trust)
		f.Close()
		return
	}
	t.Fatalf("codex app-server gave no hooks/list answer: %v", sc.Err())
}

// codex runs `codex exec` once with prompt against m.
func (h *agentRun) codex(t *testing.T, m *model, prompt string) string {
	t.Helper()
	h.codexSetup(t, m)
	return h.exec(t, peerBin(t, "codex"), []string{"exec", "--skip-git-repo-check", prompt},
		[]string{"CODEX_HOME=" + h.home, "STAND_IN_KEY=sk-test"})
}

// --- captures ---

// capturedDir reads the events a capture hook wrote, in order; the
// event's configured name, when the hook was given it, is under "(event)".
func capturedDir(t *testing.T, dir string) []map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	var evs []map[string]any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ev map[string]any
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("%s: %v: %s", f, err, data)
		}
		if parts := strings.Split(strings.TrimSuffix(filepath.Base(f), ".json"), "-"); len(parts) == 3 && parts[2] != "" {
			ev["(event)"] = parts[2]
		}
		evs = append(evs, ev)
	}
	return evs
}

// keepCaptures writes the events into hook/testdata/captured/DIR when
// $ATTUNE_CAPTURE is set (re-capturing after a CLI upgrade), with the
// temporary folders replaced by /project and /home.
func (h *agentRun) keepCaptures(t *testing.T, dir string, evs []map[string]any, name func(map[string]any) string) {
	t.Helper()
	if os.Getenv("ATTUNE_CAPTURE") == "" {
		return
	}
	out := filepath.Join("testdata", "captured", dir)
	seen := map[string]int{}
	for _, ev := range evs {
		n := name(ev)
		ev = maps.Clone(ev)
		delete(ev, "(event)")
		b, _ := json.MarshalIndent(ev, "", "  ")
		s := strings.ReplaceAll(string(b), h.dir, "/project")
		s = strings.ReplaceAll(s, h.home, "/home")
		seen[n]++
		if seen[n] > 1 {
			n = fmt.Sprintf("%s-%d", n, seen[n])
		}
		os.MkdirAll(out, 0o755)
		if err := os.WriteFile(filepath.Join(out, n+".json"), []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func eventNames(evs []map[string]any, key string) []string {
	var out []string
	for _, ev := range evs {
		s, _ := ev[key].(string)
		out = append(out, s)
	}
	return out
}

// --- Copilot ---

var copilotEvents = []string{"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "postToolUseFailure", "agentStop", "sessionEnd"}

// copilotPascal are the same events as Copilot also reads them, in
// Claude Code's spelling: configured so, they get snake_case payloads.
var copilotPascal = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"}

// copilotSetup writes .github/hooks/attune.json (h.hook for every event)
// and trusts the project folder in $COPILOT_HOME/config.json, as the
// folder-trust prompt would.
func (h *agentRun) copilotSetup(t *testing.T) {
	t.Helper()
	hooks := map[string]any{}
	events := copilotEvents
	if h.pascal {
		events = copilotPascal
	}
	for _, ev := range events {
		cmd := h.hook
		if strings.HasSuffix(cmd, "capture.sh") {
			cmd += " " + ev
		}
		hooks[ev] = []any{map[string]any{"type": "command", "bash": cmd, "timeoutSec": 60}}
	}
	writeJSON(t, filepath.Join(h.dir, ".github", "hooks", "attune.json"), map[string]any{"version": 1, "hooks": hooks})
	writeJSON(t, filepath.Join(h.home, ".copilot", "config.json"), map[string]any{"trusted_folders": []string{h.dir}})
}

// copilot runs `copilot -p` once with prompt against m, offline, the
// stand-in model as its own provider.
func (h *agentRun) copilot(t *testing.T, m *model, prompt string) string {
	t.Helper()
	h.copilotSetup(t)
	cache := filepath.Join(peertest.Peers(t), "node_modules", ".copilot-cache")
	return h.exec(t, peerBin(t, "copilot"), []string{"-p", prompt, "--allow-all-tools", "--no-color"},
		[]string{"COPILOT_HOME=" + filepath.Join(h.home, ".copilot"), "COPILOT_PKG_CACHE_HOME=" + cache,
			"COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=" + m.url + "/v1", "COPILOT_PROVIDER_API_KEY=sk-test",
			"COPILOT_PROVIDER_MODEL_ID=stand-in", "COPILOT_AUTO_UPDATE=false"})
}

// --- Gemini CLI ---

var geminiEvents = []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd"}

// geminiSetup writes the project's .gemini/settings.json: h.hook for every
// event, timeouts in milliseconds.
func (h *agentRun) geminiSetup(t *testing.T) {
	t.Helper()
	hooks := map[string]any{}
	for _, ev := range geminiEvents {
		g := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": h.hook, "timeout": 60000}}}
		if ev == "BeforeTool" || ev == "AfterTool" {
			g["matcher"] = "*"
		}
		hooks[ev] = []any{g}
	}
	writeJSON(t, filepath.Join(h.dir, ".gemini", "settings.json"), map[string]any{"hooksConfig": map[string]any{"enabled": true}, "hooks": hooks})
	writeJSON(t, filepath.Join(h.home, ".gemini", "settings.json"), map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":  map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	})
}

// gemini runs `gemini -p` once with prompt against m (--yolo: the tools
// run without a person's confirmation, only the hooks judge them).
func (h *agentRun) gemini(t *testing.T, m *model, prompt string, args ...string) string {
	t.Helper()
	h.geminiSetup(t)
	return h.exec(t, peerBin(t, "gemini"), append([]string{"-p", prompt, "--yolo"}, args...),
		[]string{"GEMINI_API_KEY=sk-test", "GOOGLE_GEMINI_BASE_URL=" + m.url, "GEMINI_CLI_TRUST_WORKSPACE=true",
			"GEMINI_CLI_NO_RELAUNCH=true", "NO_BROWSER=true"})
}
