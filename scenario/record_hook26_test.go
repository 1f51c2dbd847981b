package scenario_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/harness"
	"github.com/attune-dev/attune/scenario"
)

const gateProg = `
guard.tool("claude/Bash", function(c, invoke)
  if c.args.command == "deploy" then return halt("no deploys from here") end
  if c.args.command == "ls" then return allow("listing is safe") end
  if c.args.command == "rm x" then return ask("deletes x in " .. c.harness.event.cwd) end
  notify("guard saw " .. c.args.command .. " from " .. c.harness.event.hook_event_name)
  return invoke()
end)
guard.result("claude/Bash", function(c, outcome)
  local out = outcome.result.stdout
  if out:find("sk%-") then
    return replace(outcome, {stdout = (out:gsub("sk%-%w+", "sk-[redacted]")), stderr = ""})
  end
  return outcome
end)
hook.round("end", function(b)
  local readme = admit.read("file/read", "README.md")
  local t = admit.read("exec/test")
  notify("readme " .. readme .. " tests " .. t.code .. " at " .. admit.read("clock/now"))
end)
`

// A hook session with host reads, result guards, verdicts and a halt
// records with attune record and replays clean with attune test.
func TestRecordHookSessionWithReadsAndResultGuards(t *testing.T) { // R3.10
	ctx := context.Background()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "packs", "p", "p.lua"), []byte(gateProg), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Title"), 0o644)
	cfgPath := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfgPath, []byte(`[engine]
packs = ["packs/p"]
[bots.main]
behaviors = ["p"]
ceiling = ["read", "exec"]
[harness.reads]
"file/read" = true
"clock/now" = true
[harness.reads.exec.test]
argv = ["sh", "-c", "echo ok"]
`), 0o644)
	var log strings.Builder
	r, err := harness.Open(ctx, cfgPath, harness.Options{Stderr: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Log(log.String())
		}
	}()
	var answers []string
	for _, ev := range []string{
		`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"a","tool_input":{"command":"env"}}`,
		`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"a","tool_input":{"command":"env"},"tool_response":{"stdout":"KEY=sk-abc","stderr":"","interrupted":false,"isImage":false}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"ls"}}`,
		`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"ls"},"tool_response":{"stdout":"f1","stderr":"","interrupted":false,"isImage":false}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","cwd":"` + dir + `","tool_name":"Bash","tool_use_id":"r","tool_input":{"command":"rm x"}}`,
		`{"hook_event_name":"PostToolUse","session_id":"s","cwd":"` + dir + `","tool_name":"Bash","tool_use_id":"r","tool_input":{"command":"rm x"},"tool_response":{"stdout":"","stderr":"","interrupted":false,"isImage":false}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"c","tool_input":{"command":"deploy"}}`,
		`{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"done"}`,
	} {
		e, err := harness.Claude().Parse([]byte(ev))
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, string(harness.Claude().Render(e, r.Handle(ctx, harness.Claude(), e))))
	}
	r.Close()
	if !strings.Contains(answers[1], `guard saw env from PreToolUse`) || !strings.Contains(answers[2], `sk-[redacted]`) ||
		!strings.Contains(answers[5], `"permissionDecision":"ask","permissionDecisionReason":"deletes x in `+dir+`"`) ||
		!strings.Contains(answers[7], `"continue":false`) || !strings.Contains(answers[8], "readme # Title tests 0") {
		t.Fatalf("answers: %q", answers)
	}

	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, engine.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rec, err := engine.LoadSession(ctx, e.Store(), "claude/s")
	if err != nil {
		t.Fatal(err)
	}
	data, err := scenario.Record(ctx, rec, scenario.RecordOptions{Config: cfg, Engine: e})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse("hook.toml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if res := scenario.Run(ctx, sc); !res.Passed {
		t.Fatalf("the recorded hook session fails:\n%s\n%s", res.Failure, data)
	}
	text := string(data)
	for _, want := range []string{`sk-[redacted]`, `no deploys from here`, `file/read`} {
		if !strings.Contains(text, want) {
			t.Errorf("the recording lacks %s:\n%s", want, text)
		}
	}
	// a behavior changed to read another file fails at that step
	changed := strings.Replace(text, `"file/read", "README.md"`, `"file/read", "OTHER.md"`, 1)
	if changed == text {
		t.Fatalf("the recording does not hold the program's read:\n%s", text)
	}
	sc, err = scenario.Parse("hook.toml", []byte(changed))
	if err != nil {
		t.Fatal(err)
	}
	if res := scenario.Run(ctx, sc); res.Passed {
		t.Fatalf("the changed read passed:\n%s", changed)
	}
}
