package engine

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The host's ctx reaches a running script: a deadline far shorter than the
// callback budget ends `while true do end` at the deadline, not the budget.
func TestHostContextCancelsScript(t *testing.T) {
	e := testEngine(t, "[engine]\ncallback_budget = \"5s\"\n[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n",
		map[string]string{"g.lua": `guard.tool("fs/*", function(c, invoke) while true do end end)`})
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "a", "main")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	out := i.Tool(ctx, ToolCall{Path: "fs/read"})
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("the script ran %v past a 100ms deadline", d)
	}
	if out.Status != StatusFailed || !errors.Is(out.Err, ErrCancelled) || !errors.Is(out.Err, context.DeadlineExceeded) || !strings.Contains(out.Error, "cancelled: context deadline exceeded") {
		t.Fatalf("%+v", out)
	}
	// the instance stays usable, and the budget is the budget again
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel2() }()
	if out := i.Tool(ctx2, ToolCall{Path: "fs/read"}); !errors.Is(out.Err, context.Canceled) {
		t.Fatalf("second call: %+v", out)
	}
}

// A cancelled ctx stops a call before its chain runs: no guard, no core,
// no handler, no boundary.
func TestCancelledContextRunsNothing(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
guard.tool("fs/*", function(c, invoke) call.tool("count", {}) return invoke() end)
define.reducer("n", function(s, a) s.n = s.n + 1 return s end, {init = {n = 0}})
define.method("n", "add", function(ctx, s, input) propose({type = "add"}) return s.n + 1 end, {kind = "command"})`})
	var cores atomic.Int32
	e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(context.Context, CoreCall) (any, error) { cores.Add(1); return nil, nil }})
	e.RegisterTool(HostTool{Path: "fast", Core: func(context.Context, CoreCall) (any, error) { cores.Add(1); return nil, nil }})
	e.RegisterTool(HostTool{Path: "count", Core: func(context.Context, CoreCall) (any, error) { cores.Add(1); return nil, nil }})
	i := start(t, e, "a", "main")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range []string{"fs/read", "fast"} {
		if out := i.Tool(ctx, ToolCall{Path: p}); !errors.Is(out.Err, ErrCancelled) || !errors.Is(out.Err, context.Canceled) {
			t.Fatalf("%s: %+v", p, out)
		}
	}
	if mo := i.Method(ctx, MethodCall{Owner: "n", Method: "add"}); !errors.Is(mo.Err, ErrCancelled) {
		t.Fatalf("method: %+v", mo)
	}
	if _, err := i.BeginTurn(ctx, TurnInput{}); !errors.Is(err, ErrCancelled) {
		t.Fatalf("turn: %v", err)
	}
	if cores.Load() != 0 {
		t.Fatalf("%d cores ran", cores.Load())
	}
	if _, rev, _ := i.State(context.Background(), "n"); rev != 0 {
		t.Fatalf("the method appended (revision %d)", rev)
	}
	if i.Turn().InTurn {
		t.Fatal("a turn opened")
	}
}

// Every host callback gets a ctx with a deadline ([engine] host_timeout);
// one that does not answer in time fails its call or boundary cleanly and
// the instance stays usable.
func TestHostTimeout(t *testing.T) {
	ctx := context.Background()
	var block atomic.Bool
	block.Store(true)
	wait := func(c context.Context) { // a host that answers only when told, or when its ctx ends
		if block.Load() {
			<-c.Done()
		}
	}
	var deadlines atomic.Int32
	e := testEngine(t, "[engine]\nhost_timeout = \"80ms\"\n[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
guard.tool("fs/guarded", function(c, invoke) mark(c, "seen") return invoke() end)
hook.round("start", function(b) notify("branch " .. tostring(admit.read("vcs/branch"))) end)`},
		func(o *Options) {
			o.Read = func(c context.Context, key string) (any, error) {
				if _, ok := c.Deadline(); ok {
					deadlines.Add(1)
				}
				wait(c)
				return "main", c.Err()
			}
			o.Floor = func(c context.Context, fc FloorCall) (string, bool) {
				if _, ok := c.Deadline(); ok {
					deadlines.Add(1)
				}
				if fc.Path == "fs/floor" {
					wait(c)
				}
				return "", false
			}
		})
	if e.HostTimeout() != 80*time.Millisecond {
		t.Fatalf("host timeout %v", e.HostTimeout())
	}
	core := func(c context.Context, cc CoreCall) (any, error) {
		if _, ok := c.Deadline(); ok {
			deadlines.Add(1)
		}
		wait(c)
		return "done", c.Err()
	}
	for _, p := range []string{"fs/read", "fs/guarded", "fs/floor"} {
		e.RegisterTool(HostTool{Path: p, Effects: []string{"read"}, Core: core})
	}
	i := start(t, e, "a", "main")
	for _, p := range []string{"fs/read", "fs/guarded"} {
		t0 := time.Now()
		out := i.Tool(ctx, ToolCall{Path: p})
		if out.Status != StatusFailed || !errors.Is(out.Err, ErrHostTimeout) || !errors.Is(out.Err, context.DeadlineExceeded) ||
			!strings.Contains(out.Error, "host tool "+p+" did not answer within 80ms") || time.Since(t0) > 5*time.Second {
			t.Fatalf("%s: %+v", p, out)
		}
	}
	out := i.Tool(ctx, ToolCall{Path: "fs/floor"})
	if out.Status != StatusRefused || out.RefusedBy != ByFloor || !errors.Is(out.Err, ErrHostTimeout) {
		t.Fatalf("floor: %+v", out)
	}
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	r, err := i.BeginRound(ctx)
	if err != nil || r.Status != StatusFailed || !errors.Is(r.Err, ErrHostTimeout) || !strings.Contains(r.Error, "admit/read vcs/branch did not answer within 80ms") {
		t.Fatalf("round: %+v %v", r, err)
	}
	if deadlines.Load() != 6 { // two floors and two cores, the floor that hung, the read
		t.Fatalf("%d of 6 callbacks had a deadline", deadlines.Load())
	}
	// the host answers again: the instance carries on
	block.Store(false)
	if _, err := i.EndRound(ctx, RoundEnd{}); err != nil {
		t.Fatal(err)
	}
	r, err = i.BeginRound(ctx)
	if err != nil || r.Status != StatusOK {
		t.Fatalf("next round: %+v %v", r, err)
	}
	for _, p := range []string{"fs/read", "fs/guarded", "fs/floor"} {
		if out := i.Tool(ctx, ToolCall{Path: p}); out.Status != StatusOK || out.Result != "done" {
			t.Fatalf("%s after: %+v", p, out)
		}
	}
}

