//go:build e2e

package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/internal/peertest"
)

// claudeBin returns the real Claude Code CLI of testdata/peers, or fails.
func claudeBin(t *testing.T) string {
	t.Helper()
	return filepath.Join(peertest.Peers(t, ".bin/claude"), "node_modules", ".bin", "claude")
}

// project is a Claude Code project folder with attune installed.
type project struct {
	dir, cfg, home string
}

// newProject writes attune.toml (with packs/p) and the programs, and
// installs attune's hooks into .claude/settings.json.
func newProject(t *testing.T, cfgTOML string, programs map[string]string) *project {
	t.Helper()
	p := &project{dir: t.TempDir(), home: t.TempDir()}
	for name, src := range programs {
		f := filepath.Join(p.dir, "packs", "p", name)
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.cfg = filepath.Join(p.dir, "attune.toml")
	if err := os.WriteFile(p.cfg, []byte("[engine]\npacks = [\"packs/p\"]\n"+cfgTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := InstallClaude(filepath.Join(p.dir, ".claude", "settings.json"), Install{Binary: attuneBin, Config: p.cfg}); err != nil {
		t.Fatal(err)
	}
	return p
}

// claudeResult is what `claude -p --output-format json` prints.
type claudeResult struct {
	Result            string           `json:"result"`
	IsError           bool             `json:"is_error"`
	NumTurns          int              `json:"num_turns"`
	SessionID         string           `json:"session_id"`
	PermissionDenials []map[string]any `json:"permission_denials"`
	raw               string
}

// run runs the real CLI once in the project against api.
func (p *project) run(t *testing.T, api *fakeAPI, prompt string, args ...string) claudeResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	all := append([]string{"-p", prompt, "--output-format", "json"}, args...)
	cmd := exec.CommandContext(ctx, claudeBin(t), all...)
	cmd.Dir = p.dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + p.home,
		"ANTHROPIC_BASE_URL=" + api.url,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var res claudeResult
	res.raw = out.String()
	if jerr := json.Unmarshal(lastJSON(out.Bytes()), &res); jerr != nil || err != nil {
		t.Fatalf("claude: %v / %v\nstdout: %s\nstderr: %s\nother requests: %q", err, jerr, out.String(), errOut.String(), api.other)
	}
	return res
}

// lastJSON returns the last line of out that holds a JSON object.
func lastJSON(out []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for k := len(lines) - 1; k >= 0; k-- {
		if strings.HasPrefix(strings.TrimSpace(lines[k]), "{") {
			return []byte(lines[k])
		}
	}
	return out
}

// R4.3: a guard's refusal of a Bash call reaches Claude Code as a
// denial: the call is in permission_denials, never ran, and the reason is in
// the next request to the model.
func TestClaudeRefusedBash(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `
guard.tool("claude/Bash", function(call, invoke)
  if call.args.command:find("rm %-rf") then return refuse("attune refuses rm -rf in this project") end
  return invoke()
end)`})
	marker := filepath.Join(p.dir, "ran")
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{{Tool: "Bash", ID: "toolu_rm", Input: map[string]any{"command": "touch " + marker + " && rm -rf " + p.dir + "/x", "description": "clean"}}}
		}
		return []block{{Text: "all done"}}
	})
	res := p.run(t, api, "clean up", "--allowedTools", "Bash")
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0]["tool_name"] != "Bash" || res.PermissionDenials[0]["tool_use_id"] != "toolu_rm" {
		t.Errorf("permission_denials: %v", res.PermissionDenials)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused command ran")
	}
	reqs := api.requests()
	if len(reqs) != 2 || !strings.Contains(requestText(reqs[1]), "attune refuses rm -rf in this project") {
		t.Fatalf("the refusal reason is not in the next request (%d requests): %s", len(reqs), requestText(reqs[len(reqs)-1]))
	}
	if res.Result != "all done" {
		t.Errorf("result %q", res.Result)
	}
}

