package engine

import (
	"context"
	"testing"
)

// BenchmarkMemoryLimit: the tool chain with engine.memory_limit off and on
// (the heap watchdog), in one run, so the two can be compared as a ratio.
func BenchmarkMemoryLimit(b *testing.B) {
	chains := []struct{ name, src string }{
		{"ToolOneGuard", `guard.tool("fs/read", function(c, invoke) return invoke() end)`},
		{"ToolFullChain", `
guard.tool("fs/read", function(c, invoke) return invoke() end)
guard.tool("fs/*", function(c, invoke) mark(c, "seen") return invoke() end)
guard.tool("fs/**", function(c, invoke) return invoke(c.args) end)
hook.tool("fs/read", {pre = function(c) end, post = function(c, o) return nil end})`},
	}
	for _, ch := range chains {
		for _, limit := range []struct{ name, toml string }{{"off", "0"}, {"on", `"2GiB"`}} {
			b.Run(ch.name+"/"+limit.name, func(b *testing.B) {
				e := testEngine(b, "[engine]\nmemory_limit = "+limit.toml+"\n[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n",
					map[string]string{"g.lua": ch.src})
				if (e.watchdog != nil) != (limit.name == "on") {
					b.Fatalf("watchdog %v with memory_limit %s", e.watchdog != nil, limit.toml)
				}
				e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c CoreCall) (any, error) { return c.Args, nil }})
				i, err := e.Start(context.Background(), StartOptions{ID: "bench", Bot: "main"})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				call := ToolCall{Path: "fs/read", Args: "x", CallID: "c"}
				b.ReportAllocs()
				for b.Loop() {
					if i.Tool(ctx, call).Status != StatusOK {
						b.Fatal("not ok")
					}
				}
			})
		}
	}
}
