package engine

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

const externalProg = `
guard.tool("sh/run", function(call, invoke)
  if call.args.cmd == "rm -rf /" then return refuse("not that") end
  if call.args.cmd == "ask" then mark(call, "ask") end
  local out = invoke({cmd = call.args.cmd .. " --safe"})
  seen = out.status
  return out
end)
hook.tool("sh/run", {
  pre = function(call) notify("pre " .. call.args.cmd) end,
  post = function(call, out) return "post " .. call.args.cmd .. " -> " .. tostring(out.result) .. " marks " .. #call.marks .. " seen " .. tostring(seen) end,
  post_fail = function(call, f) notify("failed " .. call.args.cmd .. ": " .. f.error) end,
})
`

// Two engines on one SQLite file stand for two hook processes: the first
// opens the call, the second completes it (R4.3, R4.5, R4.7, R4.8).
func TestToolBeginEndAcrossEngines(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "state.db")
	open := func() (*Engine, *Instance) {
		cfg, err := config.Parse("attune.toml", []byte(chainCfg))
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(ctx, "sqlite", db)
		if err != nil {
			t.Fatal(err)
		}
		e := testEngine(t, chainCfg, map[string]string{"g.lua": externalProg}, func(o *Options) { o.Config, o.Store = cfg, st })
		t.Cleanup(func() { st.Close() })
		e.RegisterTool(HostTool{Path: "sh/run", Effects: []string{"read"}, Core: func(context.Context, CoreCall) (any, error) {
			t.Error("the core ran inside the process")
			return nil, nil
		}})
		i, err := e.Start(ctx, StartOptions{ID: "s1", Bot: "main"})
		if err != nil {
			t.Fatal(err)
		}
		return e, i
	}
	_, a := open()
	if _, err := a.BeginTurn(ctx, TurnInput{Input: "go"}); err != nil {
		t.Fatal(err)
	}
	op := a.ToolBegin(ctx, ToolCall{Path: "sh/run", Args: map[string]any{"cmd": "ls"}}, "tu1")
	if op.Status != StatusPending || !reflect.DeepEqual(op.Args, map[string]any{"cmd": "ls --safe"}) {
		t.Fatalf("begin: %+v", op)
	}
	ref := a.ToolBegin(ctx, ToolCall{Path: "sh/run", Args: map[string]any{"cmd": "rm -rf /"}}, "tu2")
	if ref.Status != StatusRefused || ref.Reason != "not that" || ref.Args != nil {
		t.Fatalf("refusal: %+v", ref)
	}
	ask := a.ToolBegin(ctx, ToolCall{Path: "sh/run", Args: map[string]any{"cmd": "ask"}}, "tu3")
	if ask.Status != StatusPending || !reflect.DeepEqual(ask.Marks, []string{"ask"}) {
		t.Fatalf("marks: %+v", ask)
	}
	a.Stop()

	_, b := open() // another process
	out, err := b.ToolEnd(ctx, ToolCall{Path: "sh/run"}, "tu1", "files", "")
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusOK || out.CallID != op.CallID || !reflect.DeepEqual(out.Diagnostics, []string{"post ls --safe -> files marks 0 seen nil"}) {
		t.Fatalf("end: %+v (opened as %s)", out, op.CallID)
	}
	// the same key again: the call is closed, so this one is a call of its own
	again, err := b.ToolEnd(ctx, ToolCall{Path: "sh/run", Args: map[string]any{"cmd": "x"}}, "tu1", "r", "")
	if !errors.Is(err, ErrNoOpenCall) || again.CallID == op.CallID || again.Status != StatusOK {
		t.Fatalf("second end: %+v, %v", again, err)
	}
	failed, err := b.ToolEnd(ctx, ToolCall{Path: "sh/run"}, "tu3", nil, "exit 1")
	if err != nil || failed.Status != StatusFailed || failed.CallID != ask.CallID {
		t.Fatalf("failure: %+v, %v", failed, err)
	}
	res, err := b.BeginRound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, n := range res.Notes {
		texts = append(texts, n.Text)
	}
	want := []string{"pre ls --safe", "pre ask --safe", "failed ask --safe: exit 1"}
	if !reflect.DeepEqual(texts, want) {
		t.Fatalf("notes %q, want %q", texts, want)
	}
}

// A guard sees invoke's pending outcome in this mode.
func TestToolBeginInvokeIsPending(t *testing.T) {
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
guard.tool("sh/run", function(call, invoke)
  local out = invoke()
  if out.status == "pending" then return refuse("saw pending") end
  return out
end)`})
	e.RegisterTool(echoTool("sh/run", "read"))
	i := start(t, e, "a", "main")
	op := i.ToolBegin(context.Background(), ToolCall{Path: "sh/run", Args: map[string]any{}}, "k")
	if op.Status != StatusRefused || op.Reason != "saw pending" {
		t.Fatalf("%+v", op)
	}
}
