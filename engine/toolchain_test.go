package engine

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const chainCfg = `
[bots.main]
behaviors = ["g"]
ceiling = ["read"]
retry_budget = 2
`

func TestMatch(t *testing.T) { // R4.2
	for _, c := range []struct {
		pat, path string
		want      bool
	}{
		{"fs/read", "fs/read", true}, {"fs/read", "fs/write", false},
		{"fs/*", "fs/read", true}, {"fs/*", "fs/a/b", false}, {"fs/*", "fs", false},
		{"fs/**", "fs/a/b", true}, {"fs/**", "fs/read", true}, {"fs/**", "fs", false}, {"fs/**", "fsx/a", false},
	} {
		if got := match(c.pat, c.path); got != c.want {
			t.Errorf("match(%q, %q) = %v", c.pat, c.path, got)
		}
	}
}

func TestFastPathNoLua(t *testing.T) { // R4.2, R4.6
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `guard.tool("other/*", function(c, invoke) return invoke() end)`})
	calls := 0
	e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c CoreCall) (any, error) { calls++; return "ok", nil }})
	i := start(t, e, "a", "main")
	out := i.Tool(context.Background(), ToolCall{Path: "fs/read", Args: "x"})
	if out.Status != StatusOK || out.Result != "ok" || calls != 1 {
		t.Fatalf("got %+v, %d core calls", out, calls)
	}
	te := i.cur.Load().toolTable().m["fs/read"]
	if !te.fast {
		t.Fatal("fs/read should be on the fast path")
	}
	// no script runs and nothing is allocated: a call through the chain
	// would allocate its records and boxed values
	call := ToolCall{Path: "fs/read", Args: "x"}
	if n := testing.AllocsPerRun(100, func() { i.Tool(context.Background(), call) }); n != 0 {
		t.Fatalf("the fast path allocates %v times per call", n)
	}
	if calls != 102 {
		t.Fatalf("core calls %d", calls)
	}
}

func TestCeiling(t *testing.T) { // R4.1
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
ran = 0
guard.tool("fs/*", function(c, invoke) ran = ran + 1 return invoke() end)
hook.tool("fs/*", {post_fail = function() error("post-fail ran") end})`})
	floorRan := false
	e.floor = func(context.Context, FloorCall) (string, bool) { floorRan = true; return "", false }
	e.RegisterTool(echoTool("fs/write", "write"))
	i := start(t, e, "a", "main")
	out := i.Tool(context.Background(), ToolCall{Path: "fs/write", Args: "x"})
	if out.Status != StatusRefused || out.RefusedBy != ByCeiling || floorRan || len(out.Diagnostics) != 0 {
		t.Fatalf("got %+v floor=%v", out, floorRan)
	}
}

func TestGuardArgsAndInvoke(t *testing.T) { // R4.3, R4.4
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
guard.tool("fs/read", function(c, invoke)
  c.args.n = c.args.n + 1
  mark(c, "seen")
  mark(c, "tmp")
  return invoke()
end)
guard.tool("fs/read", function(c, invoke)
  unmark(c, "tmp")
  return invoke({n = c.args.n * 10})
end)`})
	var saw FloorCall
	e.floor = func(_ context.Context, c FloorCall) (string, bool) { saw = c; return "", false }
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "a", "main")
	raw := map[string]any{"n": 1.0}
	out := i.Tool(context.Background(), ToolCall{Path: "fs/read", Args: raw})
	if out.Status != StatusOK || !reflect.DeepEqual(out.Result, map[string]any{"n": 20.0}) {
		t.Fatalf("got %+v", out)
	}
	if !reflect.DeepEqual(saw.Marks, []string{"seen"}) || raw["n"] != 1.0 {
		t.Fatalf("floor saw %+v; raw %v", saw, raw)
	}
}

