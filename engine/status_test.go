package engine

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// R4.11: one Status type for every outcome the engine returns.
func TestOneStatusType(t *testing.T) {
	want := reflect.TypeOf(StatusOK)
	if want.Name() != "Status" || want.Kind() != reflect.String {
		t.Fatalf("Status is %v", want)
	}
	for _, v := range []any{Outcome{}, MethodOutcome{}, BoundaryResult{}, CommandResult{}, Opened{}, Error{}} {
		f, ok := reflect.TypeOf(v).FieldByName("Status")
		if !ok || f.Type != want {
			t.Errorf("%T.Status is %v, want %v", v, f.Type, want)
		}
	}
}

// R4.11, R5.2: a refused or failed outcome's Err carries the outcome's
// status as a field: errors.Is against ErrRefused or ErrFailed, errors.As
// into *Error; the wire form of the status is the word it always was.
func TestStatusIsData(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, `
[bots.main]
behaviors = ["g", "offload"]
ceiling = ["read"]
`, map[string]string{"offload.lua": offloadLua, "g.lua": `
guard.tool("fs/no", function(c, invoke) return refuse("not this one") end)
guard.tool("fs/boom", function(c, invoke) error("boom") end)
`})
	for _, p := range []string{"fs/no", "fs/boom", "fs/ok"} {
		e.RegisterTool(echoTool(p, "read"))
	}
	e.RegisterTool(HostTool{Path: "fs/bad", Effects: []string{"read"}, Core: func(context.Context, CoreCall) (any, error) {
		return nil, errors.New("disk on fire")
	}})
	i := start(t, e, "a", "main")
	var ee *Error

	out := i.Tool(ctx, ToolCall{Path: "fs/no"})
	if !errors.Is(out.Err, ErrRefused) || errors.Is(out.Err, ErrFailed) || !errors.As(out.Err, &ee) ||
		ee.Status != StatusRefused || ee.Code != Code(ByGuard) || StatusOf(out.Err) != StatusRefused {
		t.Fatalf("refused: %+v (%+v)", out, ee)
	}
	b, err := json.Marshal(out)
	if err != nil || !strings.Contains(string(b), `"status":"refused"`) || !strings.Contains(string(b), `"code":"guard"`) {
		t.Fatalf("wire form %s, %v", b, err)
	}
	out = i.Tool(ctx, ToolCall{Path: "fs/boom"})
	if !errors.Is(out.Err, ErrFailed) || errors.Is(out.Err, ErrRefused) || !errors.Is(out.Err, ErrScript) || StatusOf(out.Err) != StatusFailed {
		t.Fatalf("failed: %+v", out)
	}
	// the quick path: a host core's failure
	out = i.Tool(ctx, ToolCall{Path: "fs/bad"})
	if !errors.Is(out.Err, ErrFailed) || !errors.Is(out.Err, ErrCore) {
		t.Fatalf("core failure: %+v", out)
	}
	if out = i.Tool(ctx, ToolCall{Path: "fs/ok"}); out.Status != StatusOK || out.Err != nil || !out.Status.OK() {
		t.Fatalf("ok: %+v", out)
	}
	// a harness-opened call refused before its core
	op := i.ToolBegin(ctx, ToolCall{Path: "fs/no", Args: map[string]any{}}, "k")
	if op.Status != StatusRefused || !errors.Is(op.Err, ErrRefused) || !errors.Is(op.Err, &Error{Code: Code(ByGuard)}) {
		t.Fatalf("ToolBegin refused: %+v", op.Outcome)
	}
	// a method call that fails (no such method)
	mo := i.Method(ctx, MethodCall{Owner: "offload", Method: "nope"})
	if mo.Status != StatusFailed || !errors.Is(mo.Err, ErrFailed) || StatusOf(mo.Err) != StatusFailed {
		t.Fatalf("method: %+v", mo)
	}
	// a sentinel of a code matches whatever the status; one of a status,
	// whatever the code
	if !errors.Is(&Error{Code: CodeGrant, Status: StatusRefused, Message: "x"}, ErrGrant) ||
		errors.Is(&Error{Code: CodeGrant, Message: "x"}, ErrRefused) {
		t.Fatal("sentinels")
	}
}

