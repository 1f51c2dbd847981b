package engine

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/attune-dev/attune/session"
)

// Host values with no JSON form (a NaN, an infinity, a cycle) inside a
// turn: the one call that brought one fails with not-plain, saying which
// call, which value and where; that failure is what is journaled, so the
// turn ends cleanly, later calls work, and a replay reproduces it
// (R3.10 journal and replay, R5.10 durability: nothing journaled is lost).

// notPlainSession runs steps in a turn of a fresh instance, ends the turn
// (which must succeed: the journal is not stopped), and checks that a
// replay re-runs every step with no divergence.
func checkReplayClean(t *testing.T, i *Instance, minSteps int) ReplayResult {
	t.Helper()
	rep, err := i.Replay(context.Background())
	if err != nil || len(rep.Diverged) != 0 || rep.Steps < minSteps {
		t.Fatalf("replay: err %v, %d steps (want >= %d), diverged %+v", err, rep.Steps, minSteps, rep.Diverged)
	}
	return rep
}

// wantNotPlain checks err is a not-plain engine error whose text has each of parts.
func wantNotPlain(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	var ee *Error
	if !errors.Is(err, ErrNotPlain) || !errors.As(err, &ee) || ee.Code != CodeNotPlain {
		t.Fatalf("%s: want a not-plain error, got %#v", what, err)
	}
	for _, p := range parts {
		if !strings.Contains(ee.Error(), p) {
			t.Errorf("%s: the error %q does not say %q", what, ee.Error(), p)
		}
	}
}

