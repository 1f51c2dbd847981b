package scenario

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// careful refuses absolute paths, marks the rest, notes each round end;
// count keeps a session counter and a project tally.
const carefulLua = `guard.tool("fs/*", function(c, invoke)
  if c.args.path:sub(1, 1) == "/" then
    return refuse("absolute paths are not allowed")
  end
  return invoke()
end)

hook.round("end", function(b)
  notify("branch " .. tostring(admit.read("vcs/branch")), "ambient")
end)
`

const countLua = `define.reducer("tally", function(state, action)
  state.n = (state.n or 0) + action.by
  return state
end, {init = {n = 0}, scope = {"project"}})
define.method("tally", "add", function(ctx, state, input)
  propose({type = "add", by = input.by})
  return state.n + input.by
end, {kind = "command"})
`

// hostSession drives a session the way a Go host does and returns the
// engine (still open, on its store) and the session id.
func hostSession(t *testing.T) (*engine.Engine, *config.Config, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	pack := filepath.Join(dir, "pack")
	os.MkdirAll(pack, 0o755)
	os.WriteFile(filepath.Join(pack, "careful.lua"), []byte(carefulLua), 0o644)
	os.WriteFile(filepath.Join(pack, "count.lua"), []byte(countLua), 0o644)
	file := filepath.Join(dir, "attune.toml")
	os.WriteFile(file, []byte(`[engine]
store = "memory:"
packs = ["pack"]
project = "p1"
[floor]
refuse_marks = ["deny"]
[bots.main]
behaviors = ["careful", "count"]
ceiling = ["read"]
`), 0o644)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	branch := 0
	e, err := engine.New(ctx, engine.Options{Config: cfg, Read: func(_ context.Context, key string) (any, error) {
		branch++
		return []string{"main", "dev", "main"}[branch%3], nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	reads := 0
	e.RegisterTool(engine.HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c engine.CoreCall) (any, error) {
		reads++
		if reads == 2 {
			return nil, errors.New("disk full")
		}
		return "contents " + c.Args.(map[string]any)["path"].(string), nil
	}})
	// another session's work in the project owner, before this session
	other, err := e.Start(ctx, engine.StartOptions{ID: "other", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if out := other.Method(ctx, engine.MethodCall{Owner: "tally", Method: "add", Input: map[string]any{"by": 5.0}}); out.Status != "ok" {
		t.Fatal(out)
	}
	i, err := e.Start(ctx, engine.StartOptions{ID: "agent", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	i.Method(ctx, engine.MethodCall{Owner: "tally", Method: "add", Input: map[string]any{"by": 1.0}}) // outside a turn
	i.BeginTurn(ctx, engine.TurnInput{Input: "read two files"})
	i.BeginRound(ctx)
	i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "a.txt"}})
	i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "/etc/passwd"}})
	i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "b.txt"}})
	i.EndRound(ctx, engine.RoundEnd{HostContinue: true})
	i.BeginRound(ctx)
	i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "c.txt"}})
	i.Method(ctx, engine.MethodCall{Owner: "tally", Method: "add", Input: map[string]any{"by": 2.0}})
	i.EndRound(ctx, engine.RoundEnd{})
	i.EndTurn(ctx)
	return e, cfg, i.Session()
}

