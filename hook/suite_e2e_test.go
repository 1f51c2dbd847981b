//go:build e2e

package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliSuite is what the end-to-end suite needs of one real CLI: how its
// model calls the shell, the attune path that call arrives under, and how
// to run one session.
type cliSuite struct {
	name  string // the dialect: codex, gemini, copilot
	wire  wire
	shell func(id, cmd string) fcall // the model's shell call
	path  string                     // attune's path of that call
	run   func(t *testing.T, h *agentRun, m *model, prompt string)
}

const askBot = mainBot + `[harness.%s]
ask_marks = ["confirm"]
`

// runSuite runs the behaviors every harness must show against the real CLI.
func runSuite(t *testing.T, s cliSuite) {
	prog := func(src string) map[string]string { return map[string]string{"p.lua": src} }
	bot := fmt.Sprintf(askBot, s.name)

	// R4.3: a refused command did not run, and its reason reached the model.
	t.Run("refused", func(t *testing.T) {
		h := newHarness(t, s.name, bot, prog(`
guard.tool("`+s.path+`", function(call, invoke)
  if call.args.command:find("rm %-rf") then return refuse("attune refuses rm -rf in this project") end
  return invoke()
end)`))
		marker := filepath.Join(h.dir, "ran")
		m := newModel(t, s.wire, func(n int, body string) reply {
			if n == 0 {
				return reply{Calls: []fcall{s.shell("call_rm", "touch "+marker+" && rm -rf "+h.dir+"/x")}}
			}
			return reply{Text: "all done"}
		})
		s.run(t, h, m, "clean up")
		if _, err := os.Stat(marker); err == nil {
			t.Error("the refused command ran")
		}
		reqs := m.requests()
		if len(reqs) < 2 || !strings.Contains(reqs[1], "attune refuses rm -rf in this project") {
			t.Fatalf("the reason is not in the next request (%d requests): %s", len(reqs), last(reqs))
		}
	})

	// R4.3: what runs is the guard's rewrite.
	t.Run("rewrite", func(t *testing.T) {
		h := newHarness(t, s.name, bot, prog(`
guard.tool("`+s.path+`", function(call, invoke)
  local args = call.args
  args.command = string.gsub(args.command, "hello", "rewritten")
  return invoke(args)
end)`))
		out := filepath.Join(h.dir, "out.txt")
		m := newModel(t, s.wire, func(n int, body string) reply {
			if n == 0 {
				return reply{Calls: []fcall{s.shell("call_echo", "echo hello > "+out)}}
			}
			return reply{Text: "written"}
		})
		s.run(t, h, m, "write it")
		if data, err := os.ReadFile(out); err != nil || strings.TrimSpace(string(data)) != "rewritten" {
			t.Fatalf("out.txt = %q, %v; requests: %s", data, err, m.allText())
		}
	})

	// R3.4, R4.7: a turn-start note reaches the first request, a call's
	// :post diagnostic the request after the call.
	t.Run("context", func(t *testing.T) {
		h := newHarness(t, s.name, bot, prog(`
hook.turn("start", function(b) notify("attune turn note: the tests live in tests/") end)
hook.tool("`+s.path+`", {post = function(call, out) return "attune post note for " .. call.args.command end})`))
		m := newModel(t, s.wire, func(n int, body string) reply {
			if n == 0 {
				return reply{Calls: []fcall{s.shell("call_echo", "echo hi")}}
			}
			return reply{Text: "done"}
		})
		s.run(t, h, m, "go")
		reqs := m.requests()
		if len(reqs) < 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		if !strings.Contains(reqs[0], "attune turn note: the tests live in tests/") {
			t.Errorf("the turn note is not in the first request: %s", reqs[0])
		}
		if !strings.Contains(reqs[1], "attune post note for echo hi") {
			t.Errorf("the post note is not in the second request: %s", reqs[1])
		}
	})

	// R3.6, R3.7: an activating note at the round end makes the agent
	// continue once, with the note; the loop ends after the activated round.
	t.Run("stop-gate", func(t *testing.T) {
		h := newHarness(t, s.name, bot, prog(`
hook.round("end", function(b)
  if not b.activated then notify("attune asks: verify your work before stopping", "activating") end
end)`))
		m := newModel(t, s.wire, func(n int, body string) reply {
			return reply{Text: []string{"first answer", "verified answer", "a third answer", "a fourth answer"}[min(n, 3)]}
		})
		s.run(t, h, m, "do it")
		reqs := m.requests()
		if len(reqs) != 2 {
			t.Fatalf("%d model requests, want 2 (the activated round, then stop): %s", len(reqs), m.allText())
		}
		if strings.Contains(reqs[0], "verify your work") || !strings.Contains(reqs[1], "attune asks: verify your work before stopping") {
			t.Errorf("the activating note is not (only) in the second request: %s", reqs[1])
		}
		if n := strings.Count(m.allText(), "attune asks: verify your work before stopping"); n == 0 {
			t.Error("the note never reached the model")
		}
	})

	// R3.3: a refused turn blocks the prompt: the model never sees it.
	t.Run("prompt-refused", func(t *testing.T) {
		h := newHarness(t, s.name, bot, prog(`
guard.turn(function(b, invoke)
  if b.input and b.input:find("SECRET%-PLAN") then return refuse("attune refuses this prompt") end
  return invoke()
end)`))
		m := newModel(t, s.wire, func(n int, body string) reply { return reply{Text: "answered"} })
		h.mayFail = true // a CLI may exit non-zero when its prompt is refused
		s.run(t, h, m, "tell me the SECRET-PLAN")
		if text := m.allText(); strings.Contains(text, "SECRET-PLAN") {
			t.Fatalf("the refused prompt reached the model: %s", noteIn(text, "SECRET-PLAN"))
		}
	})

	// R4.8: a call marked for confirmation never runs unconfirmed (headless,
	// nobody can confirm: the strict answer).
	t.Run("ask", func(t *testing.T) {
		h := newHarness(t, s.name, bot, prog(`
guard.tool("`+s.path+`", function(call, invoke)
  if call.args.command:find("sudo") then mark(call, "confirm") end
  return invoke()
end)`))
		marker := filepath.Join(h.dir, "ran")
		m := newModel(t, s.wire, func(n int, body string) reply {
			if n == 0 {
				return reply{Calls: []fcall{s.shell("call_sudo", "touch "+marker+" || sudo true")}}
			}
			return reply{Text: "done"}
		})
		s.run(t, h, m, "go")
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the call marked for confirmation ran unconfirmed")
		}
		reqs := m.requests()
		if len(reqs) < 2 || !strings.Contains(reqs[1], "the call is marked confirm") {
			t.Fatalf("the model was not told why (%d requests): %s", len(reqs), last(reqs))
		}
		t.Logf("the model was told: %s", noteIn(reqs[1], "the call is marked confirm"))
	})

	// R5.10: a project owner counts the calls of every session; the count
	// persists from one session to the next.
	t.Run("owner-across-sessions", func(t *testing.T) {
		h := newHarness(t, s.name, bot, prog(strings.Replace(counterProg, `"claude/*"`, `"`+s.name+`/*"`, 1)+`
hook.turn("start", function(b)
  local st = call.method("calls", "get", {})
  notify("attune counted " .. st .. " calls so far")
end)
define.method("calls", "get", function(ctx, state) return state.n end, {kind = "query"})
`))
		for k, cmds := range [][]string{{"echo a", "echo b"}, {"echo c"}} {
			m := newModel(t, s.wire, func(n int, body string) reply {
				if n == 0 {
					var calls []fcall
					for i, c := range cmds {
						calls = append(calls, s.shell(fmt.Sprintf("call_%d_%d", k, i), c))
					}
					return reply{Calls: calls}
				}
				return reply{Text: "done"}
			})
			s.run(t, h, m, "count")
		}
		m := newModel(t, s.wire, func(n int, body string) reply { return reply{Text: "ok"} })
		s.run(t, h, m, "how many")
		if reqs := m.requests(); len(reqs) == 0 || !strings.Contains(reqs[0], "attune counted 3 calls so far") {
			t.Fatalf("the count is not 3: %s\n%s\n%s", noteIn(last(reqs), "attune counted"), h.lastOut, h.errOut)
		}
	})

	// R4.3: two parallel calls are both judged: both refused, neither ran,
	// both reasons reached the model.
	t.Run("parallel", func(t *testing.T) {
		h := newHarness(t, s.name, bot, prog(`
guard.tool("`+s.path+`", function(call, invoke)
  local which = call.args.command:match("forbidden%-(%w+)")
  if which then return refuse("attune refuses forbidden call " .. which) end
  return invoke()
end)`))
		one, two := filepath.Join(h.dir, "one"), filepath.Join(h.dir, "two")
		m := newModel(t, s.wire, func(n int, body string) reply {
			if n == 0 {
				return reply{Calls: []fcall{s.shell("call_p1", "touch "+one+" # forbidden-one"), s.shell("call_p2", "touch "+two+" # forbidden-two")}}
			}
			return reply{Text: "done"}
		})
		s.run(t, h, m, "go")
		for _, f := range []string{one, two} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s: the refused call ran", f)
			}
		}
		text := m.allText()
		for _, want := range []string{"attune refuses forbidden call one", "attune refuses forbidden call two"} {
			if !strings.Contains(text, want) {
				t.Errorf("%q never reached the model: %s", want, text)
			}
		}
	})
}