// journalOf returns the instance's journal entries.
func journalOf(t *testing.T, i *Instance) []session.Entry {
	t.Helper()
	es, err := i.sess.Load().j.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// A Go host tool's core returns NaN inside a turn, on the fast path (no
// guard or hook matches) and through the full chain (a guard and a
// :post-fail hook): the call fails not-plain with the key path, the
// :post-fail hook sees that failure, later calls and the turn's end work,
// the journal holds the failure, and a replay reproduces it without the host.
func TestNotPlainCoreResult(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
guard.tool("fs/guarded", function(c, invoke) return invoke() end)
hook.tool("fs/guarded", {post_fail = function(c, out) notify("post-fail: " .. out.error) end})`})
	var nan atomic.Bool
	nan.Store(true)
	var coreCalls atomic.Int32
	core := func(_ context.Context, c CoreCall) (any, error) {
		coreCalls.Add(1)
		if nan.Load() {
			return map[string]any{"score": math.NaN(), "name": "x"}, nil
		}
		return map[string]any{"score": 0.5}, nil
	}
	e.RegisterTool(HostTool{Path: "fs/score", Effects: []string{"read"}, Core: core})
	e.RegisterTool(HostTool{Path: "fs/guarded", Effects: []string{"read"}, Core: core})
	i := start(t, e, "a", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{Input: "go"}); err != nil {
		t.Fatal(err)
	}
	if _, err := i.BeginRound(ctx); err != nil {
		t.Fatal(err)
	}
	out := i.Tool(ctx, ToolCall{Path: "fs/score", Args: map[string]any{"q": "a"}})
	if out.Status != StatusFailed || out.Result != nil || out.Error != out.Err.Error() {
		t.Fatalf("fast path: %+v", out)
	}
	wantNotPlain(t, "fast path", out.Err, "tool fs/score: the core's result is not plain data: NaN at key path result.score", "host values must have a JSON form")
	out = i.Tool(ctx, ToolCall{Path: "fs/guarded", Args: "b"})
	if out.Status != StatusFailed {
		t.Fatalf("chain: %+v", out)
	}
	wantNotPlain(t, "chain", out.Err, "tool fs/guarded: the core's result is not plain data: NaN at key path result.score")
	if len(out.Diagnostics) != 0 {
		t.Errorf("chain diagnostics: %q", out.Diagnostics)
	}
	nan.Store(false)
	for _, p := range []string{"fs/score", "fs/guarded"} {
		if out := i.Tool(ctx, ToolCall{Path: p, Args: "c"}); out.Status != StatusOK {
			t.Fatalf("%s after the failure: %+v", p, out)
		}
	}
	end, err := i.EndRound(ctx, RoundEnd{})
	if err != nil || end.Status != StatusOK {
		t.Fatalf("round end: %+v %v", end, err)
	}
	turn, err := i.EndTurn(ctx)
	if err != nil || turn.Status != StatusOK {
		t.Fatalf("turn end: %+v %v", turn, err)
	}
	var notes []string
	for _, n := range turn.LoopEnd.Notes {
		notes = append(notes, n.Text)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "post-fail: not-plain: tool fs/guarded: the core's result") {
		t.Errorf("the :post-fail hook's notes: %q", notes)
	}
	// the journal: each failing call's core answer is journaled as its
	// failure, and the call as failed with the same text
	var cores, failed int
	for _, en := range journalOf(t, i) {
		if en.Type == session.Core && strings.HasPrefix(en.Error, "not-plain: ") && en.Value == nil {
			cores++
		}
		if en.Type == session.Tool && en.Status == StatusFailed && strings.HasPrefix(en.Error, "not-plain: ") && en.Value != nil {
			failed++
		}
	}
	if cores != 2 || failed != 2 {
		t.Errorf("journal: %d core failures, %d failed calls; want 2 and 2", cores, failed)
	}
	before := coreCalls.Load()
	nan.Store(true) // a replay that asked the host would now see NaN again
	checkReplayClean(t, i, 8)
	if coreCalls.Load() != before {
		t.Errorf("the replay called the core %d times", coreCalls.Load()-before)
	}
	// the session goes on: another turn, its boundaries flush cleanly
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	if out := i.Tool(ctx, ToolCall{Path: "fs/score", Args: "d"}); !errors.Is(out.Err, ErrNotPlain) {
		t.Fatalf("second turn: %+v", out)
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	// and a hydration reads it back
	if err := i.Hydrate(ctx); err != nil {
		t.Fatal(err)
	}
	if st := i.Turn(); st.Turn != 2 || st.InTurn {
		t.Errorf("after hydration: %+v", st)
	}
}

// Tool arguments with no JSON form inside a turn fail the call before
// anything runs (the core is not called), on the fast path and through
// the chain; the call is journaled without them and a replay fails it the
// same way.
func TestNotPlainToolArgs(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
guard.tool("fs/guarded", function(c, invoke) return invoke() end)`})
	var coreCalls atomic.Int32
	core := func(_ context.Context, c CoreCall) (any, error) { coreCalls.Add(1); return "ok", nil }
	e.RegisterTool(HostTool{Path: "fs/echo", Effects: []string{"read"}, Core: core})
	e.RegisterTool(HostTool{Path: "fs/guarded", Effects: []string{"read"}, Core: core})
	i := start(t, e, "a", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	type opts struct {
		Limit float64 `json:"limit"`
	}
	out := i.Tool(ctx, ToolCall{Path: "fs/echo", Args: map[string]any{"list": []any{1.0, math.Inf(1)}}})
	wantNotPlain(t, "fast path", out.Err, "tool fs/echo: the arguments are not plain data: +Inf at key path args.list[2]")
	out = i.Tool(ctx, ToolCall{Path: "fs/guarded", Args: &opts{Limit: math.Inf(-1)}})
	wantNotPlain(t, "chain", out.Err, "tool fs/guarded: the arguments are not plain data: -Inf at key path args.limit")
	if n := coreCalls.Load(); n != 0 {
		t.Fatalf("the core ran %d times on arguments the journal could not record", n)
	}
	for _, p := range []string{"fs/echo", "fs/guarded"} {
		if out := i.Tool(ctx, ToolCall{Path: p, Args: map[string]any{"x": 1}}); out.Status != StatusOK {
			t.Fatalf("%s: %+v", p, out)
		}
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	var left int
	for _, en := range journalOf(t, i) {
		if en.Type == session.Tool && en.NotPlain == "args" && en.Value == nil && en.Status == StatusFailed {
			left++
		}
	}
	if left != 2 {
		t.Errorf("journal: %d calls without their arguments, want 2", left)
	}
	checkReplayClean(t, i, 6)
}

// An admit/read answer with no JSON form: the script that asked gets the
// not-plain error (here it throws, failing the guarded call with that
// code), the delivery is journaled as that failure, and a replay answers
// the question with it again.
func TestNotPlainDelivery(t *testing.T) {
	ctx := context.Background()
	var reads atomic.Int32
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
guard.tool("fs/read", function(c, invoke)
  local limits = admit.read("limits")
  return invoke()
end)
hook.turn("end", function(b)
  local ok, err = pcall(admit.read, "limits")
  notify("turn end: " .. tostring(err))
end)`}, func(o *Options) {
		o.Read = func(_ context.Context, key string) (any, error) {
			reads.Add(1)
			return map[string]any{"limit": math.Inf(1)}, nil
		}
	})
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "a", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "x"})
	if out.Status != StatusFailed {
		t.Fatalf("%+v", out)
	}
	wantNotPlain(t, "guard", out.Err, "not-plain: admit/read limits: the host's answer is not plain data: +Inf at key path answer.limit")
	if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "y"}); out.Status != StatusFailed {
		t.Fatalf("the second call: %+v", out)
	}
	res, err := i.EndTurn(ctx)
	if err != nil || res.Status != StatusOK || len(res.Notes) != 1 || !strings.Contains(res.Notes[0].Text, "not-plain: admit/read limits") {
		t.Fatalf("turn end: %+v %v", res, err)
	}
	var failed int
	for _, en := range journalOf(t, i) {
		if en.Type == session.Read && en.Key == "limits" && strings.HasPrefix(en.Error, "not-plain: ") && en.Value == nil {
			failed++
		}
	}
	if failed != 3 {
		t.Errorf("journal: %d failed admit/read deliveries, want 3", failed)
	}
	before := reads.Load()
	rep := checkReplayClean(t, i, 4)
	if reads.Load() != before {
		t.Errorf("the replay asked the host")
	}
	if len(rep.Notes) != 1 || rep.Notes[0].Text != res.Notes[0].Text {
		t.Errorf("replayed notes: %+v", rep.Notes)
	}
}

// A turn input with no JSON form: BeginTurn fails not-plain before
// anything runs (no guard or hook, no turn opens, the turn number is not
// used), the refusal is journaled without the input, the next BeginTurn
// works, and a replay fails that turn the same way.
func TestNotPlainTurnInput(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
hook.turn("start", function(b) notify("turn " .. b.turn .. " began") end)`})
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "a", "main")
	cyc := map[string]any{"ok": true}
	cyc["again"] = []any{cyc}
	for _, c := range []struct {
		in    any
		parts []string
	}{
		{map[string]any{"text": "hi", "temperature": math.NaN()}, []string{"turn 1: the input is not plain data: NaN at key path input.temperature"}},
		{cyc, []string{"turn 1: the input is not plain data: a cycle", "input.again[1].again[1]"}},
		{make(chan int), []string{"a value of type chan int at key path input;"}},
	} {
		res, err := i.BeginTurn(ctx, TurnInput{Input: c.in})
		wantNotPlain(t, "BeginTurn", err, c.parts...)
		if res.Status != StatusFailed || res.Err != err || len(res.Notes) != 0 {
			t.Errorf("BeginTurn result: %+v", res)
		}
		if st := i.Turn(); st.InTurn || st.Turn != 0 {
			t.Fatalf("a turn opened: %+v", st)
		}
	}
	res, err := i.BeginTurn(ctx, TurnInput{Input: map[string]any{"text": "hi"}})
	if err != nil || res.Status != StatusOK || res.Turn != 1 || len(res.Notes) != 1 {
		t.Fatalf("the next BeginTurn: %+v %v", res, err)
	}
	if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "x"}); out.Status != StatusOK {
		t.Fatal(out)
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	var left int
	for _, en := range journalOf(t, i) {
		if en.Type == session.TurnBegin && en.Status == StatusFailed && en.NotPlain == "input" && en.Input == nil {
			left++
		}
	}
	if left != 3 {
		t.Errorf("journal: %d failed turn begins without their input, want 3", left)
	}
	checkReplayClean(t, i, 6)
	if err := i.Hydrate(ctx); err != nil {
		t.Fatal(err)
	}
	if st := i.Turn(); st.Turn != 1 || st.InTurn {
		t.Errorf("after hydration: %+v", st)
	}
}

