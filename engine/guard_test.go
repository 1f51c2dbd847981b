package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// R3.1, R4.3: tool, turn and round guards run through one runner, so the
// same misbehaviour gets the same verdict and text in every kind of chain.
func TestGuardRunnerSameVerdicts(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, body string
		status     Status
		by, text   string
	}{
		{"silent", `return nil`, StatusRefused, ByGuard, "returned without calling invoke or refuse"},
		{"refuse", `return refuse("no thanks")`, StatusRefused, ByGuard, "no thanks"},
		{"refuse without reason", `return refuse()`, StatusRefused, ByGuard, "refused by the guard at g.lua:"},
		{"invoke twice", `invoke() return invoke()`, StatusFailed, "", "invoke called twice"},
		{"throws", `error("boom")`, StatusFailed, "", "boom"},
		{"passes", `return invoke()`, StatusOK, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fn := "function(x, invoke) " + c.body + " end"
			prog := "guard.tool(\"fs/read\", " + fn + ")\nguard.turn(" + fn + ")\nguard.round(" + fn + ")\n"
			e := testEngine(t, chainCfg, map[string]string{"g.lua": prog})
			e.RegisterTool(echoTool("fs/read", "read"))
			i := start(t, e, "a", "main")
			check := func(kind string, status Status, by, reason, errText string) {
				t.Helper()
				if status != c.status || by != c.by || !strings.Contains(reason+errText, c.text) {
					t.Errorf("%s guard: status %q by %q reason %q error %q; want %q by %q with %q", kind, status, by, reason, errText, c.status, c.by, c.text)
				}
			}
			out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "x"})
			check("tool", out.Status, out.RefusedBy, out.Reason, out.Error)
			tb, err := i.BeginTurn(ctx, TurnInput{})
			if err != nil {
				t.Fatal(err)
			}
			check("turn", tb.Status, tb.RefusedBy, tb.Reason, tb.Error)
			if tb.Status != StatusOK {
				// a refused or failed turn leaves no turn for the round guard
				return
			}
			rb, err := i.BeginRound(ctx)
			if err != nil {
				t.Fatal(err)
			}
			check("round", rb.Status, rb.RefusedBy, rb.Reason, rb.Error)
		})
	}
}

// R3.1: retry is for tool guards; a turn guard that returns it refuses.
func TestGuardRunnerRetryIsForToolGuards(t *testing.T) {
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `guard.turn(function(b, invoke) return retry("again") end)`})
	i := start(t, e, "a", "main")
	tb, err := i.BeginTurn(context.Background(), TurnInput{})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Status != StatusRefused || tb.RefusedBy != ByGuard || !strings.Contains(tb.Reason, "retry is for tool guards only") {
		t.Fatalf("got %+v", tb)
	}
}

// R4.1: a nested call/tool and a host call find a tool the same way: an
// unknown tool fails with one text and code, whoever calls it.
func TestLookupToolSameForHostAndScript(t *testing.T) {
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
define.tool("g/nested", function(ctx, args) local o = call.tool("nope/x", {}) return o.error end, {effect = {"read"}})`})
	i := start(t, e, "a", "main")
	host := i.Tool(context.Background(), ToolCall{Path: "nope/x"})
	nested := i.Tool(context.Background(), ToolCall{Path: "g/nested"})
	if host.Status != StatusFailed || CodeOf(host.Err) != CodeUnknownTool {
		t.Fatalf("host: %+v", host)
	}
	if nested.Status != StatusOK || nested.Result != host.Error {
		t.Fatalf("nested call/tool saw %#v, the host %q", nested.Result, host.Error)
	}
}

// R4.3: arguments a guard passes on untouched are not converted back: the
// core gets the host's own value; an edit in place, or a new argument, is
// converted and seen by the core, and the host's value stays as it was.
func TestInvokeKeepsUntouchedArgs(t *testing.T) {
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
guard.tool("fs/plain", function(c, invoke) return invoke() end)
guard.tool("fs/passed", function(c, invoke) return invoke(c.args) end)
guard.tool("fs/edited", function(c, invoke) c.args.path = "/b" return invoke() end)
guard.tool("fs/new", function(c, invoke) return invoke({path = c.args.path, limit = c.args.limit}) end)`})
	var got any
	core := func(_ context.Context, c CoreCall) (any, error) { got = c.Args; return "ok", nil }
	for _, p := range []string{"fs/plain", "fs/passed", "fs/edited", "fs/new"} {
		e.RegisterTool(HostTool{Path: p, Effects: []string{"read"}, Core: core})
	}
	i := start(t, e, "a", "main")
	same := func(a, b any) bool {
		ma, ok1 := a.(map[string]any)
		mb, ok2 := b.(map[string]any)
		return ok1 && ok2 && reflect.ValueOf(ma).Pointer() == reflect.ValueOf(mb).Pointer()
	}
	for _, c := range []struct {
		path     string
		kept     bool
		wantPath string
	}{{"fs/plain", true, "/a"}, {"fs/passed", true, "/a"}, {"fs/edited", false, "/b"}, {"fs/new", false, "/a"}} {
		args := map[string]any{"path": "/a", "limit": 3.0}
		if out := i.Tool(context.Background(), ToolCall{Path: c.path, Args: args}); out.Status != StatusOK {
			t.Fatalf("%s: %+v", c.path, out)
		}
		if same(got, args) != c.kept {
			t.Errorf("%s: the core got the host's own value: %v, want %v", c.path, same(got, args), c.kept)
		}
		if m, _ := got.(map[string]any); m["path"] != c.wantPath || m["limit"] != 3.0 {
			t.Errorf("%s: the core got %#v", c.path, got)
		}
		if args["path"] != "/a" {
			t.Errorf("%s: the host's value changed: %#v", c.path, args)
		}
	}
}
