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

const bashGuard = `
guard.tool("claude/Bash", function(c, invoke)
  if c.args.command:find("rm %-rf") then return refuse("no rm -rf: " .. c.args.command) end
  return invoke()
end)
hook.tool("claude/Bash", {
  post = function(c, out) return "ran " .. c.args.command .. " -> " .. tostring(out.result.stdout) end,
})
hook.round("end", function(b) notify("round " .. b.round .. " ended") end)
`

// A session Claude Code drove through `attune hook claude` (tool calls
// whose cores ran in another process) records and replays like any other;
// with the guard changed, it fails at the call the guard decided.
func TestRecordHookSession(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "packs", "p", "p.lua"), []byte(bashGuard), 0o644)
	cfgPath := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfgPath, []byte("[engine]\npacks = [\"packs/p\"]\n[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\", \"exec\"]\n"), 0o644)
	r, err := harness.Open(ctx, cfgPath, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{
		`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"list the files"}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"a","tool_input":{"command":"ls"}}`,
		`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"a","tool_input":{"command":"ls"},"tool_response":{"stdout":"f1"}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"b","tool_input":{"command":"rm -rf /"}}`,
		`{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"done"}`,
	} {
		e, err := harness.Claude().Parse([]byte(ev))
		if err != nil {
			t.Fatal(err)
		}
		r.Handle(ctx, harness.Claude(), e)
	}
	r.Close()

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
	for _, want := range []string{`path = "claude/Bash"`, `expect = {diagnostics = ["ran ls -> f1"], result = {stdout = "f1"}}`,
		`expect = {reason = "no rm -rf: rm -rf /", refused_by = "guard", status = "refused"}`} {
		if !strings.Contains(text, want) {
			t.Errorf("the recording lacks %s:\n%s", want, text)
		}
	}
	changed := strings.Replace(text, `find("rm %-rf")`, `find("rm %-fr")`, 1)
	sc, err = scenario.Parse("hook.toml", []byte(changed))
	if err != nil {
		t.Fatal(err)
	}
	res := scenario.Run(ctx, sc)
	if res.Passed || res.Fail == nil || res.Fail.Op != "tool" || !strings.Contains(res.Failure, "status: want refused, got") {
		t.Fatalf("the changed guard: %+v\n%s", res.Fail, res.Failure)
	}
}