// A panicking host core is a failed outcome, on the fast path and through
// the chain; the floor fails closed.
func TestHostCorePanics(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n",
		map[string]string{"g.lua": `guard.tool("chain/*", function(c, invoke) return invoke() end)`})
	boom := func(context.Context, CoreCall) (any, error) { panic("kaboom") }
	e.RegisterTool(HostTool{Path: "fast", Core: boom})
	e.RegisterTool(HostTool{Path: "chain/x", Core: boom})
	i := start(t, e, "a", "main")
	for _, p := range []string{"fast", "chain/x"} {
		out := i.Tool(context.Background(), ToolCall{Path: p})
		if out.Status != StatusFailed || !errors.Is(out.Err, ErrCore) || !strings.Contains(out.Error, "host tool "+p+" panicked: kaboom") {
			t.Fatalf("%s: %+v", p, out)
		}
	}
	e2 := testEngine(t, "[bots.main]\nbehaviors = []\nceiling = []\n", nil, func(o *Options) {
		o.Floor = func(context.Context, FloorCall) (string, bool) { panic("floor down") }
	})
	e2.RegisterTool(echoTool("x"))
	out := start(t, e2, "b", "main").Tool(context.Background(), ToolCall{Path: "x"})
	if out.Status != StatusRefused || out.RefusedBy != ByFloor || !strings.Contains(out.Reason, "floor down") {
		t.Fatalf("floor panic: %+v", out)
	}
}