// R4.3: what runs is the guard's rewrite, allowed by the guard's allow
// verdict (no --allowedTools: attune's allow is the permission).
func TestClaudeRewrite(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `
guard.tool("claude/Bash", function(call, invoke)
  call.args.command = string.gsub(call.args.command, "hello", "rewritten")
  return allow("echo is safe")
end)`})
	out := filepath.Join(p.dir, "out.txt")
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{{Tool: "Bash", ID: "toolu_echo", Input: map[string]any{"command": "echo hello > " + out, "description": "write"}}}
		}
		return []block{{Text: "written"}}
	})
	res := p.run(t, api, "write it")
	data, err := os.ReadFile(out)
	if err != nil || strings.TrimSpace(string(data)) != "rewritten" {
		t.Fatalf("out.txt = %q, %v (denials %v)", data, err, res.PermissionDenials)
	}
	if len(res.PermissionDenials) != 0 {
		t.Errorf("denials %v", res.PermissionDenials)
	}
}

// R4.7: the :post diagnostics of two parallel tool calls both reach the
// next request.
func TestClaudeParallelPostDiagnostics(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `
hook.tool("claude/Read", {post = function(call, out)
  return "attune diagnostic for " .. string.match(call.args.file_path, "[^/]+$")
end})`})
	for _, f := range []string{"one.txt", "two.txt"} {
		os.WriteFile(filepath.Join(p.dir, f), []byte(f), 0o644)
	}
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{
				{Tool: "Read", ID: "toolu_r1", Input: map[string]any{"file_path": filepath.Join(p.dir, "one.txt")}},
				{Tool: "Read", ID: "toolu_r2", Input: map[string]any{"file_path": filepath.Join(p.dir, "two.txt")}},
			}
		}
		return []block{{Text: "read both"}}
	})
	p.run(t, api, "read them", "--allowedTools", "Read")
	reqs := api.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	text := requestText(reqs[1])
	for _, want := range []string{"attune diagnostic for one.txt", "attune diagnostic for two.txt"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q is not in the next request: %s", want, text)
		}
	}
}

// R3.4, R3.6, R3.7: turn-start notes reach the first request; an
// activating note at the round end makes Claude continue with its text,
// and the loop stops after the activated round.
func TestClaudeNotesAndStopLoop(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `
hook.turn("start", function(b) notify("attune turn note: the tests live in tests/") end)
hook.round("end", function(b)
  if not b.activated then notify("attune asks: verify your work before stopping", "activating") end
end)`})
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		return []block{{Text: []string{"first answer", "verified answer", "a third answer"}[min(n, 2)]}}
	})
	res := p.run(t, api, "do it")
	reqs := api.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the activated round, then stop)", len(reqs))
	}
	if !strings.Contains(requestText(reqs[0]), "attune turn note: the tests live in tests/") {
		t.Errorf("the turn note is not in the first request: %s", requestText(reqs[0]))
	}
	if strings.Contains(requestText(reqs[0]), "verify your work") || !strings.Contains(requestText(reqs[1]), "attune asks: verify your work before stopping") {
		t.Errorf("the activating note is not (only) in the second request: %s", requestText(reqs[1]))
	}
	if res.Result != "verified answer" {
		t.Errorf("result %q", res.Result)
	}
}