func last(reqs []string) string {
	if len(reqs) == 0 {
		return "(no request)"
	}
	return reqs[len(reqs)-1]
}

// R4.3, R3.6, R4.8, R5.10 with the real Codex CLI.
func TestCodexE2E(t *testing.T) {
	runSuite(t, cliSuite{name: "codex", wire: wireResponses, path: "codex/Bash",
		shell: func(id, cmd string) fcall {
			return fcall{ID: id, Name: "exec_command", Args: map[string]any{"cmd": cmd}}
		},
		run: func(t *testing.T, h *agentRun, m *model, prompt string) { h.codex(t, m, prompt) },
	})
}

// noteIn returns the text around each place of what in s (a short view of a
// long request).
func noteIn(s, what string) string {
	var out []string
	for rest := s; ; {
		k := strings.Index(rest, what)
		if k < 0 {
			break
		}
		out = append(out, rest[k:min(len(rest), k+120)])
		rest = rest[k+len(what):]
	}
	if len(out) == 0 {
		return fmt.Sprintf("no %q in %d bytes", what, len(s))
	}
	return strings.Join(out, " | ")
}

// R4.3, R3.6, R4.8, R5.10 with the real Copilot CLI.
func TestCopilotE2E(t *testing.T) {
	runSuite(t, cliSuite{name: "copilot", wire: wireChat, path: "copilot/bash",
		shell: func(id, cmd string) fcall {
			return fcall{ID: id, Name: "bash", Args: map[string]any{"command": cmd, "description": "run"}}
		},
		run: func(t *testing.T, h *agentRun, m *model, prompt string) { h.copilot(t, m, prompt) },
	})
}

// R4.3, R3.6, R4.8, R5.10 with the real Gemini CLI.
func TestGeminiE2E(t *testing.T) {
	runSuite(t, cliSuite{name: "gemini", wire: wireGemini, path: "gemini/run_shell_command",
		shell: func(id, cmd string) fcall {
			return fcall{ID: id, Name: "run_shell_command", Args: map[string]any{"command": cmd, "description": "run"}}
		},
		run: func(t *testing.T, h *agentRun, m *model, prompt string) { h.gemini(t, m, prompt) },
	})
}

// The same with Copilot's hooks configured in Claude Code's spelling
// (PreToolUse, ...): snake_case events with Claude's tool names, which the
// dialect reads as Copilot's own (copilot/bash).
func TestCopilotPascalE2E(t *testing.T) {
	runSuite(t, cliSuite{name: "copilot", wire: wireChat, path: "copilot/bash",
		shell: func(id, cmd string) fcall {
			return fcall{ID: id, Name: "bash", Args: map[string]any{"command": cmd, "description": "run"}}
		},
		run: func(t *testing.T, h *agentRun, m *model, prompt string) { h.pascal = true; h.copilot(t, m, prompt) },
	})
}
