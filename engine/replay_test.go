package engine

import (
	"context"
	"sync/atomic"
	"testing"
)

// pairsProgram joins, in pairs() order, the keys of every kind of table the
// engine hands a script: the boundary record, config, a delivery, a tool
// call's record, arguments and outcome, a method's input and the owner
// state a reducer and a method get.
const pairsProgram = `
local function keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = tostring(k) end
  return table.concat(out, ",")
end
define.reducer("bag", function(state, action)
  state[action.key] = keys(state)
  return state
end, {init = {zeta = 1, alpha = 2, mid = 3, kilo = 4}})
define.method("bag", "put", function(ctx, state, input)
  propose({type = "put", key = keys(input)})
end, {kind = "command"})
define.method("bag", "keys", function(ctx, state, input) return keys(state) end)
hook.turn("start", function(b)
  notify("record " .. keys(b) .. " config " .. keys(config()) .. " read " .. keys(admit.read("map")))
  call.method("bag", "put", {yy = 1, bb = 2, qq = 3, cc = 4})
  notify("state " .. call.method("bag", "keys", {}))
end)
guard.tool("fs/read", function(c, invoke)
  local o = invoke()
  notify("call " .. keys(c) .. " args " .. keys(c.args) .. " outcome " .. keys(o) .. " result " .. keys(o.result))
  return o
end)
`

// R3.10: a pairs()-dependent session and its replay, 50 times: the replay
// never diverges, and every run emits the same notes (sorted key order
// holds in every session, replay and process).
func TestReplayPairsOrder(t *testing.T) {
	ctx := context.Background()
	var first []string
	for run := range 50 {
		e := testEngine(t, "[bots.main]\nbehaviors = [\"keys\"]\nceiling = [\"read\"]\n[bots.main.config.keys]\nzeta = 1\nalpha = 2\nmid = 3\nbeta = 4\n",
			map[string]string{"keys.lua": pairsProgram}, func(o *Options) {
				o.Read = func(context.Context, string) (any, error) {
					return map[string]any{"zulu": 1, "bravo": 2, "yankee": 3, "alpha": 4, "kilo": 5}, nil
				}
			})
		e.RegisterTool(echoTool("fs/read", "read"))
		i := start(t, e, "main", "main")
		if _, err := i.BeginTurn(ctx, TurnInput{Input: map[string]any{"z": 1, "a": 2}}); err != nil {
			t.Fatal(err)
		}
		if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: map[string]any{"zz": 1, "aa": 2, "mm": 3, "dd": 4}}); out.Status != StatusOK {
			t.Fatalf("tool: %+v", out)
		}
		end, err := i.EndTurn(ctx)
		if err != nil || end.Status != StatusOK {
			t.Fatalf("turn end: %+v %v", end, err)
		}
		var texts []string
		for _, n := range end.LoopEnd.Notes {
			texts = append(texts, n.Text)
		}
		res, err := i.Replay(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Diverged) != 0 {
			t.Fatalf("run %d: the replay diverged: %v", run, res.Diverged)
		}
		if len(res.Notes) != len(texts) {
			t.Fatalf("run %d: replay notes %v, session notes %q", run, res.Notes, texts)
		}
		for k, n := range res.Notes {
			if n.Text != texts[k] {
				t.Fatalf("run %d: replay note %d is %q, the session's %q", run, k, n.Text, texts[k])
			}
		}
		if first == nil {
			first = texts
			want := []string{
				"record activated,bot,context_fresh,input,instance,kind,phase,round,session,turn config alpha,beta,mid,zeta read alpha,bravo,kilo,yankee,zulu",
				"state alpha,bb,cc,qq,yy,kilo,mid,zeta",
				"call args,attempt,call_id,instance,marks,path args aa,dd,mm,zz outcome diagnostics,result,status result aa,dd,mm,zz",
			}
			if len(texts) != len(want) {
				t.Fatalf("notes %q, want %q", texts, want)
			}
			for k := range want {
				if texts[k] != want[k] {
					t.Fatalf("note %d: %q, want %q", k, texts[k], want[k])
				}
			}
			continue
		}
		for k := range first {
			if texts[k] != first[k] {
				t.Fatalf("run %d: note %d is %q, run 0 emitted %q", run, k, texts[k], first[k])
			}
		}
	}
}