// The core and the floor know which call they serve: instance, session,
// call id (the outcome's), path, args and the marks the guards left.
func TestCoreCallIdentity(t *testing.T) {
	var floorSaw FloorCall
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n",
		map[string]string{"g.lua": `guard.tool("fs/*", function(c, invoke) mark(c, "checked") return invoke({path = "/w/" .. c.args.path}) end)`},
		func(o *Options) {
			o.Floor = func(_ context.Context, c FloorCall) (string, bool) { floorSaw = c; return "", false }
		})
	var got CoreCall
	e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c CoreCall) (any, error) { got = c; return "ok", nil }})
	e.RegisterTool(HostTool{Path: "plain", Core: func(_ context.Context, c CoreCall) (any, error) { got = c; return "ok", nil }})
	i := start(t, e, "a", "main")
	out := i.Tool(context.Background(), ToolCall{Path: "fs/read", Args: map[string]any{"path": "x"}})
	want := CoreCall{Instance: "a", Session: i.Session(), CallID: out.CallID, Path: "fs/read", Args: map[string]any{"path": "/w/x"}, Marks: []string{"checked"}}
	if out.Status != StatusOK || out.CallID == "" || !reflect.DeepEqual(got, want) {
		t.Fatalf("core saw %+v, want %+v (%+v)", got, want, out)
	}
	if floorSaw.CallID != out.CallID || floorSaw.Instance != "a" || floorSaw.Session != i.Session() {
		t.Fatalf("floor saw %+v", floorSaw)
	}
	// the host's own call id is the one the core sees
	out = i.Tool(context.Background(), ToolCall{Path: "plain", Args: 1, CallID: "host-7"})
	if got.CallID != "host-7" || out.CallID != "host-7" || got.Path != "plain" || got.Instance != "a" {
		t.Fatalf("plain: %+v %+v", got, out)
	}
}

// Go numbers satisfy number and integer schemas by their value; structs
// and typed values go through their JSON form. The README's counter.
func TestGoNumbers(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"counter\"]\nceiling = []\n", map[string]string{"counter.lua": `
define.reducer("counter", function(state, action)
  if action.type == "add" then state.n = (state.n or 0) + action.by end
  return state
end, {init = {n = 0}})
define.method("counter", "add", function(ctx, state, input)
  propose({type = "add", by = input.by})
  return state.n + input.by
end, {kind = "command", input = {by = "number"}})
define.method("counter", "times", function(ctx, state, input) return input.k * 2 end, {input = {k = "integer"}})`})
	i := start(t, e, "a", "main")
	ctx := context.Background()
	type by struct {
		By int `json:"by"`
	}
	type count int
	total := 0.0
	for _, in := range []any{
		map[string]any{"by": 5}, map[string]any{"by": int64(5)}, map[string]any{"by": uint8(5)},
		map[string]any{"by": float32(5)}, map[string]any{"by": json.Number("5")}, map[string]any{"by": count(5)},
		map[string]int{"by": 5}, by{By: 5}, &by{By: 5},
	} {
		total += 5
		mo := i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: in})
		if mo.Status != StatusOK || mo.Result != total {
			t.Fatalf("%T %v: %+v", in, in, mo)
		}
	}
	for _, k := range []any{3, int32(3), uint64(3), json.Number("3"), 3.0} {
		if mo := i.Method(ctx, MethodCall{Owner: "counter", Method: "times", Input: map[string]any{"k": k}}); mo.Status != StatusOK || mo.Result != 6.0 {
			t.Fatalf("integer %T: %+v", k, mo)
		}
	}
	for _, k := range []any{3.5, json.Number("3.5"), float32(0.5), "3"} {
		if mo := i.Method(ctx, MethodCall{Owner: "counter", Method: "times", Input: map[string]any{"k": k}}); mo.RefusedBy != BySchema {
			t.Fatalf("integer %T %v accepted: %+v", k, k, mo)
		}
	}
}