// stats is a host library whose answers have no JSON form.
type stats struct{}

type mean struct {
	Mean  float64 `json:"mean"`
	Count int     `json:"count"`
}

func (stats) Mean() mean { return mean{Mean: math.NaN()} }

// A method whose result would be a host value with no JSON form (a host
// library's answer, here handed back by the handler): inside a turn the
// library call fails not-plain, so the method fails with that code and
// nothing is recorded; the method's journal entry, the turn's end and a
// replay are clean.
func TestNotPlainMethodResult(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
define.reducer("m", function(s) return s end, {init = {}, scope = {"session"}})
define.method("m", "mean", function(ctx, state, input) return stats.mean() end, {kind = "query"})
define.method("m", "ok", function(ctx, state, input) return {n = 1} end, {kind = "query"})`},
		func(o *Options) { o.Libraries = []HostLibrary{{Name: "stats", Value: stats{}}} })
	i := start(t, e, "a", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	out := i.Method(ctx, MethodCall{Owner: "m", Method: "mean"})
	if out.Status != StatusFailed || out.Result != nil {
		t.Fatalf("%+v", out)
	}
	wantNotPlain(t, "method", out.Err, "handler: ", "host library call stats.mean: the result is not plain data: NaN at key path result.mean")
	if out := i.Method(ctx, MethodCall{Owner: "m", Method: "ok"}); out.Status != StatusOK {
		t.Fatalf("the next method: %+v", out)
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	checkReplayClean(t, i, 4)
}

// An external call (ToolBegin/ToolEnd, as hook harnesses run them) whose
// harness reports a result with no JSON form completes as a failure with
// that error (its :post-fail hooks see it), journaled, and the session
// goes on; arguments with no JSON form fail ToolBegin before the chain.
func TestNotPlainExternal(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
guard.tool("ext/*", function(c, invoke) return invoke() end)
hook.tool("ext/*", {post_fail = function(c, out) notify("post-fail: " .. out.error) end})`})
	e.RegisterTool(echoTool("ext/run", "read"))
	i := start(t, e, "a", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	op := i.ToolBegin(ctx, ToolCall{Path: "ext/run", Args: map[string]any{"n": 1}}, "k1")
	if op.Status != StatusPending {
		t.Fatalf("begin: %+v", op)
	}
	out, err := i.ToolEnd(ctx, ToolCall{Path: "ext/run"}, "k1", map[string]any{"took": math.Inf(1)}, "")
	if err != nil || out.Status != StatusFailed {
		t.Fatalf("end: %+v %v", out, err)
	}
	wantNotPlain(t, "ToolEnd", out.Err, "tool ext/run: the result is not plain data: +Inf at key path result.took")
	op = i.ToolBegin(ctx, ToolCall{Path: "ext/run", Args: map[string]any{"n": math.NaN()}}, "k2")
	wantNotPlain(t, "ToolBegin", op.Err, "tool ext/run: the arguments are not plain data: NaN at key path args.n")
	res, err := i.EndTurn(ctx)
	if err != nil || len(res.LoopEnd.Notes) != 1 || !strings.Contains(res.LoopEnd.Notes[0].Text, "post-fail: not-plain: tool ext/run: the result") {
		t.Fatalf("turn end: %+v %v", res, err)
	}
}
