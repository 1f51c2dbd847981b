package engine

import (
	"context"
	"testing"
	"time"
)

// R4.6: a host core may commit its success (Commit) only when
// nothing after the core can change it: every guard passes the call on
// with "return invoke(...)", and no result guard or :post hook follows.
func TestCoreCommit(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"every guard returns invoke()", `
guard.tool("fs/*", function(c, invoke) return invoke() end)
guard.tool("fs/read", function(c, invoke) if c.args == "no" then return refuse("no") end return invoke(c.args) end)`, true},
		{"no guard, a pre hook", `hook.tool("fs/read", {pre = function(c) end})`, true},
		{"a guard that keeps invoke's outcome", `
guard.tool("fs/read", function(c, invoke) local out = invoke() return out end)`, false},
		{"one of two guards keeps it", `
guard.tool("fs/*", function(c, invoke) return invoke() end)
guard.tool("fs/read", function(c, invoke) local out = invoke() return out end)`, false},
		{"a post hook", `
guard.tool("fs/read", function(c, invoke) return invoke() end)
hook.tool("fs/read", {post = function(c, out) end})`, false},
		{"a result guard", `
guard.tool("fs/read", function(c, invoke) return invoke() end)
guard.result("fs/read", function(c, out) end)`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := testEngine(t, chainCfg, map[string]string{"g.lua": c.src})
			var committed []bool
			e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(ctx context.Context, _ CoreCall) (any, error) {
				committed = append(committed, Commit(ctx))
				return "ok", nil
			}})
			i := start(t, e, "a", "main")
			ctx := context.Background()
			if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "x"}); out.Status != StatusOK || out.Result != "ok" {
					t.Fatalf("got %+v", out)
				}
			}
			if len(committed) != 2 || committed[0] != c.want || committed[1] != c.want {
				t.Fatalf("Commit reported %v, want %v each call", committed, c.want)
			}
		})
	}
}

// R4.6: once the core committed its success, a guard whose callback is
// cancelled while it waited for the core (here: the host's context ends
// before the core returns) no longer fails the call: the host may have
// acted on the result already. Without a commit the same call fails.
func TestCommittedSuccessOutlivesCancellation(t *testing.T) {
	for _, commit := range []bool{true, false} {
		e := testEngine(t, chainCfg, map[string]string{"g.lua": `guard.tool("fs/read", function(c, invoke) return invoke() end)`})
		e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(ctx context.Context, cc CoreCall) (any, error) {
			if commit && !Commit(ctx) {
				t.Error("the chain did not commit")
			}
			cancel := ctx.Value(cancelKey{}).(context.CancelFunc)
			cancel()
			time.Sleep(20 * time.Millisecond) // the guard's callback is cancelled meanwhile
			return "ok", nil
		}})
		i := start(t, e, "a", "main")
		ctx, cancel := context.WithCancel(context.Background())
		out := i.Tool(context.WithValue(ctx, cancelKey{}, cancel), ToolCall{Path: "fs/read", Args: "x"})
		if commit && (out.Status != StatusOK || out.Result != "ok") {
			t.Fatalf("committed: got %+v", out)
		}
		if !commit && out.Status == StatusOK {
			t.Fatalf("not committed: the cancelled guard's call succeeded: %+v", out)
		}
	}
}

type cancelKey struct{}
