package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/attune-dev/attune/luabind"
)

// A table argument reaches a guard's call.args converted only when the
// guard reads it; whatever the guard does with it, the chain sees what it
// would see had it been converted up front (R4.3): read, edited and
// passed on, read through pairs, replaced unread, or never read. An
// argument over the data limits fails the guard before it runs, read or
// not (R1.11).
func TestLazyCallArgs(t *testing.T) {
	ctx := context.Background()
	args := func() map[string]any { return map[string]any{"path": "/a", "n": 2.0, "tags": []any{"x"}} }
	for _, c := range []struct {
		guard string
		want  any
	}{
		{`function(c, invoke) return invoke() end`, args()},
		{`function(c, invoke) local o = invoke() return o end`, args()},
		{`function(c, invoke) if c.args.path ~= "/a" then error("path") end return invoke() end`, args()},
		{`function(c, invoke) c.args.path = "/b" return invoke() end`, map[string]any{"path": "/b", "n": 2.0, "tags": []any{"x"}}},
		{`function(c, invoke) local n = 0 for k in pairs(c) do if k == "args" then n = n + 1 end end
		  for k, v in pairs(c.args) do n = n + 1 end if n ~= 4 then error("pairs " .. n) end return invoke() end`, args()},
		{`function(c, invoke) c.args = {other = true} return invoke() end`, map[string]any{"other": true}},
		{`function(c, invoke) return invoke(c.args.tags) end`, []any{"x"}},
		{`function(c, invoke) return invoke({path = c.args.path}) end`, map[string]any{"path": "/a"}},
	} {
		var got any
		e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
guard.tool("fs/read", ` + c.guard + `)
guard.tool("fs/read", function(c, invoke) return invoke() end)`})
		e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, cc CoreCall) (any, error) { got = cc.Args; return "ok", nil }})
		i := start(t, e, "t", "main")
		for range 2 { // the second call gets the recycled records
			got = nil
			out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: args()})
			if out.Status != StatusOK || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("%s: %+v, core got %#v, want %#v", c.guard, out, got, c.want)
			}
		}
	}
	big := make([]any, luabind.MaxDataNodes)
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `guard.tool("fs/read", function(c, invoke) return invoke() end)`})
	ran := false
	e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(context.Context, CoreCall) (any, error) { ran = true; return nil, nil }})
	out := start(t, e, "t", "main").Tool(ctx, ToolCall{Path: "fs/read", Args: map[string]any{"big": big}})
	if out.Status != StatusFailed || !strings.Contains(out.Error, "over the data limit") || ran {
		t.Fatalf("over the data limits: %+v (core ran: %v)", out, ran)
	}
}