// R4.9, R4.11: a script failure's call stack travels as data: Frames,
// innermost first, each callback's program, form, registration and call.
func TestErrorFrames(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, `
[bots.main]
behaviors = ["g"]
ceiling = ["read"]
`, map[string]string{"g.lua": `
guard.tool("fs/outer", function(c, invoke)
  local out = call.tool("fs/inner", {})
  error("outer saw: " .. tostring(out.error))
end)
guard.tool("fs/inner", function(c, invoke)
  error("inner boom")
end)
define.reducer("g", function(s) return s end)
define.method("g", "boom", function(ctx, s, input)
  error("handler boom")
end)
guard.tool("fs/method", function(c, invoke)
  call.method("g", "boom", {})
  return invoke()
end)
`})
	e.RegisterTool(echoTool("fs/outer", "read"))
	e.RegisterTool(echoTool("fs/inner", "read"))
	e.RegisterTool(echoTool("fs/method", "read"))
	i := start(t, e, "a", "main")
	out := i.Tool(ctx, ToolCall{Path: "fs/outer", CallID: "c1"})
	var ee *Error
	if !errors.As(out.Err, &ee) || ee.Position != "g.lua:4" {
		t.Fatalf("%+v (%+v)", out, ee)
	}
	want := []Frame{{Program: "g", Form: "guard/tool", Pos: "g.lua:2", CallID: "c1"}}
	if !reflect.DeepEqual(ee.Frames, want) {
		t.Fatalf("frames %+v, want %+v", ee.Frames, want)
	}
	// a nested call's failure raised into its caller: the stack reaches
	// the handler that threw, through the guard that called it
	out = i.Tool(ctx, ToolCall{Path: "fs/method", CallID: "c2"})
	if !errors.As(out.Err, &ee) || ee.Code != CodeHandler || ee.Position != "g.lua:14" {
		t.Fatalf("%+v (%+v)", out, ee)
	}
	want = []Frame{{Program: "g", Form: "define/method", Pos: "g.lua:10", CallID: "c2/1"}, {Program: "g", Form: "guard/tool", Pos: "g.lua:13", CallID: "c2"}}
	if !reflect.DeepEqual(ee.Frames, want) {
		t.Fatalf("nested frames %+v, want %+v", ee.Frames, want)
	}
}

// R4.8, R4.11: across the Lua boundary the code travels as a field of the
// outcome (call/tool, invoke) and of the failure (:post-fail); a script
// branches on it, not on the error's text.
func TestCodeIsDataInScript(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
seen = {}
guard.tool("fs/no", function(c, invoke) return refuse("not this one") end)
guard.tool("fs/outer", function(c, invoke)
  seen.refused = call.tool("fs/no", {}).code
  seen.core = call.tool("fs/bad", {}).code
  seen.unknown = call.tool("fs/none", {}).code
  seen.ok = call.tool("fs/ok", {}).code or "none"
  local out = invoke()
  seen.invoked = out.code or "none"
  return out
end)
guard.tool("fs/failing", function(c, invoke)
  local out = invoke()
  seen.invoke_failed = out.code
  return out
end)
hook.tool("fs/failing", {post_fail = function(c, f) seen.post_fail = f.code end})
`})
	for _, p := range []string{"fs/no", "fs/ok", "fs/outer"} {
		e.RegisterTool(echoTool(p, "read"))
	}
	bad := HostTool{Path: "fs/bad", Effects: []string{"read"}, Core: func(context.Context, CoreCall) (any, error) {
		return nil, errors.New("disk on fire")
	}}
	e.RegisterTool(bad)
	bad.Path = "fs/failing"
	e.RegisterTool(bad)
	i := start(t, e, "a", "main")
	if out := i.Tool(ctx, ToolCall{Path: "fs/outer"}); out.Status != StatusOK {
		t.Fatalf("outer: %+v", out)
	}
	if out := i.Tool(ctx, ToolCall{Path: "fs/failing"}); out.Status != StatusFailed || CodeOf(out.Err) != CodeCore {
		t.Fatalf("failing: %+v", out)
	}
	r := i.cur.Load().regs[0]
	got, _ := r.st.FromLua(r.st.L.GetGlobal("seen"))
	want := map[string]any{"refused": "guard", "core": "core", "unknown": "unknown-tool", "ok": "none", "invoked": "none",
		"invoke_failed": "core", "post_fail": "core"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("codes seen by script %#v, want %#v", got, want)
	}
}
