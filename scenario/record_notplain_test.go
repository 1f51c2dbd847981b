package scenario

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
)

// R3.10: a session in which a Go host handed values with no JSON form (a
// turn input, a tool's arguments, a core's result) records to a scenario
// that replays green: the calls refused before they ran are left out, the
// core's failed answer is the fake host's answer.
func TestRecordNotPlain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pack := filepath.Join(dir, "pack")
	os.MkdirAll(pack, 0o755)
	os.WriteFile(filepath.Join(pack, "careful.lua"), []byte(carefulLua), 0o644)
	file := filepath.Join(dir, "attune.toml")
	os.WriteFile(file, []byte("[engine]\nstore = \"memory:\"\npacks = [\"pack\"]\n[bots.main]\nbehaviors = [\"careful\"]\nceiling = [\"read\"]\n"), 0o644)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, engine.Options{Config: cfg, Read: func(context.Context, string) (any, error) { return "main", nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	e.RegisterTool(engine.HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c engine.CoreCall) (any, error) {
		if c.Args.(map[string]any)["path"] == "nan.txt" {
			return map[string]any{"size": math.NaN()}, nil
		}
		return "contents", nil
	}})
	i, err := e.Start(ctx, engine.StartOptions{ID: "agent", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := i.BeginTurn(ctx, engine.TurnInput{Input: math.Inf(1)}); engine.CodeOf(err) != engine.CodeNotPlain {
		t.Fatalf("BeginTurn: %v", err)
	}
	i.BeginTurn(ctx, engine.TurnInput{Input: "read"})
	i.BeginRound(ctx)
	i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "a.txt", "n": math.NaN()}})
	if out := i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "nan.txt"}}); engine.CodeOf(out.Err) != engine.CodeNotPlain {
		t.Fatalf("core result: %+v", out)
	}
	i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "b.txt"}})
	i.EndRound(ctx, engine.RoundEnd{})
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	sc := record(t, e, cfg, i.Session())
	var ops []string
	for _, s := range sc.Steps {
		ops = append(ops, stepLabel(s))
	}
	if want := "start agent,turn-begin,round-begin,tool fs/read,tool fs/read,round-end,turn-end"; strings.Join(ops, ",") != want {
		t.Errorf("steps\n got %s\nwant %s", strings.Join(ops, ","), want)
	}
	if res := Run(ctx, sc); !res.Passed {
		t.Fatalf("the recorded scenario fails:\n%s", res.Failure)
	}
}
