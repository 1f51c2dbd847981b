package inspect

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/harness"
	"github.com/attune-dev/attune/store"
)

// A project as a Claude Code user has it: a guard refusing .env files, a
// turn-start hook that notifies and logs.
const projectTOML = `
[engine]
packs = ["pack"]

[bots.main]
behaviors = ["protect"]
ceiling = ["read", "write", "exec", "network", "spawn"]

[harness.claude]
bot = "main"
`

const protectLua = `
guard.tool("claude/*", function(call, invoke)
  local p = call.args.file_path or ""
  if string.find(p, "%.env$") then
    return refuse("protect: " .. p .. " holds secrets")
  end
  return invoke()
end)

hook.turn("start", function(b)
  log("info", "turn starts")
  notify("Mind the secrets in .env files.")
end)
`

// recordSession runs three Claude Code events through attune hook on a
// fresh store: a prompt, a Read of .env (denied) and a Read of a.txt.
func recordSession(t testing.TB, st store.Store) *config.Config {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pack"), 0o755)
	os.WriteFile(filepath.Join(dir, "pack", "protect.lua"), []byte(protectLua), 0o644)
	os.WriteFile(filepath.Join(dir, "attune.toml"), []byte(projectTOML), 0o644)
	cfg, err := config.Load(filepath.Join(dir, "attune.toml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := harness.New(ctx, cfg, harness.Options{Store: st, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	d, _ := harness.Dialects("claude")
	for _, ev := range []string{
		`{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"read the config"}`,
		`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/.env"},"tool_use_id":"tu1"}`,
		`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.txt"},"tool_use_id":"tu2"}`,
		`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.txt"},"tool_response":"hello","tool_use_id":"tu2"}`,
	} {
		e, err := d.Parse([]byte(ev))
		if err != nil {
			t.Fatal(err)
		}
		rt.Handle(ctx, d, e)
	}
	return cfg
}

// The timeline of a recorded session names the denied call, the guard
// that denied it and its reason, and the note that reached the model
// (R4.11, R3.4).
func TestTimelineDeniedCall(t *testing.T) {
	st := store.NewMemory()
	recordSession(t, st)
	ctx := context.Background()
	list, err := Sessions(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Session != "claude/s1/s1" || len(list[0].Instances) != 1 || list[0].Instances[0].ID != "claude/s1" {
		t.Fatalf("sessions %+v", list)
	}
	tl, err := Load(ctx, st, "claude/s1")
	if err != nil {
		t.Fatal(err)
	}
	data, err := tl.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Session string
		Summary map[string]int
		Total   int
		Events  []map[string]any
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range got.Events {
		kinds = append(kinds, ev["kind"].(string))
	}
	if w := "turn trace note round call call"; strings.Join(kinds, " ") != w {
		t.Fatalf("kinds %s, want %s", strings.Join(kinds, " "), w)
	}
	denied := got.Events[4]
	delete(denied, "call_id")
	want := map[string]any{
		"seq": 4.0, "instance": "claude/s1", "kind": "call", "turn": 1.0, "round": 1.0,
		"path": "claude/Read", "tool_use_id": "tu1", "input": map[string]any{"file_path": "/p/.env"},
		"status": "refused", "refused_by": "guard", "refused_at": "protect.lua:2",
		"reason": "protect: /p/.env holds secrets",
		"chain": []any{
			map[string]any{"step": "ceiling", "verdict": "pass", "recorded": false},
			map[string]any{"step": "guards", "verdict": "refuse", "at": "protect.lua:2", "reason": "protect: /p/.env holds secrets", "recorded": true,
				"guards": []any{map[string]any{"at": "protect.lua:2", "pattern": "claude/*", "verdict": "refuse", "reason": "protect: /p/.env holds secrets"}}},
			map[string]any{"step": "outcome", "verdict": "refused", "reason": "protect: /p/.env holds secrets", "recorded": true},
		},
	}
	if !reflect.DeepEqual(denied, want) {
		a, _ := json.MarshalIndent(denied, "", " ")
		t.Fatalf("denied call:\n%s", a)
	}
	note := got.Events[2]["note"].(map[string]any)
	delete(note, "id")
	if w := map[string]any{"kind": "ambient", "text": "Mind the secrets in .env files.", "program": "protect", "phase": "turn/start",
		"state": "consumed", "reached_model": true, "consumed_at": "turn 1 round 1"}; !reflect.DeepEqual(note, w) {
		t.Fatalf("note %v", note)
	}
	tr := got.Events[1]
	if tr["level"] != "info" || tr["text"] != "turn starts" || tr["program"] != "protect" {
		t.Fatalf("trace %v", tr)
	}
	allowed := got.Events[5]
	if allowed["status"] != "ok" || allowed["result"] != "hello" || allowed["open"] != nil {
		t.Fatalf("allowed call %v", allowed)
	}
	if got.Summary["calls"] != 2 || got.Summary["refused"] != 1 || got.Summary["consumed"] != 1 || got.Summary["traces"] != 1 {
		t.Fatalf("summary %v", got.Summary)
	}
	p := tl.Page(4, 1)
	if p.Total != 6 || len(p.Events) != 1 || p.Events[0].RefusedAt != "protect.lua:2" {
		t.Fatalf("page %+v", p)
	}
}

// A recorded session replays against its pin as it ran: no divergence.
func TestReplayOnRecordedSession(t *testing.T) { // R3.10
	st := store.NewMemory()
	cfg := recordSession(t, st)
	ctx := context.Background()
	tl, err := Load(ctx, st, "claude/s1")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := st.Length(ctx, "journal/claude/s1/s1/claude/s1")
	rep, err := ReplayOn(ctx, cfg, st, tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.FirstDivergence != "" || len(rep.Instances) != 1 || rep.Instances[0].Steps == 0 || rep.Instances[0].Error != "" {
		t.Fatalf("replay %+v", rep)
	}
	if after, _ := st.Length(ctx, "journal/claude/s1/s1/claude/s1"); after != before || before == 0 {
		t.Fatalf("the replay changed the journal: %d -> %d entries", before, after)
	}
}

// JSON encodes a long timeline on several goroutines exactly as
// json.Marshal does.
func TestTimelineJSONAsMarshal(t *testing.T) {
	for _, n := range []int{0, 3, 10_001} {
		tl := &Timeline{Session: "s", Instances: []Instance{{ID: "a"}}, Events: make([]Event, n)}
		for k := range tl.Events {
			tl.Events[k] = Event{Seq: k, Kind: KindCall, Path: "fs/<read>", Input: map[string]any{"k": k}, Chain: []Step{{Step: "core", Verdict: "ok"}}}
		}
		got, err := tl.JSON()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(tl)
		if string(got) != string(want) {
			t.Fatalf("%d events: JSON differs from json.Marshal (%d vs %d bytes)", n, len(got), len(want))
		}
	}
}
