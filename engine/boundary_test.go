package engine

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func texts(ns []Note) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, n.Kind+":"+n.Text)
	}
	return out
}

const twoProgCfg = `
[bots.main]
behaviors = ["a", "b"]
`

// ok fails the test unless a boundary step succeeded.
func ok(t *testing.T) func(BoundaryResult, error) BoundaryResult {
	return func(r BoundaryResult, err error) BoundaryResult {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != StatusOK {
			t.Fatalf("boundary %+v", r)
		}
		return r
	}
}

// R3.1, R3.2: guards run when the boundary opens; hooks run in parallel on
// copies of the record; notes in pin order then declaration order.
func TestBoundaryHooksAndOrder(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, twoProgCfg, map[string]string{
		"a.lua": `
guard.round(function(b, invoke) if b.phase ~= "start" then error("guard at end") end return invoke() end)
hook.round("end", function(b) b.turn = 99 notify("a1 " .. b.turn, "ambient") end)
hook.round("end", function(b) notify("a2", "ambient") end)`,
		"b.lua": `
hook.round("end", function(b) notify("b1 turn " .. b.turn .. " out " .. tostring(b.output), "activating") end)`,
	})
	i := start(t, e, "x", "main")
	ok(t)(i.BeginTurn(ctx, TurnInput{Input: "hi"}))
	ok(t)(i.BeginRound(ctx))
	out := "reply"
	r := ok(t)(i.EndRound(ctx, RoundEnd{Output: &out}))
	want := []string{"ambient:a1 99", "ambient:a2", "activating:b1 turn 1 out reply"}
	if !reflect.DeepEqual(texts(r.Notes), want) || !r.Continue {
		t.Fatalf("notes %v continue %v", texts(r.Notes), r.Continue)
	}
}

// R3.3: a refusing guard runs :post-fail and the boundary does not open; a
// throwing hook fails the boundary after the others ran.
func TestBoundaryRefusalAndThrow(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, twoProgCfg, map[string]string{
		"a.lua": `
failed = {}
local tries = 0
guard.round(function(b, invoke) tries = tries + 1 if tries == 1 then return refuse("not yet") end return invoke() end)
hook.round("start", function(b) error("boom") end, {post_fail = function(b, f) failed[#failed+1] = f.by .. ":" .. (f.reason or f.error) end})`,
		"b.lua": `hook.round("start", function(b) notify("b ran", "ambient") end)`,
	})
	i := start(t, e, "x", "main")
	ok(t)(i.BeginTurn(ctx, TurnInput{}))
	r, err := i.BeginRound(ctx)
	if err != nil || r.Status != StatusRefused || r.Reason != "not yet" {
		t.Fatalf("refused round: %+v %v", r, err)
	}
	if ts := i.Turn(); ts.Round != 0 || ts.InRound {
		t.Fatalf("round opened after refusal")
	}
	r, err = i.BeginRound(ctx)
	if err != nil || r.Status != StatusFailed || !strings.Contains(r.Error, "a.lua:5:") || !strings.Contains(r.Error, "boom") {
		t.Fatalf("throwing hook: %+v %v", r, err)
	}
	if !reflect.DeepEqual(texts(r.Notes), []string{"ambient:b ran"}) {
		t.Fatalf("other hooks should run and their notes be placed: %v", texts(r.Notes))
	}
	reg := i.cur.Load().regs[0]
	got, _ := reg.st.FromLua(reg.st.L.GetGlobal("failed"))
	if l, _ := got.([]any); len(l) != 2 || l[0] != "guard:not yet" || !strings.Contains(l[1].(string), "error:") {
		t.Fatalf("post-fail saw %v", got)
	}
}