func record(t *testing.T, e *engine.Engine, cfg *config.Config, id string) *Scenario {
	t.Helper()
	ctx := context.Background()
	rec, err := engine.LoadSession(ctx, e.Store(), id)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Record(ctx, rec, RecordOptions{Config: cfg, Engine: e, Source: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Parse("recorded.toml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return sc
}

// A session a Go host drove, recorded, replays green; the same scenario
// with the guard changed fails at the step of the call it decides.
func TestRecordGoHost(t *testing.T) {
	e, cfg, sess := hostSession(t)
	sc := record(t, e, cfg, sess)
	res := Run(context.Background(), sc)
	if !res.Passed {
		t.Fatalf("the recorded scenario fails:\n%s", res.Failure)
	}
	var ops []string
	for _, s := range sc.Steps {
		ops = append(ops, stepLabel(s))
	}
	want := "start agent,method tally.add,turn-begin,round-begin,tool fs/read,tool fs/read,tool fs/read,round-end,round-begin,tool fs/read,method tally.add,round-end,turn-end"
	if strings.Join(ops, ",") != want {
		t.Errorf("steps\n got %s\nwant %s", strings.Join(ops, ","), want)
	}
	if len(sc.Owners) != 1 || sc.Owners[0].Owner != "tally@project" || len(sc.Owners[0].Entries) != 1 {
		t.Errorf("the project owner as the session found it: %+v", sc.Owners)
	}
	// the guard no longer refuses absolute paths: step 6 (the second tool call) diverges
	for k, p := range sc.Programs {
		if p.File == "careful.lua" {
			sc.Programs[k].Source = strings.Replace(p.Source, `== "/"`, `== "~"`, 1)
		}
	}
	res = Run(context.Background(), sc)
	if res.Passed || res.Fail == nil || res.Fail.Index != 6 || res.Fail.Op != "tool" {
		t.Fatalf("the changed guard: passed %v, fail %+v\n%s", res.Passed, res.Fail, res.Failure)
	}
	if !strings.Contains(res.Failure, "step 6 (tool): status: want refused, got failed (disk full)") {
		t.Errorf("failure:\n%s", res.Failure)
	}
}

func TestRecordBadInput(t *testing.T) {
	ctx := context.Background()
	e, cfg, sess := hostSession(t)
	st := e.Store()
	if _, err := engine.LoadSession(ctx, st, "nowhere"); !errors.Is(err, engine.ErrNoSession) || !strings.Contains(err.Error(), sess) {
		t.Errorf("a session that does not exist: %v", err)
	}
	// a journal from a newer engine: a turn stamped attune-99, an entry type never written
	log := session.LogName(sess, "agent")
	for _, line := range []string{`{"t":"turn-begin","turn":2,"status":"ok","engine":"attune-99"}`, `{"t":"floor-verdict-v9"}`} {
		if _, err := st.Append(ctx, log, store.Any, [][]byte{[]byte(line)}, nil); err != nil {
			t.Fatal(err)
		}
		_, err := engine.LoadSession(ctx, st, sess)
		if !errors.Is(err, engine.ErrNewerJournal) || !strings.Contains(err.Error(), "newer") {
			t.Errorf("newer journal %s: %v", line, err)
		}
		st.Truncate(ctx, log, 13) // back to what the host wrote
	}
	if _, err := engine.LoadSession(ctx, st, sess); err != nil {
		t.Fatalf("after truncating: %v", err)
	}
	// a pinned source gone from the store
	rec, _ := engine.LoadSession(ctx, st, sess)
	sha := rec.Instances[0].Pin.Programs[0].SHA256
	st.DeleteBlob(ctx, sha)
	_, err := Record(ctx, rec, RecordOptions{Config: cfg, Engine: e})
	if err == nil || !strings.Contains(err.Error(), "careful") || !strings.Contains(err.Error(), "not in the store") {
		t.Errorf("missing source: %v", err)
	}
	// the pin blob of the first turn gone
	var pinSHA string
	for _, en := range rec.Instances[0].Entries {
		if en.Type == session.TurnBegin {
			pinSHA = en.Pin
		}
	}
	st.DeleteBlob(ctx, pinSHA)
	if _, err := engine.LoadSession(ctx, st, sess); !errors.Is(err, engine.ErrPinMissing) || !strings.Contains(err.Error(), pinSHA) {
		t.Errorf("missing pin: %v", err)
	}
}

func TestAnswersAndOwnersKeys(t *testing.T) {
	src := `name = "answers"
[config.engine]
project = "p"
[config.bots.main]
behaviors = ["count", "peek"]
ceiling = ["read"]
[programs]
"count.lua" = '''
` + countLua + `'''
"peek.lua" = '''
define.tool("peek", function(ctx, args) return admit.read("k") end)
'''
[owners."tally@project"]
entries = [{rev = 1, action = {type = "add", by = 40}}]
[host.read_answers]
k = [{value = "one"}, {fail = "no more"}, {}]
[host.reads]
k = "fallback"
[host.tools."fs/read"]
effect = ["read"]
answers = [{result = "a"}, {fail = "disk full"}]
[[step]]
op = "start"
[[step]]
op = "tool"
path = "fs/read"
expect.result = "a"
[[step]]
op = "tool"
path = "fs/read"
expect = {status = "failed", error = "disk full"}
[[step]]
op = "tool"
path = "fs/read"
expect = {status = "failed", error = "every answer of the scenario was given (2)"}
[[step]]
op = "tool"
path = "peek"
expect.result = "one"
[[step]]
op = "tool"
path = "peek"
expect = {status = "failed", error = "no more"}
[[step]]
op = "tool"
path = "peek"
expect = {status = "ok"}
[[step]]
op = "tool"
path = "peek"
expect.result = "fallback"
[[step]]
op = "method"
owner = "tally"
method = "add"
input = {by = 2}
expect = {result = 42, revision = 2}
`
	if res := Run(context.Background(), parse(t, "a.toml", src)); !res.Passed {
		t.Fatal(res.Failure)
	}
	for bad, want := range map[string]string{
		`answers = [{result = 1, fail = "x"}]`: "give result or fail, not both",
		`answers = [{value = 1}]`:              "answers[0]: unknown key value",
	} {
		_, err := Parse("b.toml", []byte(strings.Replace(src, `answers = [{result = "a"}, {fail = "disk full"}]`, bad, 1)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	_, err := Parse("c.toml", []byte(strings.Replace(src, `[owners."tally@project"]`, `[owners."tally"]`, 1)))
	if err == nil || !strings.Contains(err.Error(), "owners.tally: only project and global owners are seeded") {
		t.Errorf("a session owner seed: %v", err)
	}
}