func TestInvokeTwiceAndNoInvoke(t *testing.T) { // R4.3
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
guard.tool("t/twice", function(c, invoke) invoke() return invoke() end)
guard.tool("t/none", function(c, invoke) return nil end)`})
	n := 0
	e.RegisterTool(HostTool{Path: "t/twice", Core: func(context.Context, CoreCall) (any, error) { n++; return 1, nil }})
	e.RegisterTool(echoTool("t/none"))
	i := start(t, e, "a", "main")
	out := i.Tool(context.Background(), ToolCall{Path: "t/twice"})
	if out.Status != StatusFailed || !strings.Contains(out.Error, "invoke called twice") || n != 1 {
		t.Fatalf("twice: %+v (core ran %d)", out, n)
	}
	out = i.Tool(context.Background(), ToolCall{Path: "t/none"})
	if out.Status != StatusRefused || out.RefusedBy != ByGuard {
		t.Fatalf("none: %+v", out)
	}
}

func TestHooksGetCopies(t *testing.T) { // R4.5, R4.7, R4.8
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
hook.tool("fs/read", {
  pre = function(c) c.args.x = "changed" end,
  post = function(c, o) o.result = "replaced" return "diag:" .. c.args.x end,
})
hook.tool("fs/read", {post = function(c, o) return "second" end})
failures = {}
guard.tool("fs/deny", function(c, invoke) return refuse("no way") end)
hook.tool("fs/deny", {post_fail = function(c, f) failures[#failures+1] = f end})`})
	e.RegisterTool(echoTool("fs/read"))
	e.RegisterTool(echoTool("fs/deny"))
	i := start(t, e, "a", "main")
	out := i.Tool(context.Background(), ToolCall{Path: "fs/read", Args: map[string]any{"x": "orig"}})
	if out.Status != StatusOK || !reflect.DeepEqual(out.Result, map[string]any{"x": "orig"}) ||
		!reflect.DeepEqual(out.Diagnostics, []string{"diag:orig", "second"}) {
		t.Fatalf("got %+v", out)
	}
	out = i.Tool(context.Background(), ToolCall{Path: "fs/deny", Args: "secret"})
	if out.Status != StatusRefused || out.RefusedBy != ByGuard || out.Reason != "no way" || !out.Hidden {
		t.Fatalf("deny: %+v", out)
	}
	r := i.cur.Load().regs[0]
	f, _ := r.st.FromLua(r.st.L.GetGlobal("failures"))
	want := []any{map[string]any{"reason": "no way", "by": "guard", "code": "guard", "hidden": true}} // R4.8: the code as data
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("post-fail saw %#v", f)
	}
}

func TestRetryBudget(t *testing.T) { // R4.10
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
attempts = {}
guard.tool("t/x", function(c, invoke)
  attempts[#attempts+1] = c.attempt
  mark(c, "m" .. c.attempt)
  if #c.marks ~= 1 then error("marks not cleared") end
  return retry("again")
end)`})
	e.RegisterTool(echoTool("t/x"))
	i := start(t, e, "a", "main")
	out := i.Tool(context.Background(), ToolCall{Path: "t/x"})
	if out.Status != StatusRefused || out.RefusedBy != ByRetryBudget {
		t.Fatalf("got %+v", out)
	}
	r := i.cur.Load().regs[0]
	got, _ := r.st.FromLua(r.st.L.GetGlobal("attempts"))
	if !reflect.DeepEqual(got, []any{1.0, 2.0, 3.0}) {
		t.Fatalf("attempts %v", got)
	}
}

func TestReentry(t *testing.T) { // R4.9
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
hook.tool("t/self", {post = function(c, o)
  local inner = call.tool("t/self", {})
  return inner.status .. ":" .. tostring(inner.refused_by)
end})
hook.tool("t/deep", {reentrant_depth = 1, post = function(c, o)
  local inner = call.tool("t/deep", {})
  return inner.status .. ":" .. tostring(inner.refused_by)
end})`})
	e.RegisterTool(echoTool("t/self"))
	e.RegisterTool(echoTool("t/deep"))
	i := start(t, e, "a", "main")
	out := i.Tool(context.Background(), ToolCall{Path: "t/self"})
	if out.Status != StatusOK || !reflect.DeepEqual(out.Diagnostics, []string{"refused:reentry"}) {
		t.Fatalf("self: %+v", out)
	}
	out = i.Tool(context.Background(), ToolCall{Path: "t/deep"})
	if out.Status != StatusOK || !reflect.DeepEqual(out.Diagnostics, []string{"ok:nil"}) {
		t.Fatalf("deep: %+v", out)
	}
}

