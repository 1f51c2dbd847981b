package engine

import (
	"context"
	"testing"
)

// Records (docs/forms.md): empty lists in records are shared between calls, yet
// each handler sees its own: a guard that fills call.marks, or a hook that
// fills outcome.diagnostics or sets a metatable on it, leaves the next
// call's lists empty and marked as lists.
func TestEmptyListsStayEmpty(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
seen = {}
guard.tool("fs/*", function(c, invoke)
  seen[#seen + 1] = #c.marks
  table.insert(c.marks, "dirty")
  c.marks.extra = true
  return invoke()
end)
hook.tool("fs/*", {post = function(c, o)
  seen[#seen + 1] = #o.diagnostics
  table.insert(o.diagnostics, "dirty")
  setmetatable(o.diagnostics, nil)
end})
define.tool("g/seen", function(ctx, args) return seen end, {effect = {"read"}})`})
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "x", "main")
	ctx := context.Background()
	for k := range 3 {
		if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "a"}); out.Status != StatusOK {
			t.Fatalf("call %d: %+v", k, out)
		}
	}
	out := i.Tool(ctx, ToolCall{Path: "g/seen"})
	seen, _ := out.Result.([]any)
	if len(seen) != 6 {
		t.Fatalf("seen %v", out.Result)
	}
	for k, n := range seen {
		if n != 0.0 {
			t.Fatalf("handler %d found a list of %v items left by an earlier call: %v", k, n, seen)
		}
	}
}
