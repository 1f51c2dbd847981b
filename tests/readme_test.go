package tests

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
	"github.com/attune-dev/attune/store"
)

// The README's scenario and its first behavior are the ones a QA engineer
// and a bot author copy: they must run as written.
func TestReadmeScenario(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, block := range strings.Split(string(data), "```toml\n")[1:] {
		text := block[:strings.Index(block, "```")]
		if !strings.HasPrefix(text, "name") {
			continue // the config example
		}
		found++
		sc, err := scenario.Parse("README.md", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if res := scenario.Run(context.Background(), sc); !res.Passed {
			t.Errorf("the README's scenario fails:\n%s", res.Failure)
		}
	}
	if found == 0 {
		t.Fatal("the README has no scenario")
	}
}

// The README's first behavior in the forms behaves like its Lua twin.
func TestReadmeSchemeBehavior(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(string(data), "```scheme\n", 2)
	if len(parts) != 2 {
		t.Fatal("the README has no Scheme example")
	}
	program := parts[1][:strings.Index(parts[1], "```")]
	text := `name = "README careful.scm"
[config.bots.main]
behaviors = ["careful"]
ceiling = ["read"]
[programs]
"careful.scm" = '''
` + program + `'''
[host.tools."fs/read"]
effect = ["read"]
echo = true
[[step]]
op = "start"
instance = "a"
bot = "main"
[[step]]
op = "tool"
instance = "a"
path = "fs/read"
args = { path = "/etc/passwd" }
expect = { status = "refused", refused_by = "guard", reason = "absolute paths are not allowed", core_calls = 0 }
[[step]]
op = "tool"
instance = "a"
path = "fs/read"
args = { path = "notes.txt" }
expect = { status = "ok", core_calls = 1, floor = { args = { path = "notes.txt" }, marks = ["checked"] } }
[[step]]
op = "turn-begin"
instance = "a"
[[step]]
op = "round-begin"
instance = "a"
[[step]]
op = "round-end"
instance = "a"
expect = { notes = [{ kind = "ambient", text = "round 1 finished" }] }
`
	sc, err := scenario.Parse("README.md", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if res := scenario.Run(context.Background(), sc); !res.Passed {
		t.Errorf("the README's Scheme behavior fails:\n%s", res.Failure)
	}
}

// The README's host config, with the README's first Lua behavior in
// packs/mine, loads and starts its bot as written (a grant must name a
// method of a program the bot selects).
func TestReadmeConfig(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := func(fence, prefix string) string {
		for _, b := range strings.Split(string(data), fence)[1:] {
			if text := b[:strings.Index(b, "```")]; strings.HasPrefix(text, prefix) {
				return text
			}
		}
		t.Fatalf("the README has no %s block starting with %q", fence, prefix)
		return ""
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "packs", "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"attune.toml":            block("```toml\n", "# attune.toml"),
		"packs/mine/careful.lua": block("```lua\n", "-- packs/mine/careful.lua"),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "attune.toml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: store.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, bot := range cfg.BotOrder {
		if _, err := e.Start(ctx, engine.StartOptions{ID: "readme-" + bot, Bot: bot}); err != nil {
			t.Errorf("the README's config: bot %s does not start: %v", bot, err)
		}
	}
}

// The README's Claude Code example (its guard and owner in
// packs/mine/careful.lua, its attune.toml) answers Claude Code's events as
// its comments say: rm -rf denied, an edit noted to the model.
func TestReadmeClaudeExample(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(data)
	start := strings.Index(section, "## Use attune with Claude Code")
	if start < 0 {
		t.Fatal(`the README has no section "Use attune with Claude Code"`)
	}
	section = section[start:]
	block := func(fence string) string {
		parts := strings.SplitN(section, fence, 2)
		if len(parts) != 2 {
			t.Fatalf("the Claude Code section has no %s block", strings.TrimSpace(fence))
		}
		return parts[1][:strings.Index(parts[1], "```")]
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "packs", "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"attune.toml":            block("```toml\n"),
		"packs/mine/careful.lua": block("```lua\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var stderr strings.Builder
	rt, err := harness.Open(ctx, filepath.Join(dir, "attune.toml"), harness.Options{Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	d, _ := harness.Dialects("claude")
	answer := func(event string) string {
		ev, err := d.Parse([]byte(event))
		if err != nil {
			t.Fatal(err)
		}
		return string(d.Render(ev, rt.Handle(ctx, d, ev)))
	}
	answer(`{"hook_event_name":"UserPromptSubmit","session_id":"r","cwd":"/tmp","prompt":"go"}`)
	if a := answer(`{"hook_event_name":"PreToolUse","session_id":"r","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"rm -rf build"},"tool_use_id":"t1"}`); !strings.Contains(a, `"permissionDecision":"deny"`) || !strings.Contains(a, "no rm -rf here") {
		t.Errorf("rm -rf: %s (stderr %s)", a, stderr.String())
	}
	edit := `"session_id":"r","cwd":"/tmp","tool_name":"Edit","tool_input":{"file_path":"main.go","old_string":"a","new_string":"b"},"tool_use_id":"t2"`
	if a := answer(`{"hook_event_name":"PreToolUse",` + edit + `}`); strings.Contains(a, "deny") {
		t.Errorf("edit: %s (stderr %s)", a, stderr.String())
	}
	if a := answer(`{"hook_event_name":"PostToolUse",` + edit + `,"tool_response":{"filePath":"main.go"}}`); !strings.Contains(a, "noted the edit of main.go") {
		t.Errorf("edit's post hook: %s (stderr %s)", a, stderr.String())
	}
}

// The README's first screen: its behavior, installed as attune hook
// claude's, denies the Read it says it denies, with the reason it shows.
func TestReadmeFirstScreen(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if end := strings.Index(text, "## Contents"); end < 0 {
		t.Fatal("the README has no contents list")
	} else {
		text = text[:end]
	}
	parts := strings.SplitN(text, "```lua\n", 2)
	if len(parts) != 2 {
		t.Fatal("the README's first screen has no behavior")
	}
	program := parts[1][:strings.Index(parts[1], "```")]
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pack"), 0o755)
	os.WriteFile(filepath.Join(dir, "pack", "protect.lua"), []byte(program), 0o644)
	os.WriteFile(filepath.Join(dir, "attune.toml"), []byte("[engine]\npacks = [\"pack\"]\nstore = \"memory:\"\n[bots.main]\nbehaviors = [\"protect\"]\nceiling = [\"read\", \"write\", \"exec\", \"network\", \"spawn\"]\n[harness.claude]\nbot = \"main\"\n"), 0o644)
	ctx := context.Background()
	rt, err := harness.Open(ctx, filepath.Join(dir, "attune.toml"), harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	d, _ := harness.Dialects("claude")
	ev, err := d.Parse([]byte(`{"hook_event_name":"PreToolUse","session_id":"r","cwd":"/work","tool_name":"Read","tool_input":{"file_path":"/work/.env"},"tool_use_id":"t1"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(d.Render(ev, rt.Handle(ctx, d, ev)))
	want := `"permissionDecision":"deny","permissionDecisionReason":"protect: /work/.env holds secrets; ask the user for the value"`
	shown := `"permissionDecision": "deny", "permissionDecisionReason": "protect: /work/.env holds secrets; ask the user for the value"`
	if !strings.Contains(got, want) || !strings.Contains(string(data), shown) {
		t.Fatalf("answer %s, README says %s", got, want)
	}
}