// R5.10: a project owner counts the tool calls of every session: parallel
// hook processes lose no update, and the count persists across sessions.
func TestClaudeProjectOwnerAcrossSessions(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": counterProg + `
hook.turn("start", function(b)
  local st = call.method("calls", "get", {})
  notify("attune counted " .. st .. " calls so far")
end)
define.method("calls", "get", function(ctx, state) return state.n end, {kind = "query"})
`})
	files := []string{"a.txt", "b.txt", "c.txt"}
	for _, f := range files {
		os.WriteFile(filepath.Join(p.dir, f), []byte(f), 0o644)
	}
	reads := func(fs ...string) []block {
		var bs []block
		for k, f := range fs {
			bs = append(bs, block{Tool: "Read", ID: "toolu_" + f + string(rune('0'+k)), Input: map[string]any{"file_path": filepath.Join(p.dir, f)}})
		}
		return bs
	}
	for round, batch := range [][]string{files, files[:2]} {
		api := newFakeAPI(t, func(n int, req map[string]any) []block {
			if n == 0 {
				return reads(batch...)
			}
			return []block{{Text: "done"}}
		})
		p.run(t, api, "read", "--allowedTools", "Read")
		if n := len(api.requests()); n != 2 {
			t.Fatalf("session %d: %d requests", round, n)
		}
	}
	api := newFakeAPI(t, func(n int, req map[string]any) []block { return []block{{Text: "ok"}} })
	p.run(t, api, "how many")
	if text := requestText(api.requests()[0]); !strings.Contains(text, "attune counted 5 calls so far") {
		t.Fatalf("the count is not 5: %s", text)
	}
}

// Claude Code's http hooks reach `attune hook serve`: the same denial and
// notes as the command hooks, from one warm process.
func TestClaudeHTTPServe(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `
hook.turn("start", function(b) notify("attune served note") end)
guard.tool("claude/Bash", function(call, invoke)
  if call.args.command:find("rm %-rf") then return refuse("attune serve refuses rm -rf") end
  return invoke()
end)`})
	addr := startServe(t, p.cfg)
	settings := filepath.Join(p.dir, ".claude", "settings.json")
	if err := UninstallClaude(settings); err != nil {
		t.Fatal(err)
	}
	if err := InstallClaude(settings, Install{HTTP: addr, Token: serveToken(t, p.cfg)}); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(p.dir, "ran")
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{{Tool: "Bash", ID: "toolu_rm", Input: map[string]any{"command": "touch " + marker + "; rm -rf " + p.dir + "/x", "description": "clean"}}}
		}
		return []block{{Text: "all done"}}
	})
	res := p.run(t, api, "clean up", "--allowedTools", "Bash")
	if len(res.PermissionDenials) != 1 {
		t.Errorf("permission_denials: %v", res.PermissionDenials)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused command ran")
	}
	reqs := api.requests()
	if len(reqs) != 2 || !strings.Contains(requestText(reqs[0]), "attune served note") || !strings.Contains(requestText(reqs[1]), "attune serve refuses rm -rf") {
		t.Fatalf("requests: %d\n%s", len(reqs), requestText(reqs[len(reqs)-1]))
	}
}

// A subagent runs as a child instance with the bot its agent_type maps to:
// the scout's guard refuses the subagent's Read; the main bot has none.
func TestClaudeSubagentBot(t *testing.T) {
	p := newProject(t, `
[bots.main]
behaviors = ["p"]
ceiling = ["read", "write", "exec", "spawn"]
[bots.scout]
behaviors = ["s"]
ceiling = ["read"]
[harness.claude.agents]
Explore = "scout"
`, map[string]string{
		"p.lua": `hook.tool("claude/Read", {post = function(c, out) return "main read " .. c.args.file_path end})`,
		"s.lua": `guard.tool("claude/Read", function(call, invoke) return refuse("the scout may not read " .. call.args.file_path) end)`,
	})
	f := filepath.Join(p.dir, "f.txt")
	os.WriteFile(f, []byte("x"), 0o644)
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		text := requestText(req)
		switch {
		case strings.Contains(text, "SUBAGENT-PROMPT") && strings.Contains(text, "toolu_sub"):
			return []block{{Text: "subagent done"}}
		case strings.Contains(text, "SUBAGENT-PROMPT") && !strings.Contains(text, "toolu_task"):
			return []block{{Tool: "Read", ID: "toolu_sub", Input: map[string]any{"file_path": f}}}
		case strings.Contains(text, "toolu_main"):
			return []block{{Text: "all done"}}
		case strings.Contains(text, "toolu_task"):
			return []block{{Tool: "Read", ID: "toolu_main", Input: map[string]any{"file_path": f}}}
		}
		return []block{{Tool: "Agent", ID: "toolu_task", Input: map[string]any{"description": "look", "prompt": "SUBAGENT-PROMPT read f.txt", "subagent_type": "Explore"}}}
	})
	p.run(t, api, "go", "--allowedTools", "Read,Agent")
	var sub, main bool
	for _, r := range api.requests() {
		text := requestText(r)
		if strings.Contains(text, "toolu_sub") && strings.Contains(text, "the scout may not read "+f) {
			sub = true
		}
		if strings.Contains(text, "toolu_main") && strings.Contains(text, "main read "+f) && !strings.Contains(text, "may not read "+f+`","is_error":true,"tool_use_id":"toolu_main`) {
			main = true
		}
	}
	if !sub || !main {
		t.Fatalf("the subagent's Read refused by the scout: %v; the main agent's Read diagnosed by main: %v", sub, main)
	}
}
