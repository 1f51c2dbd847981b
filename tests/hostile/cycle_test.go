package hostile

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"attune/config"
	"attune/engine"
	"attune/pin"
	"attune/store"
)

// R1.11: a self-referencing map an embedding host hands the engine (a
// tool's arguments, a method's input) never crashes it: a guard that reads
// it fails with the nesting error, a method refuses it as not storable
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
		if out := i.Method(ctx, engine.MethodCall{Owner: "g", Method: "put", Input: cyclic}); out.Status != engine.StatusRefused || !strings.Contains(out.Reason, "not storable") {
			t.Errorf("in turn %v: method with a cyclic input: %+v", inTurn, out)
		}
		if out := i.Tool(ctx, engine.ToolCall{Path: "fs/plain", Args: "x"}); out.Status != engine.StatusOK {
			t.Errorf("in turn %v: the instance no longer serves: %+v", inTurn, out)
		}
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatalf("the session's journal: %v", err)
	}
	// A tool call's arguments are journaled as given: one the journal
	// cannot write fails the next boundary with an error naming the
	// entry and why, and the store keeps the journal before it.
	if _, err := i.BeginTurn(ctx, engine.TurnInput{}); err != nil {
		t.Fatal(err)
	}
	if out := i.Tool(ctx, engine.ToolCall{Path: "fs/guarded", Args: cyclic}); out.Status != engine.StatusFailed || !strings.Contains(out.Error, "nested deeper than 64") {
		t.Errorf("guarded call with a cyclic argument: %+v", out)
	}
	if _, err := i.EndTurn(ctx); err == nil || !strings.Contains(err.Error(), `entry "tool"`) || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("end of a turn whose tool call could not be journaled: %v", err)
	}
}
