package engine

import (
	"context"
	"testing"
)

// A guard that ends in "return invoke(...)" gets no outcome record (no
// script could see it); its call's outcome is the same as a guard's that
// reads the record (R4.3).
func TestGuardReturningInvokeBuildsNoOutcomeRecord(t *testing.T) {
	ctx := context.Background()
	tool := func(guard string) (*Instance, func() Outcome) {
		e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
local function pass(invoke) return invoke() end
guard.tool("fs/read", ` + guard + `)
hook.tool("fs/read", {post = function(c, o) return "seen " .. o.result end})`})
		e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c CoreCall) (any, error) { return c.Args, nil }})
		i := start(t, e, "t", "main")
		return i, func() Outcome { return i.Tool(ctx, ToolCall{Path: "fs/read", Args: "x", CallID: "c"}) }
	}
	allocs := map[string]float64{}
	for _, g := range []string{
		`function(c, invoke) return invoke() end`,
		`function(c, invoke) return pass(invoke) end`,
		`function(c, invoke) local o = invoke() return o end`,
		`function(c, invoke) local o = invoke() if o.status ~= "ok" or o.result ~= "x" then error("record: " .. tostring(o.status)) end return o end`,
	} {
		_, call := tool(g)
		out := call()
		if out.Status != StatusOK || out.Result != "x" || len(out.Diagnostics) != 1 || out.Diagnostics[0] != "seen x" {
			t.Fatalf("%s: %+v", g, out)
		}
		allocs[g] = testing.AllocsPerRun(50, func() { call() })
	}
	tail, local := allocs[`function(c, invoke) return invoke() end`], allocs[`function(c, invoke) local o = invoke() return o end`]
	if !(tail < local) || allocs[`function(c, invoke) return pass(invoke) end`] != tail {
		t.Fatalf("allocations per call: %v; want fewer for the guards that return invoke's outcome (no record, no result converted)", allocs)
	}
}
