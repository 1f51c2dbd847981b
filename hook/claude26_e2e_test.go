//go:build e2e

package hook

import (
	"strings"
	"testing"
)

// A result guard redacts a secret from a Bash result before the model
// sees it: the stand-in model's next request does not hold it.
func TestClaudeResultGuardRedacts(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `
guard.tool("claude/Bash", function(call, invoke) return allow("echo is fine") end)
guard.result("claude/Bash", function(call, outcome)
  local r = outcome.result
  return replace(outcome, {stdout = (r.stdout:gsub("sk%-%w+", "sk-[redacted]")), stderr = r.stderr,
    interrupted = r.interrupted, isImage = r.isImage})
end)`})
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{{Tool: "Bash", ID: "toolu_env", Input: map[string]any{"command": "echo KEY=sk-$(echo live12345)", "description": "show"}}}
		}
		return []block{{Text: "done"}}
	})
	p.run(t, api, "show the key")
	reqs := api.requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	next := requestText(reqs[1])
	if strings.Contains(next, "sk-live12345") || !strings.Contains(next, "sk-[redacted]") {
		t.Fatalf("the next request: %s", next)
	}
}

// halt ends the run: the model is not asked again after the halted call.
func TestClaudeHaltEndsTheRun(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `
guard.tool("claude/Bash", function(call, invoke) return halt("no shell today") end)`})
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{{Tool: "Bash", ID: "toolu_ls", Input: map[string]any{"command": "ls", "description": "list"}}}
		}
		return []block{{Text: "went on"}}
	})
	res := p.run(t, api, "list", "--allowedTools", "Bash")
	if n := len(api.requests()); n != 1 {
		t.Fatalf("%d requests after the halt (want 1): %s", n, res.raw)
	}
}

// A note placed at session start reaches the first request.
func TestClaudeSessionStartNote(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `
hook.session("start", function(b) notify("PROJECT RULE: tabs, never spaces (" .. b.source .. ")") end)`})
	api := newFakeAPI(t, func(n int, req map[string]any) []block { return []block{{Text: "ok"}} })
	p.run(t, api, "hello")
	reqs := api.requests()
	if len(reqs) == 0 || !strings.Contains(requestText(reqs[0]), "PROJECT RULE: tabs, never spaces (startup)") {
		t.Fatalf("the first request lacks the note: %v", reqs)
	}
}

// /goal from the prompt runs the pack command: its note reaches the model.
func TestClaudeGoalFromPrompt(t *testing.T) {
	p := newProject(t, `
[bots.main]
behaviors = ["goal"]
ceiling = ["read"]
grants = ["goal.set", "goal.clear"]
[bots.main.config.goal]
loops = 1
`, map[string]string{"p.lua": `-- unused`})
	api := newFakeAPI(t, func(n int, req map[string]any) []block { return []block{{Text: "ok"}} })
	p.run(t, api, "/goal ship the parser")
	reqs := api.requests()
	if len(reqs) == 0 || !strings.Contains(requestText(reqs[0]), "Goal: ship the parser (1 loops)") {
		t.Fatalf("the first request lacks the goal: %d requests %v", len(reqs), reqs)
	}
}

// A result guard's refusal withholds a Bash result: the model's next
// request does not hold it, only the reason. (decision "block" alone does
// not: Claude Code 2.1.328 still hands the model the tool's output, so the
// answer also replaces it.)
func TestClaudeResultGuardWithholds(t *testing.T) {
	p := newProject(t, mainBot, map[string]string{"p.lua": `
guard.tool("claude/Bash", function(call, invoke) return allow("echo is fine") end)
guard.result("claude/Bash", function(call, outcome)
  if outcome.result.stdout:find("PRIVATE") then return refuse("the output holds a private key") end
  return outcome
end)`})
	api := newFakeAPI(t, func(n int, req map[string]any) []block {
		if n == 0 {
			return []block{{Tool: "Bash", ID: "toolu_key", Input: map[string]any{"command": "echo BEGIN-$(echo PRIVATE)-KEY-$(echo abc)999", "description": "show"}}}
		}
		return []block{{Text: "done"}}
	})
	p.run(t, api, "show the key")
	reqs := api.requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	next := requestText(reqs[1])
	if strings.Contains(next, "KEY-abc999") || !strings.Contains(next, "the output holds a private key") {
		t.Fatalf("the next request: %s", next)
	}
}