// R3.10, R3.11: the floor's verdict is a delivery: a floor that counts its
// calls is called once in the session and never in the replay or the
// hydration.
func TestFloorIsDelivered(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n",
		map[string]string{"g.lua": `guard.tool("fs/read", function(c, invoke) return invoke() end)`},
		func(o *Options) {
			o.Floor = func(_ context.Context, c FloorCall) (string, bool) {
				calls.Add(1)
				return "the floor says no", true
			}
		})
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "main", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "x"})
	if out.Status != StatusRefused || out.RefusedBy != ByFloor {
		t.Fatalf("tool: %+v", out)
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the floor ran %d times in the session, want 1", n)
	}
	res, err := i.Replay(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the floor ran %d more times in the replay, want 0", n-1)
	}
	if len(res.Diverged) != 0 || res.Steps != 3 {
		t.Fatalf("replay: %d steps, diverged %v", res.Steps, res.Diverged)
	}
	if err := i.Hydrate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the floor ran %d more times in the hydration, want 0", n-1)
	}
}

// R3.10: calls a harness runs in parallel (begun together, ended in turn)
// replay from the journal without asking the floor and without a
// divergence: an answer recorded in an earlier step's window is still
// there for the step that needs it.
func TestReplayInterleavedExternalCalls(t *testing.T) {
	ctx := context.Background()
	var floors atomic.Int32
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n",
		map[string]string{"g.lua": `guard.tool("fs/read", function(c, invoke) return invoke() end)
hook.tool("fs/read", {post = function(c, o) return "read " .. c.args.path end})`},
		func(o *Options) {
			o.Floor = func(_ context.Context, c FloorCall) (string, bool) {
				floors.Add(1)
				return "", false
			}
		})
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "main", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	a := i.ToolBegin(ctx, ToolCall{Path: "fs/read", Args: map[string]any{"path": "a"}}, "ka")
	b := i.ToolBegin(ctx, ToolCall{Path: "fs/read", Args: map[string]any{"path": "b"}}, "kb")
	if a.Status != StatusPending || b.Status != StatusPending {
		t.Fatalf("begin: %+v %+v", a, b)
	}
	for _, k := range []struct{ key, path string }{{"ka", "a"}, {"kb", "b"}} {
		out, err := i.ToolEnd(ctx, ToolCall{Path: "fs/read"}, k.key, "contents of "+k.path, "")
		if err != nil || out.Status != StatusOK {
			t.Fatalf("end %s: %+v %v", k.key, out, err)
		}
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	n := floors.Load()
	res, err := i.Replay(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diverged) != 0 {
		t.Fatalf("diverged: %v", res.Diverged)
	}
	if floors.Load() != n {
		t.Fatalf("the replay asked the floor %d times", floors.Load()-n)
	}
}

// R3.10, R3.2: hooks of two programs run in parallel and both read the
// same key; the host answers each differently. The replay gives each hook
// the answer the session gave it, whichever goroutine asks first.
func TestReplayParallelHooksReadTheirOwnAnswers(t *testing.T) {
	ctx := context.Background()
	prog := func(name string) string {
		return `hook.round("end", function(b) notify("` + name + ` got " .. tostring(admit.read("tick"))) end)`
	}
	for run := range 30 {
		var n atomic.Int32
		e := testEngine(t, "[bots.main]\nbehaviors = [\"a\", \"b\"]\n",
			map[string]string{"a.lua": prog("a"), "b.lua": prog("b")}, func(o *Options) {
				o.Read = func(context.Context, string) (any, error) { return float64(n.Add(1)), nil }
			})
		i := start(t, e, "main", "main")
		for range 3 {
			if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
				t.Fatal(err)
			}
			if _, err := i.BeginRound(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := i.EndRound(ctx, RoundEnd{}); err != nil {
				t.Fatal(err)
			}
			if _, err := i.EndTurn(ctx); err != nil {
				t.Fatal(err)
			}
		}
		res, err := i.Replay(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Diverged) != 0 {
			t.Fatalf("run %d: diverged: %v", run, res.Diverged)
		}
	}
}
