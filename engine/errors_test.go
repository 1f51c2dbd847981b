package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/attune-dev/attune/luabind"
)

// Errors a host may act on are typed: errors.Is against the sentinels,
// errors.As into *Error with its code, program and position; the message
// text stays the spec's (R4.11, R5.5, R5.6).
func TestTypedErrors(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, `
[engine]
callback_budget = "50ms"
[bots.main]
behaviors = ["g", "offload", "caller"]
ceiling = ["read"]
`, map[string]string{
		"offload.lua": offloadLua,
		"caller.lua":  callerLua,
		"g.lua": `
guard.tool("fs/refuse", function(c, invoke) return refuse("no thanks") end)
guard.tool("fs/throw", function(c, invoke)
  error("boom")
end)
guard.tool("fs/loop", function(c, invoke) while true do end end)
guard.tool("fs/grant", function(c, invoke) call.method("offload", "put", {body = "x"}) return invoke() end)
`})
	for _, p := range []string{"fs/refuse", "fs/throw", "fs/loop", "fs/grant", "fs/plain"} {
		e.RegisterTool(echoTool(p, "read"))
	}
	i := start(t, e, "a", "main")

	// refusals: the code is the refused_by word
	out := i.Tool(ctx, ToolCall{Path: "fs/refuse"})
	var ee *Error
	if !errors.As(out.Err, &ee) || ee.Code != ByGuard || ee.Error() != "no thanks" || out.Reason != "no thanks" {
		t.Fatalf("refused: %+v", out)
	}
	// a script failure names its program and position; the text is unchanged
	out = i.Tool(ctx, ToolCall{Path: "fs/throw"})
	if !errors.As(out.Err, &ee) || ee.Code != CodeScript || ee.Program != "g" || ee.Position != "g.lua:4" || out.Error != ee.Error() || !strings.HasPrefix(out.Error, "g.lua:4: boom") {
		t.Fatalf("script: %+v (%+v)", out, ee)
	}
	if !errors.Is(out.Err, ErrScript) || errors.Is(out.Err, ErrBudget) {
		t.Fatalf("script failure: Is: %v", out.Err)
	}
	// the time budget: code budget, and the cause is luabind.ErrBudget
	out = i.Tool(ctx, ToolCall{Path: "fs/loop"})
	if !errors.Is(out.Err, ErrBudget) || !errors.Is(out.Err, luabind.ErrBudget) || !strings.Contains(out.Error, "cancelled: time budget") {
		t.Fatalf("budget: %+v", out)
	}
	// a thrown method refusal keeps the code it starts with
	out = i.Tool(ctx, ToolCall{Path: "fs/grant"})
	if !errors.Is(out.Err, ErrGrant) || !strings.Contains(out.Error, "grant: bot main (program g) has no grant offload-write") {
		t.Fatalf("grant: %+v", out)
	}
	out = i.Tool(ctx, ToolCall{Path: "fs/nope"})
	if !errors.Is(out.Err, ErrUnknownTool) {
		t.Fatalf("unknown tool: %+v", out)
	}
	if out := i.Tool(ctx, ToolCall{Path: "fs/plain"}); out.Err != nil {
		t.Fatalf("ok carries no error: %+v", out)
	}

	// methods: schema refusal, call-id reuse
	mo := i.Method(ctx, MethodCall{Owner: "offload@project", Method: "put", Input: map[string]any{"body": 3}})
	var se *SchemaError
	if !errors.Is(mo.Err, ErrSchema) || mo.RefusedBy != BySchema || !errors.As(mo.Err, &se) || se.Path != "input.body" {
		t.Fatalf("schema: %+v", mo)
	}
	if mo := i.Method(ctx, MethodCall{Owner: "offload@project", Method: "put", Input: map[string]any{"body": "x"}, CallID: "c1"}); mo.Status != StatusOK {
		t.Fatalf("put: %+v", mo)
	}
	mo = i.Method(ctx, MethodCall{Owner: "offload@project", Method: "put", Input: map[string]any{"body": "y"}, CallID: "c1"})
	if !errors.Is(mo.Err, ErrCallID) || !strings.HasPrefix(mo.Error, "call-id: call id c1 reused") {
		t.Fatalf("call-id: %+v", mo)
	}

	// the facade's errors
	if _, err := i.BeginRound(ctx); !errors.Is(err, ErrNoOpenTurn) || !strings.Contains(err.Error(), "has no open turn") {
		t.Fatalf("no open turn: %v", err)
	}
	if _, err := i.EndRound(ctx, RoundEnd{}); !errors.Is(err, ErrNoOpenRound) {
		t.Fatalf("no open round: %v", err)
	}
	if _, err := e.Start(ctx, StartOptions{ID: "b", Bot: "ghost"}); !errors.Is(err, ErrUnknownBot) {
		t.Fatalf("unknown bot: %v", err)
	}
	if _, err := e.Start(ctx, StartOptions{ID: "a", Bot: "main"}); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("already running: %v", err)
	}
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := i.BeginTurn(ctx, TurnInput{}); !errors.Is(err, ErrStillOpen) {
		t.Fatalf("still open: %v", err)
	}
	if err := i.Consume(ctx, "nope"); CodeOf(err) != CodeNote {
		t.Fatalf("consume: %v", err)
	}
	i.Stop()
	if _, err := i.BeginTurn(ctx, TurnInput{}); !errors.Is(err, ErrNotRunning) || errors.Is(err, ErrNoOpenTurn) {
		t.Fatalf("not running: %v", err)
	}
	if out := i.Tool(ctx, ToolCall{Path: "fs/plain"}); !errors.Is(out.Err, ErrNotRunning) {
		t.Fatalf("tool on a stopped instance: %+v", out)
	}
	if mo := i.Method(ctx, MethodCall{Owner: "offload@project", Method: "count"}); !errors.Is(mo.Err, ErrNotRunning) {
		t.Fatalf("method on a stopped instance: %+v", mo)
	}
}

// A boundary guard's refusal and a boundary hook's failure carry typed
// errors too (R3.1, R3.3).
func TestTypedBoundaryErrors(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = []\n", map[string]string{"g.lua": `
n = 0
guard.turn(function(b, invoke) n = n + 1 if n == 1 then return refuse("not yet") end return invoke() end)
hook.round("start", function(b) error("hook broke") end)`})
	i := start(t, e, "a", "main")
	r, err := i.BeginTurn(ctx, TurnInput{})
	if err != nil || r.Status != StatusRefused || !errors.Is(r.Err, &Error{Code: ByGuard}) || r.RefusedBy != ByGuard {
		t.Fatalf("refused turn: %+v %v", r, err)
	}
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	r, err = i.BeginRound(ctx)
	var ee *Error
	if err != nil || r.Status != StatusFailed || !errors.As(r.Err, &ee) || ee.Program != "g" || ee.Position != "g.lua:4" || r.Error != ee.Error() {
		t.Fatalf("failed round: %+v %v", r, err)
	}
}
