package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A script failure's code and position travel as fields from where the
// error was raised; the engine reads neither from its text (R4.11, R5.2).
func TestErrorCodeAndPositionAreData(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, `
[bots.main]
behaviors = ["g", "offload", "caller"]
ceiling = ["read"]
`, map[string]string{
		"offload.lua": offloadLua,
		"caller.lua":  callerLua,
		"g.lua": `
guard.tool("fs/grant", function(c, invoke)
  call.method("offload", "put", {body = "x"})
  return invoke()
end)
guard.tool("fs/fake", function(c, invoke)
  error("stale-revision: owner x moved from revision 3 to 4", 0)
end)
guard.tool("fs/fakepos", function(c, invoke)
  error("h.lua:99: grant: not really")
end)
guard.tool("fs/rethrow", function(c, invoke)
  local ok, e = pcall(call.method, "offload", "put", {body = "x"})
  error("caught: " .. e)
end)
guard.tool("fs/table", function(c, invoke)
  error({message = "tabled"})
end)
`})
	for _, p := range []string{"fs/grant", "fs/fake", "fs/fakepos", "fs/rethrow", "fs/table"} {
		e.RegisterTool(echoTool(p, "read"))
	}
	i := start(t, e, "a", "main")

	var ee *Error
	// the refusal call/method raised carries its code and the throw site
	out := i.Tool(ctx, ToolCall{Path: "fs/grant"})
	if !errors.As(out.Err, &ee) || ee.Code != CodeGrant || ee.Position != "g.lua:3" || ee.Program != "g" ||
		!strings.HasPrefix(out.Error, "g.lua:3: grant: ") {
		t.Fatalf("grant: %+v (%+v)", out, ee)
	}
	// a script's own string that looks coded is a script failure, with no
	// position when it gave none (level 0)
	out = i.Tool(ctx, ToolCall{Path: "fs/fake"})
	if !errors.As(out.Err, &ee) || ee.Code != CodeScript || ee.Position != "" || errors.Is(out.Err, ErrStaleRevision) ||
		out.Error != "stale-revision: owner x moved from revision 3 to 4" {
		t.Fatalf("fake code: %+v (%+v)", out, ee)
	}
	// a position-looking text is not the position: the raise site is
	out = i.Tool(ctx, ToolCall{Path: "fs/fakepos"})
	if !errors.As(out.Err, &ee) || ee.Code != CodeScript || ee.Position != "g.lua:10" || out.Error != "g.lua:10: h.lua:99: grant: not really" {
		t.Fatalf("fake position: %+v (%+v)", out, ee)
	}
	// rethrowing a coded failure inside another string does not carry the code
	out = i.Tool(ctx, ToolCall{Path: "fs/rethrow"})
	if !errors.As(out.Err, &ee) || ee.Code != CodeScript || ee.Position != "g.lua:14" || !strings.Contains(out.Error, "caught: g.lua:13: grant: ") {
		t.Fatalf("rethrow: %+v (%+v)", out, ee)
	}
	// a table raised: the position is where error was called
	out = i.Tool(ctx, ToolCall{Path: "fs/table"})
	if !errors.As(out.Err, &ee) || ee.Code != CodeScript || ee.Position != "g.lua:17" || out.Error != "g.lua:17: tabled" {
		t.Fatalf("table: %+v (%+v)", out, ee)
	}
}
