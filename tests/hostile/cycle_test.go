package hostile

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// R1.11: a self-referencing map an embedding host hands the engine (a
// tool's arguments, a method's input) never crashes it: outside a turn a
// guard that reads it fails with the nesting error; in a turn the call
// fails not-plain before it runs; a method refuses it as not storable
// (journaled without it), and the engine goes on serving the instance.
func TestCyclicHostValues(t *testing.T) {
	cfg, err := config.Parse("attune.toml", []byte(`[bots.main]
behaviors = ["g"]
ceiling = ["read"]
`))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"g.lua": {Data: []byte(`
guard.tool("fs/guarded", function(c, invoke) local _ = c.args.x return invoke() end)
define.reducer("g", function(s) return s end, {init = {}, scope = {"session"}})
define.method("g", "put", function(ctx, state, input) return "took" end, {kind = "query"})`)}}
	e, err := engine.New(context.Background(), engine.Options{Config: cfg, Store: store.NewMemory(),
		PacksFirst: []pin.Pack{{Name: "hostile", FS: fsys}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, p := range []string{"fs/plain", "fs/guarded"} {
		e.RegisterTool(engine.HostTool{Path: p, Effects: []string{"read"},
			Core: func(context.Context, engine.CoreCall) (any, error) { return "done", nil }})
	}
	ctx := context.Background()
	i, err := e.Start(ctx, engine.StartOptions{ID: "cyc", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	cyclic := map[string]any{"x": 1.0}
	cyclic["self"] = cyclic
	for _, inTurn := range []bool{false, true} {
		if inTurn {
			if _, err := i.BeginTurn(ctx, engine.TurnInput{}); err != nil {
				t.Fatal(err) // the refused method before was journaled without its input
			}
		}
		if out := i.Method(ctx, engine.MethodCall{Owner: "g", Method: "put", Input: cyclic}); out.Status != engine.StatusRefused || !strings.Contains(out.Reason, "not storable: a cycle") || !strings.Contains(out.Reason, "at key path input.self.self") {
			t.Errorf("in turn %v: method with a cyclic input: %+v", inTurn, out)
		}
		if out := i.Tool(ctx, engine.ToolCall{Path: "fs/plain", Args: "x"}); out.Status != engine.StatusOK {
			t.Errorf("in turn %v: the instance no longer serves: %+v", inTurn, out)
		}
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatalf("the session's journal: %v", err)
	}
	// R3.10: a tool call's arguments the journal cannot write fail that
	// call with not-plain before anything runs (the guard never sees them),
	// the failure is journaled, and the turn ends cleanly.
	if _, err := i.BeginTurn(ctx, engine.TurnInput{}); err != nil {
		t.Fatal(err)
	}
	if out := i.Tool(ctx, engine.ToolCall{Path: "fs/guarded", Args: cyclic}); out.Status != engine.StatusFailed || !errors.Is(out.Err, engine.ErrNotPlain) ||
		!strings.Contains(out.Error, "tool fs/guarded: the arguments are not plain data: a cycle") || !strings.Contains(out.Error, "args.self.self") {
		t.Errorf("guarded call with a cyclic argument: %+v", out)
	}
	if out := i.Tool(ctx, engine.ToolCall{Path: "fs/guarded", Args: map[string]any{"x": 1.0}}); out.Status != engine.StatusOK {
		t.Errorf("the next call: %+v", out)
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Errorf("end of a turn with a call whose arguments could not be journaled: %v", err)
	}
	rep, err := i.Replay(ctx)
	if err != nil || len(rep.Diverged) != 0 {
		t.Errorf("replay: %v %+v", err, rep.Diverged)
	}
}