// R3.5, R3.6, R3.7: round-start notes never continue; ambient notes never
// continue; placement consumes; unplaced notes expire at the seal.
func TestNotesLifecycle(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\n", map[string]string{"a.lua": `
hook.round("start", function(b) notify("start " .. b.round, "activating") end)
hook.round("end", function(b) if b.round == 1 then notify("amb", "ambient") end end)
hook.turn("end", function(b) notify("bye", "ambient") end)`})
	i := start(t, e, "x", "main")
	ok(t)(i.BeginTurn(ctx, TurnInput{}))
	r := ok(t)(i.BeginRound(ctx))
	if !reflect.DeepEqual(texts(r.Notes), []string{"activating:start 1"}) {
		t.Fatalf("round 1 placed %v", texts(r.Notes))
	}
	r = ok(t)(i.EndRound(ctx, RoundEnd{}))
	if r.Continue {
		t.Fatal("an ambient note or a round-start note continued the loop")
	}
	r = ok(t)(i.BeginRound(ctx))
	if !reflect.DeepEqual(texts(r.Notes), []string{"ambient:amb", "activating:start 2"}) {
		t.Fatalf("round 2 placed %v", texts(r.Notes))
	}
	placed := r.Notes[0].ID
	if err := i.Consume(ctx, placed); err == nil || err.Error() != "note "+placed+" already consumed" {
		t.Fatalf("consume placed: %v", err)
	}
	ok(t)(i.EndRound(ctx, RoundEnd{HostContinue: true}))
	r = ok(t)(i.EndTurn(ctx, "host addendum"))
	if len(r.Notes) != 1 {
		t.Fatalf("turn end notes %v", texts(r.Notes))
	}
	bye := r.Notes[0].ID
	if err := i.Consume(ctx, bye); err == nil || err.Error() != "note "+bye+" expired" {
		t.Fatalf("consume expired: %v", err)
	}
	// R3.8: the loop-end result joins host addenda and notes.
	if r.LoopEnd == nil || !reflect.DeepEqual(r.LoopEnd.Addenda, []string{"host addendum"}) || len(r.LoopEnd.Notes) != 4 {
		t.Fatalf("loop end %+v", r.LoopEnd)
	}
}

// R3.11: hydration in the middle of a turn restores the open turn and
// round, notes and consumption; it runs nothing and emits nothing.
func TestHydrateMidTurn(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\n", map[string]string{"a.lua": `
hook.round("end", function(b) notify("end " .. b.round, "activating") end)
hook.turn("start", function(b) notify("hello", "ambient") end)`})
	i := start(t, e, "x", "main")
	ok(t)(i.BeginTurn(ctx, TurnInput{Input: "go"}))
	r1 := ok(t)(i.BeginRound(ctx))
	ok(t)(i.EndRound(ctx, RoundEnd{}))
	// crash: the process dies here; a new process brings the instance back
	if err := i.Hydrate(ctx); err != nil {
		t.Fatal(err)
	}
	ts := i.Turn()
	turn, round, inTurn, inRound := ts.Turn, ts.Round, ts.InTurn, ts.InRound
	if turn != 1 || round != 1 || !inTurn || inRound {
		t.Fatalf("hydrated turn=%d round=%d inTurn=%v inRound=%v", turn, round, inTurn, inRound)
	}
	if err := i.Consume(ctx, r1.Notes[0].ID); err == nil || !strings.Contains(err.Error(), "already consumed") {
		t.Fatalf("a consumed note must stay consumed: %v", err)
	}
	r := ok(t)(i.BeginRound(ctx))
	if !reflect.DeepEqual(texts(r.Notes), []string{"activating:end 1"}) || r.Round != 2 {
		t.Fatalf("after hydration round 2 placed %v (round %d)", texts(r.Notes), r.Round)
	}
	ok(t)(i.EndRound(ctx, RoundEnd{}))
	ok(t)(i.EndTurn(ctx))
}

// R3.10: replay re-runs the recorded boundaries and calls through fresh
// registries, answering the host from the journal.
func TestReplay(t *testing.T) {
	ctx := context.Background()
	reads, cores := 0, 0
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\nceiling = [\"read\"]\n", map[string]string{"a.lua": `
hook.round("end", function(b) notify("branch " .. tostring(admit.read("vcs/branch")), "ambient") end)
hook.tool("fs/read", {post = function(c, o) notify("read " .. tostring(o.result), "ambient") end})`},
		func(o *Options) {
			o.Read = func(_ context.Context, key string) (any, error) { reads++; return "main", nil }
		})
	e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(context.Context, CoreCall) (any, error) { cores++; return "data", nil }})
	i := start(t, e, "x", "main")
	ok(t)(i.BeginTurn(ctx, TurnInput{}))
	ok(t)(i.BeginRound(ctx))
	if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "f"}); out.Status != StatusOK {
		t.Fatal(out)
	}
	ok(t)(i.EndRound(ctx, RoundEnd{}))
	ok(t)(i.EndTurn(ctx))
	reads, cores = 0, 0
	res, err := i.Replay(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reads != 0 || cores != 0 {
		t.Fatalf("replay called the host: %d reads, %d cores", reads, cores)
	}
	if !reflect.DeepEqual(texts(res.Notes), []string{"ambient:read data", "ambient:branch main"}) {
		t.Fatalf("replay notes %v", texts(res.Notes))
	}
}

// R2.5: a re-attuned pin applies when the next turn starts.
func TestAttuneAtTurnStart(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\n", map[string]string{"a.lua": `hook.round("end", function(b) notify("v1", "ambient") end)`})
	i := start(t, e, "x", "main")
	ok(t)(i.BeginTurn(ctx, TurnInput{}))
	ok(t)(i.BeginRound(ctx))
	// the file changes on disk; attune during the turn
	e.packs[0].FS.(fsMap)["a.lua"].Data = []byte(`hook.round("end", function(b) notify("v2", "ambient") end)`)
	if err := i.Attune(ctx); err != nil {
		t.Fatal(err)
	}
	r := ok(t)(i.EndRound(ctx, RoundEnd{}))
	if texts(r.Notes)[0] != "ambient:v1" {
		t.Fatalf("running turn switched handlers: %v", texts(r.Notes))
	}
	ok(t)(i.EndTurn(ctx))
	ok(t)(i.BeginTurn(ctx, TurnInput{}))
	ok(t)(i.BeginRound(ctx))
	r = ok(t)(i.EndRound(ctx, RoundEnd{}))
	if texts(r.Notes)[0] != "ambient:v2" {
		t.Fatalf("next turn kept the old pin: %v", texts(r.Notes))
	}
}

// R2.6: registries are reference-counted; 1,000 re-attunements leak no
// Lua state.
func TestNoStateLeakAcrossAttunes(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\n", map[string]string{"a.lua": `hook.round("end", function(b) end)`})
	i := start(t, e, "x", "main")
	before := e.liveStates.Load()
	for k := 0; k < 1000; k++ {
		if err := i.Attune(ctx); err != nil {
			t.Fatal(err)
		}
		ok(t)(i.BeginTurn(ctx, TurnInput{}))
		ok(t)(i.EndTurn(ctx))
	}
	if after := e.liveStates.Load(); after != before {
		t.Fatalf("live Lua states: %d before, %d after 1000 re-attunements", before, after)
	}
}

// R3.12, R2.3: a child gets its own bot's selection, a new session, the
// parent's lineage; it dispatches only its own hooks.
func TestSpawn(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\n[bots.worker]\nbehaviors = [\"b\"]\n", map[string]string{
		"a.lua": `hook.round("end", function(b) notify("parent hook", "ambient") end)`,
		"b.lua": `hook.round("end", function(b) notify("child hook", "ambient") end)`,
	})
	p := start(t, e, "p", "main")
	c, err := p.Spawn(ctx, SpawnOptions{ID: "c", Bot: "worker", Role: RoleWorker})
	if err != nil {
		t.Fatal(err)
	}
	if c.Session() == p.Session() || c.rec.Parent != "p" || len(c.rec.Lineage) == 0 {
		t.Fatalf("child record %+v", c.rec)
	}
	if c.Pin().Programs[0].Name != "b" {
		t.Fatalf("child pin %+v", c.Pin())
	}
	ok(t)(c.BeginTurn(ctx, TurnInput{}))
	ok(t)(c.BeginRound(ctx))
	r := ok(t)(c.EndRound(ctx, RoundEnd{}))
	if !reflect.DeepEqual(texts(r.Notes), []string{"ambient:child hook"}) {
		t.Fatalf("child dispatched %v", texts(r.Notes))
	}
}

// BenchmarkRoundEmpty: round-begin + round-end with 4 programs each holding
// a round hook.
func BenchmarkRoundEmpty(b *testing.B) {
	ctx := context.Background()
	progs := map[string]string{}
	for k := 0; k < 4; k++ {
		progs[fmt.Sprintf("p%d.lua", k)] = `hook.round("end", function(b) end)`
	}
	e := testEngine(b, "[bots.main]\nbehaviors = [\"p0\", \"p1\", \"p2\", \"p3\"]\n", progs)
	i := start(b, e, "x", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := i.BeginRound(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := i.EndRound(ctx, RoundEnd{}); err != nil {
			b.Fatal(err)
		}
	}
}

// R2.6: work started during a turn keeps the registries it started with
// after a re-attunement; the old registries are released when the last work
// holding them ends.
func TestWorkKeepsItsRegistries(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\n[bots.worker]\nbehaviors = [\"a\"]\n", map[string]string{"a.lua": `
guard.tool("t/*", function(c, invoke) local o = invoke() o.result = "v1" return o end)
hook.tool("t/*", {post = function(c, o) return "v1 hook" end})`})
	e.RegisterTool(echoTool("t/x"))
	p := start(t, e, "p", "main")
	ok(t)(p.BeginTurn(ctx, TurnInput{}))
	child, err := p.Spawn(ctx, SpawnOptions{ID: "c", Bot: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	old := p.cur.Load()
	e.packs[0].FS.(fsMap)["a.lua"].Data = []byte(`hook.tool("t/*", {post = function(c, o) return "v2 hook" end})`)
	if err := p.Attune(ctx); err != nil {
		t.Fatal(err)
	}
	// the running turn and the child keep what they started with
	if out := p.Tool(ctx, ToolCall{Path: "t/x"}); out.Diagnostics[0] != "v1 hook" {
		t.Fatalf("the running turn switched: %+v", out)
	}
	ok(t)(p.EndTurn(ctx))
	ok(t)(p.BeginTurn(ctx, TurnInput{}))
	if out := p.Tool(ctx, ToolCall{Path: "t/x"}); out.Diagnostics[0] != "v2 hook" {
		t.Fatalf("the next turn kept the old pin: %+v", out)
	}
	if out := child.Tool(ctx, ToolCall{Path: "t/x"}); out.Diagnostics[0] != "v1 hook" {
		t.Fatalf("the child lost its registries: %+v", out)
	}
	if old.refs.Load() != 0 || old.regs != nil {
		t.Fatalf("the parent's old registries are still held: refs %d", old.refs.Load())
	}
}

// A host may call tools from several goroutines while another drives the
// boundaries, hydrates or rolls back (run under -race).
func TestConcurrentHostCalls(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\nceiling = [\"read\"]\n", map[string]string{"a.lua": `
hook.tool("t/hooked", {post = function(c, o) notify("saw " .. tostring(o.result)) end})
hook.round("end", function(b) notify("round " .. b.round) end)`})
	e.RegisterTool(echoTool("t/x", "read"))
	e.RegisterTool(echoTool("t/hooked", "read"))
	i := start(t, e, "a", "main")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				path := "t/x"
				if k%2 == 0 {
					path = "t/hooked"
				}
				if out := i.Tool(ctx, ToolCall{Path: path, Args: float64(k)}); out.Status != StatusOK {
					t.Errorf("goroutine %d call %d: %+v", g, k, out)
					return
				}
			}
		}(g)
	}
	for turn := 0; turn < 20; turn++ {
		ok(t)(i.BeginTurn(ctx, TurnInput{}))
		ok(t)(i.BeginRound(ctx))
		ok(t)(i.EndRound(ctx, RoundEnd{}))
		if turn%5 == 0 {
			if err := i.Hydrate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		ok(t)(i.EndTurn(ctx))
	}
	close(stop)
	wg.Wait()
}

// R3.2: a boundary record is a copy for its handler alone, across
// boundaries too: what one hook writes, no later hook or boundary sees.
func TestBoundaryRecordsStayClean(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\n", map[string]string{"a.lua": `
hook.round("end", function(b)
  notify(tostring(b.mine) .. " " .. tostring(b.round) .. " " .. tostring(b.output))
  b.mine = "left over"
  b.round = 99
  b.output = "changed"
end)`})
	i := start(t, e, "x", "main")
	ok(t)(i.BeginTurn(ctx, TurnInput{}))
	var got []string
	for k := 0; k < 3; k++ {
		ok(t)(i.BeginRound(ctx))
		r := ok(t)(i.EndRound(ctx, RoundEnd{}))
		got = append(got, r.Notes[0].Text)
	}
	want := []string{"nil 1 nil", "nil 2 nil", "nil 3 nil"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