// R4.9: no process-wide busy flag: two instances run the same program's
// guards at once (run under -race).
func TestConcurrentInstances(t *testing.T) {
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
n = 0
guard.tool("t/x", function(c, invoke) n = n + 1 return invoke({n = n}) end)`})
	e.RegisterTool(echoTool("t/x"))
	a, b := start(t, e, "a", "main"), start(t, e, "b", "main")
	var wg sync.WaitGroup
	for _, i := range []*Instance{a, b} {
		wg.Add(1)
		go func(i *Instance) {
			defer wg.Done()
			for k := 1; k <= 200; k++ {
				out := i.Tool(context.Background(), ToolCall{Path: "t/x"})
				if out.Status != StatusOK || out.Result.(map[string]any)["n"] != float64(k) {
					t.Errorf("%s call %d: %+v", i.id, k, out)
					return
				}
			}
		}(i)
	}
	wg.Wait()
}

func TestCoreThrows(t *testing.T) { // R4.8, R4.11
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
seen = nil
hook.tool("t/*", {post_fail = function(c, f) seen = {args = c.args, by = f.by, hidden = f.hidden, err = f.error} end})
define.tool("t/lua", function(ctx, args) error("lua core broke") end)`})
	e.RegisterTool(HostTool{Path: "t/x", Core: func(context.Context, CoreCall) (any, error) { return nil, errors.New("disk full") }})
	i := start(t, e, "a", "main")
	out := i.Tool(context.Background(), ToolCall{Path: "t/x", Args: "a"})
	if out.Status != StatusFailed || out.Error != "disk full" || out.RefusedBy != "" || out.Reason != "" {
		t.Fatalf("got %+v", out)
	}
	r := i.cur.Load().regs[0]
	seen, _ := r.st.FromLua(r.st.L.GetGlobal("seen"))
	if !reflect.DeepEqual(seen, map[string]any{"args": "a", "by": "error", "hidden": false, "err": "disk full"}) {
		t.Fatalf("post-fail saw %#v", seen)
	}
	out = i.Tool(context.Background(), ToolCall{Path: "t/lua", Args: "a"})
	if out.Status != StatusFailed || !strings.Contains(out.Error, "g.lua:4:") || !strings.Contains(out.Error, "lua core broke") {
		t.Fatalf("lua core: %+v", out)
	}
}

// Recycled call records never carry a handler's own fields into the next
// call.
func TestRecordsStayClean(t *testing.T) {
	e := testEngine(t, chainCfg, map[string]string{"g.lua": `
seen = {}
guard.tool("t/x", function(c, invoke)
  seen[#seen+1] = tostring(c.mine)
  c.mine = "left over"
  return invoke()
end)`})
	e.RegisterTool(echoTool("t/x"))
	i := start(t, e, "a", "main")
	for range 3 {
		if out := i.Tool(context.Background(), ToolCall{Path: "t/x"}); out.Status != StatusOK {
			t.Fatal(out)
		}
	}
	r := i.cur.Load().regs[0]
	got, _ := r.st.FromLua(r.st.L.GetGlobal("seen"))
	if !reflect.DeepEqual(got, []any{"nil", "nil", "nil"}) {
		t.Fatalf("a record kept a field across calls: %v", got)
	}
}
