package engine_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// R9.1: a host builds an engine from a configuration, registers its tools, starts
// an instance and drives a turn through it.
func Example() {
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte(`
[engine]
store = "memory:"

[bots.main]
behaviors = ["polite"]
ceiling = ["read"]
`))
	if err != nil {
		panic(err)
	}
	// A pack of the host's own programs (usually a folder named in engine.packs).
	pack := fstest.MapFS{"polite.lua": {Data: []byte(`
guard.tool("fs/*", function(c, invoke)
  if c.args.path == "/etc/shadow" then return refuse("not that file") end
  return invoke()
end)
hook.round("end", function(b) notify("round " .. b.round .. " done", "ambient") end)
`)}}
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: store.NewMemory(),
		PacksFirst: []pin.Pack{{Name: "host", FS: pack}}})
	if err != nil {
		panic(err)
	}
	defer e.Close()
	e.RegisterTool(engine.HostTool{Path: "fs/read", Effects: []string{"read"},
		Core: func(ctx context.Context, c engine.CoreCall) (any, error) { return "contents", nil }})

	i, err := e.Start(ctx, engine.StartOptions{ID: "agent-1", Bot: "main"})
	if err != nil {
		panic(err)
	}
	i.BeginTurn(ctx, engine.TurnInput{Input: "read my notes"})
	i.BeginRound(ctx)
	fmt.Println(i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "notes.txt"}}).Result)
	out := i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "/etc/shadow"}})
	fmt.Println(out.Status, out.RefusedBy, out.Reason)
	end, _ := i.EndRound(ctx, engine.RoundEnd{})
	fmt.Println(end.Notes[0].Text, "continue:", end.Continue)
	i.EndTurn(ctx)
	// Output:
	// contents
	// refused guard not that file
	// round 1 done continue: false
}
