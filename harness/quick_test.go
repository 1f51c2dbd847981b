package harness

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/session"
)

const quickProg = `
guard.tool("claude/Bash", function(call, invoke) return invoke() end)
hook.tool("mcp/files/*", {post = function(call, out) return "seen " .. call.path end})
`

// quickEvent is a Claude Code tool event of session s.
func quickEvent(t *testing.T, name, tool, id string) Event {
	t.Helper()
	ev, err := Claude().Parse([]byte(`{"hook_event_name":"` + name + `","session_id":"s","tool_name":"` + tool + `","tool_use_id":"` + id + `","tool_input":{"x":1},"tool_response":{"ok":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// A tool event that nothing of the session's pin can see is answered
// without the store, with the answer the full path gives, and journals
// nothing; a tool a guard or hook matches, a tool outside the ceiling, an
// instance never seen, a replaced store take the full path.
func TestQuickAnswer(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": quickProg})
	ctx := context.Background()
	cfg := r.cfg
	quick := func(ev Event) bool {
		t.Helper()
		a, ok := Quick(ctx, cfg, Claude(), ev)
		if ok && !reflect.DeepEqual(a, Answer{}) {
			t.Fatalf("quick answer %+v, want no decision", a)
		}
		return ok
	}
	read := quickEvent(t, "PreToolUse", "Read", "t1")
	if quick(read) {
		t.Fatal("quick before any event of the session was handled")
	}
	send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`)
	for _, c := range []struct {
		ev   Event
		want bool
	}{
		{read, true},
		{quickEvent(t, "PostToolUse", "Read", "t1p"), true},
		{quickEvent(t, "PostToolUseFailure", "Read", "t1f"), true},
		{quickEvent(t, "PreToolUse", "mcp__other__get", "t2"), true},
		{quickEvent(t, "PreToolUse", "Bash", "t3"), false},              // a guard matches
		{quickEvent(t, "PostToolUse", "mcp__files__read", "t4"), false}, // a hook matches
		{quickEvent(t, "PreToolUse", "WebFetch", "t5"), false},          // network is outside the ceiling
		{Event{Kind: Prompt, Name: "UserPromptSubmit", Session: "s"}, false},
		{Event{Kind: ToolPre, Name: "PreToolUse", Session: "s", Tool: "Read", AgentID: "a1"}, false}, // a subagent never seen
	} {
		if got := quick(c.ev); got != c.want {
			t.Errorf("%s %s: quick %v, want %v", c.ev.Name, c.ev.Tool, got, c.want)
		}
		if c.want { // the full path answers the same
			if a := r.Handle(ctx, Claude(), c.ev); !reflect.DeepEqual(a, Answer{}) {
				t.Errorf("%s %s: the full path answers %+v", c.ev.Name, c.ev.Tool, a)
			}
		}
	}
	// the full path above answered PreToolUse t1 and left the call open:
	// its PostToolUse completes it on the full path too
	if quick(quickEvent(t, "PostToolUse", "Read", "t1")) {
		t.Fatal("quick PostToolUse of a call its PreToolUse left open")
	}
	// the reach names the store file it was taken on
	store := storeFile(cfg)
	if err := os.Rename(store, store+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(store+".old", store); err != nil {
		t.Fatal(err)
	}
	if !quick(read) {
		t.Fatal("a hard link of the same file is the same store")
	}
	data, _ := os.ReadFile(store + ".old")
	os.Remove(store)
	os.WriteFile(store, data, 0o600)
	if quick(read) {
		t.Fatal("quick on a store file that was replaced")
	}
}

// Boundary hooks need an open turn and round: a tool event after the Stop
// would open a turn (running its hooks), so it takes the full path; an
// event that fails leaves no reach behind.
func TestQuickBoundaries(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": `hook.turn("start", function(b) notify("hello") end)`})
	ctx := context.Background()
	read := quickEvent(t, "PreToolUse", "Read", "t1")
	send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`)
	if _, ok := Quick(ctx, r.cfg, Claude(), read); !ok {
		t.Fatal("no quick answer in an open round")
	}
	send(t, r, `{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"done"}`)
	if _, ok := Quick(ctx, r.cfg, Claude(), read); ok {
		t.Fatal("quick answer with no turn open, where the full path opens one")
	}
	if a := r.Handle(ctx, Claude(), read); a.Context != "hello" {
		t.Fatalf("the full path: %+v, want the turn's note", a)
	}
	if _, ok := Quick(ctx, r.cfg, Claude(), read); !ok {
		t.Fatal("no quick answer once the tool event opened a turn")
	}
	send(t, r, `{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"t9"}`) // no tool_name: fails
	if _, err := os.Stat(reachName(r.dir, "claude/s")); !os.IsNotExist(err) {
		t.Fatalf("a failed event left its reach: %v", err)
	}
	if _, ok := Quick(ctx, r.cfg, Claude(), read); ok {
		t.Fatal("quick answer after a failed event")
	}
}

// A configuration that no longer finds a program is the full path's to
// report (it denies the call, failing closed).
func TestQuickBrokenConfig(t *testing.T) {
	r, _ := setup(t, mainBot, map[string]string{"p.lua": quickProg})
	send(t, r, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`)
	read := quickEvent(t, "PreToolUse", "Read", "t1")
	if _, ok := Quick(context.Background(), r.cfg, Claude(), read); !ok {
		t.Fatal("no quick answer")
	}
	os.Remove(filepath.Join(r.cfg.Dir, "packs", "p", "p.lua"))
	if _, ok := Quick(context.Background(), r.cfg, Claude(), read); ok {
		t.Fatal("quick answer with a program missing")
	}
}

// As a process: the quick answer journals nothing, the full one does.
func TestQuickProcess(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "packs", "p", "p.lua"), []byte(quickProg), 0o644)
	cfgPath := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfgPath, []byte("[engine]\npacks = [\"packs/p\"]\n"+mainBot), 0o644)
	runHook(t, cfgPath, map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "go"})
	for _, tool := range []string{"Read", "Bash"} {
		if a := runHook(t, cfgPath, map[string]any{"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": tool, "tool_use_id": "id-" + tool, "tool_input": map[string]any{}}); len(a) != 0 {
			t.Errorf("%s: %v, want no decision", tool, a)
		}
	}
	entries := journalOf(t, cfgPath, "s")
	opened := map[string]bool{}
	for _, en := range entries {
		if en.Type == "tool-open" {
			opened[en.Key] = true
		}
	}
	if !opened["id-Bash"] || opened["id-Read"] {
		t.Fatalf("journaled calls %v: want id-Bash (a guard saw it), not id-Read (answered quick)", opened)
	}
}

// journalOf reads the journal of session sess's main instance as the
// store of the configuration at cfgPath keeps it, after the hook
// processes have exited.
func journalOf(t *testing.T, cfgPath, sess string) []session.Entry {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inst, err := r.instance(context.Background(), Claude(), cfg.Hook("claude"), Event{Session: sess})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop()
	entries, err := session.OpenJournal(r.e.Store(), inst.Session(), inst.ID()).Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
