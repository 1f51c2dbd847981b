package tests

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// probeLua checks everything a handler receives: every value it is handed,
// and every value inside it, is plain data (nil, boolean, number, string,
// table), never a Go value (userdata), a coroutine or a function.
const probeLua = `
local function plain(v, where, depth)
  local t = type(v)
  if t == "userdata" or t == "thread" or t == "function" then
    error(where .. " is a " .. t)
  end
  if t == "table" and depth < 8 then
    for k, x in pairs(v) do
      plain(k, where .. " key", depth + 1)
      plain(x, where .. "." .. tostring(k), depth + 1)
    end
  end
end

guard.turn(function(b, invoke) plain(b, "turn boundary", 0); return invoke() end)
guard.tool("fs/*", function(call, invoke)
  plain(call, "call", 0)
  local out = invoke()
  plain(out, "outcome", 0)
  return out
end)
hook.tool("fs/*", {
  pre = function(call) plain(call, "pre call", 0) end,
  post = function(call, out)
    plain(out, "post outcome", 0)
    return "post saw " .. tostring(out.result.name) .. " at " .. tostring(out.result.path)
  end,
})
hook.round("end", function(b)
  plain(b, "round boundary", 0)
  local v = admit.read("host/object")
  plain(v, "delivery", 0)
  notify("VERSION sees " .. tostring(v.name), "ambient")
end)
define.tool("probe/echo", function(ctx, args)
  plain(ctx, "tool ctx", 0); plain(args, "tool args", 0)
  return args
end, {effect = {"read"}})
define.reducer("counter", function(s, a)
  plain(s, "state", 0); plain(a, "action", 0)
  s.n = s.n + a.by
  return s
end, {init = {n = 0}})
define.method("counter", "add", function(ctx, s, input)
  plain(ctx, "method ctx", 0); plain(s, "method state", 0); plain(input, "input", 0)
  propose({type = "add", by = input.by})
  return s.n + input.by
end, {kind = "command", input = {by = "number"}})
`

type hostObject struct {
	Name string  `json:"name"`
	Path *string `json:"path"`
	Size int     `json:"size"`
}

// R9.1: a host in Go drives every part of the API from outside the engine's
// package: an engine built from a configuration, an instance, turns and
// rounds, tool calls (a host tool and a defined one), a method call, a
// spawned child, a re-attunement, a replay and a hydration. The host hands
// the engine Go values (a struct pointer as a tool's result and as a
// delivery); no handler ever sees a Go value, only plain data.
func TestHostAPI(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte(`
[engine]
store = "memory:"

[bots.main]
behaviors = ["probe"]
ceiling = ["read"]

[bots.worker]
behaviors = ["probe"]
ceiling = ["read"]
`))
	if err != nil {
		t.Fatal(err)
	}
	pack := fstest.MapFS{"probe.lua": {Data: []byte(strings.Replace(probeLua, "VERSION", "v1", 1))}}
	where := "notes.txt"
	reads := 0
	e, err := engine.New(ctx, engine.Options{
		Config:     cfg,
		Store:      store.NewMemory(),
		PacksFirst: []pin.Pack{{Name: "host", FS: pack}},
		Read: func(ctx context.Context, key string) (any, error) {
			reads++
			return &hostObject{Name: "repo", Path: &where, Size: 3}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cores := 0
	if err := e.RegisterTool(engine.HostTool{Path: "fs/read", Effects: []string{"read"},
		Core: func(ctx context.Context, c engine.CoreCall) (any, error) {
			cores++
			return &hostObject{Name: "notes", Path: &where, Size: 5}, nil
		}}); err != nil {
		t.Fatal(err)
	}

	i, err := e.Start(ctx, engine.StartOptions{ID: "agent", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	ok := func(r engine.BoundaryResult, err error) engine.BoundaryResult {
		t.Helper()
		if err != nil || r.Status != "ok" {
			t.Fatalf("a boundary: %+v, %v", r, err)
		}
		return r
	}
	ok(i.BeginTurn(ctx, engine.TurnInput{Input: "read my notes"}))
	ok(i.BeginRound(ctx))
	out := i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "notes.txt"}})
	if out.Status != "ok" || cores != 1 {
		t.Fatalf("fs/read: %+v (cores %d)", out, cores)
	}
	// The core's struct reached the hooks as a table of its fields.
	if len(out.Diagnostics) != 1 || out.Diagnostics[0] != "post saw notes at notes.txt" {
		t.Errorf("fs/read's diagnostics: %q", out.Diagnostics)
	}
	echo := i.Tool(ctx, engine.ToolCall{Path: "probe/echo", Args: map[string]any{"a": []any{1, "b"}}})
	if echo.Status != "ok" {
		t.Fatalf("probe/echo: %+v", echo)
	}
	add := i.Method(ctx, engine.MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 2}})
	if add.Status != "ok" || add.Revision != 1 {
		t.Fatalf("counter.add: %+v", add)
	}
	end := ok(i.EndRound(ctx, engine.RoundEnd{}))
	if len(end.Notes) != 1 || end.Notes[0].Text != "v1 sees repo" || end.Continue {
		t.Fatalf("round end: %+v", end)
	}
	ok(i.EndTurn(ctx))

	// A spawned child: its own session, the same program, its own registry.
	child, err := i.Spawn(ctx, engine.SpawnOptions{ID: "agent/worker", Bot: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	if child.Session() == i.Session() || child.Bot() != "worker" {
		t.Errorf("child: session %s (parent %s), bot %s", child.Session(), i.Session(), child.Bot())
	}
	if c := child.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "x"}}); c.Status != "ok" {
		t.Errorf("child's fs/read: %+v", c)
	}

	// Re-attunement: the program changes on disk; the instance takes it at
	// its next turn.
	before := i.Pin().Programs[0].SHA256
	pack["probe.lua"] = &fstest.MapFile{Data: []byte(strings.Replace(probeLua, "VERSION", "v2", 1))}
	if err := i.Attune(ctx); err != nil {
		t.Fatal(err)
	}
	ok(i.BeginTurn(ctx, engine.TurnInput{Input: "again"}))
	if i.Pin().Programs[0].SHA256 == before {
		t.Error("the next turn after attune runs the old source")
	}
	ok(i.BeginRound(ctx))
	end = ok(i.EndRound(ctx, engine.RoundEnd{}))
	if len(end.Notes) != 1 || end.Notes[0].Text != "v2 sees repo" {
		t.Fatalf("turn 2 round end: %+v", end)
	}
	ok(i.EndTurn(ctx))

	// Replay answers the host's reads and cores from the journal.
	readsBefore, coresBefore := reads, cores
	rep, err := i.Replay(ctx)
	if err != nil || len(rep.Diverged) != 0 || rep.Steps == 0 {
		t.Fatalf("replay: %+v, %v", rep, err)
	}
	if reads != readsBefore || cores != coresBefore {
		t.Errorf("the replay called the host: reads %d -> %d, cores %d -> %d", readsBefore, reads, coresBefore, cores)
	}
	// Hydration rebuilds the session from its journal; owners keep their state.
	if err := i.Hydrate(ctx); err != nil {
		t.Fatal(err)
	}
	state, rev, err := i.State(ctx, "counter")
	if err != nil || rev != 1 {
		t.Fatalf("counter after hydrate: %v rev %d, %v", state, rev, err)
	}
	if m, isMap := state.(map[string]any); !isMap || m["n"] != float64(2) && m["n"] != int64(2) && m["n"] != 2 {
		t.Errorf("counter's state: %#v", state)
	}
}
