package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

// offloadLua: a project owner other programs call through grants.
const offloadLua = `
define.reducer("offload", function(s, a) table.insert(s.items, a.body) return s end,
  {scope = {"project", "global"}, init = {items = {}}})
define.method("offload", "put", function(ctx, s, input)
  propose({type = "put", body = input.body})
  return #s.items + 1
end, {kind = "command", input = {body = "string"}, grant = "offload-write"})
define.method("offload", "search", function(ctx, s, input)
  for _, b in ipairs(s.items) do if string.find(b, input, 1, true) then return b end end
  return false
end)
define.method("offload", "count", function(ctx, s) return #s.items end)
-- the owner's own program needs no grant
define.method("offload", "self_put", function(ctx, s, input) return call.method("offload", "put", {body = input}) end)
`

const callerLua = `
function try(owner, method, input)
  local ok, err = pcall(call.method, owner, method, input)
  if ok then return {ok = true, result = err} end
  return {ok = false, err = err}
end
define.reducer("caller", function(s) return s end)
define.method("caller", "try", function(ctx, s, input) return try(input.owner, input.method, input.input) end)
`

// R5.2, R5.3: grants. OWNER.METHOD, OWNER@SCOPE.METHOD (one scope), or
// the method's :grant in their place; the owner's own program needs none; host calls are not
// subject to grants. From script, a refusal throws CODE: right after the
// position prefix.
func TestGrants(t *testing.T) {
	e := testEngine(t, `
[bots.writer]
behaviors = ["offload", "caller"]
grants = ["offload-write", "offload@global.search"]
[bots.scout]
behaviors = ["offload", "caller"]
grants = ["offload.search"]
[bots.sneak]
behaviors = ["offload", "caller"]
grants = ["offload.put"]
`, map[string]string{"offload.lua": offloadLua, "caller.lua": callerLua})
	w, s := start(t, e, "w", "writer"), start(t, e, "s", "scout")
	try := func(i *Instance, owner, method string, input any) map[string]any {
		t.Helper()
		out := mustOK(t, hostCall(i, "caller", "try", map[string]any{"owner": owner, "method": method, "input": input}))
		return out.Result.(map[string]any)
	}
	if r := try(w, "offload", "put", map[string]any{"body": "fact one"}); r["ok"] != true || r["result"] != 1.0 {
		t.Fatalf("writer put (by :grant): %v", r)
	}
	r := try(s, "offload", "put", map[string]any{"body": "x"})
	if r["ok"] != false || !strings.HasPrefix(r["err"].(string), "caller.lua:3: grant: bot scout (program caller) has no grant offload-write") {
		t.Fatalf("scout put: %v", r)
	}
	// a method's :grant names the grant it requires, in place of OWNER.METHOD
	if r := try(start(t, e, "k", "sneak"), "offload", "put", map[string]any{"body": "x"}); r["ok"] != false || !strings.Contains(r["err"].(string), "grant: bot sneak (program caller) has no grant offload-write") {
		t.Fatalf("sneak put with OWNER.METHOD only: %v", r)
	}
	if r := try(s, "offload", "search", "one"); r["ok"] != true || r["result"] != "fact one" {
		t.Fatalf("scout search: %v", r)
	}
	if r := try(s, "offload@global", "search", "one"); r["ok"] != true || r["result"] != false {
		t.Fatalf("scout search global (OWNER.METHOD covers every scope): %v", r)
	}
	if r := try(w, "offload@global", "search", "one"); r["ok"] != true {
		t.Fatalf("writer search global (OWNER@SCOPE.METHOD): %v", r)
	}
	if r := try(w, "offload", "search", "one"); r["ok"] != false || !strings.Contains(r["err"].(string), ": grant: ") {
		t.Fatalf("writer search project (granted global only): %v", r)
	}
	if r := try(s, "offload", "count", nil); r["ok"] != false {
		t.Fatalf("scout count: %v", r)
	}
	// the owner's own program needs no grant
	if out := mustOK(t, hostCall(s, "offload", "self_put", "from the owner")); out.Result != 2.0 {
		t.Fatalf("self put: %+v", out)
	}
	// host calls are not subject to grants
	if out := mustOK(t, hostCall(s, "offload", "count", nil)); out.Result != 2.0 {
		t.Fatalf("host count: %+v", out)
	}
	// the codes of the other refusals and failures reach script the same way
	if r := try(w, "offload", "put", map[string]any{"body": 3.0}); !strings.HasPrefix(r["err"].(string), "caller.lua:3: schema: input.body: want string, got number") {
		t.Fatalf("schema from script: %v", r)
	}
	if r := try(w, "offload", "nothing", nil); !strings.HasPrefix(r["err"].(string), "caller.lua:3: method: ") {
		t.Fatalf("unknown method from script: %v", r)
	}
}

// R5.3: a throwing handler fails with handler: and the program's position;
// R5.2: output validated after the handler.
func TestHandlerFailure(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("r", function(s) return s end)
define.method("r", "throw", function(ctx, s)
  error("no good")
end)
define.method("r", "fn", function(ctx, s) return print end)
define.method("r", "propose_in_query", function(ctx, s) propose({type = "x"}) end)
define.method("r", "bad_action", function(ctx, s) propose("x") end, {kind = "command"})
define.method("r", "no_type", function(ctx, s) propose({}) end, {kind = "command"})
hook.turn("start", function() propose({type = "x"}) end)`})
	i := start(t, e, "a", "main")
	for method, want := range map[string]string{
		"throw":            "handler: p.lua:4: no good",
		"fn":               "handler: method r@session.fn",
		"propose_in_query": "handler: p.lua:7: propose is only available inside a command method",
		"bad_action":       "handler: p.lua:8: propose: an action is a table with a string field type",
		"no_type":          "handler: p.lua:9: propose: an action is a table with a string field type",
	} {
		out := hostCall(i, "r", method, nil)
		if out.Status != StatusFailed || !strings.HasPrefix(out.Error, want) {
			t.Errorf("%s: got %+v, want %q", method, out, want)
		}
	}
	res, err := i.BeginTurn(context.Background(), TurnInput{})
	if err != nil || res.Status != StatusFailed || !strings.Contains(res.Error, "propose is only available inside a command method") {
		t.Fatalf("propose in a hook: %+v %v", res, err)
	}
}

// R5.6: the same call id with the same input returns the stored result
// without reading a newer fold and without appending; another input fails
// with call-id:.
func TestCallIDReplay(t *testing.T) {
	e := testEngine(t, counterCfg, map[string]string{"counter.lua": counterLua})
	i := start(t, e, "a", "main")
	ctx := context.Background()
	log := sessionLog(i, "counter")
	add := func(id string, by float64) MethodOutcome {
		return i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": by}, CallID: id})
	}
	get := func(id string) MethodOutcome {
		return i.Method(ctx, MethodCall{Owner: "counter", Method: "get", CallID: id})
	}
	first := mustOK(t, add("c1", 2))
	q := mustOK(t, get("q1"))
	mustOK(t, add("c2", 3))
	again := mustOK(t, add("c1", 2))
	// the stored result, the owner's current revision (R5.6)
	if again.Result != first.Result || again.Revision != 2 || logLen(t, e, log) != 2 {
		t.Fatalf("replayed command: %+v (first %+v), length %d", again, first, logLen(t, e, log))
	}
	if q2 := mustOK(t, get("q1")); q2.Result != 2.0 || q.Revision != 1 || q2.Revision != 2 {
		t.Fatalf("replayed query read a newer fold: %+v", q2)
	}
	out := add("c1", 5)
	if out.Status != StatusFailed || out.Error != "call-id: call id c1 reused with a different input" {
		t.Fatalf("other input: %+v", out)
	}
	// the same id on another method of the owner is another input
	if out := i.Method(ctx, MethodCall{Owner: "counter", Method: "get", CallID: "c1", Input: map[string]any{"by": 2.0}}); !strings.HasPrefix(out.Error, "call-id: ") {
		t.Fatalf("other method: %+v", out)
	}
	if logLen(t, e, log) != 2 {
		t.Fatal("appended")
	}
}

// R5.6: the race past the call-id check is settled by the store: callers
// with one call id and one input all get the one recorded result, and one
// action is appended.
func TestCallIDRace(t *testing.T) {
	const n = 8
	arrived := make(chan struct{}, n)
	release := make(chan struct{})
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("c", function(s, a) s.n = s.n + 1 return s end, {scope = "project", init = {n = 0}})
define.method("c", "add", function(ctx, s, x)
  call.tool("barrier", {})
  propose({type = "add"})
  return ctx.instance
end, {kind = "command"})`})
	e.RegisterTool(HostTool{Path: "barrier", Core: func(context.Context, CoreCall) (any, error) {
		arrived <- struct{}{}
		<-release
		return nil, nil
	}})
	var insts []*Instance
	for k := range n {
		insts = append(insts, start(t, e, fmt.Sprint("i", k), "main"))
	}
	outs := make([]MethodOutcome, n)
	var wg sync.WaitGroup
	for k, in := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[k] = in.Method(context.Background(), MethodCall{Owner: "c", Method: "add", Input: "same", CallID: "shared"})
		}()
	}
	for range n {
		<-arrived
	}
	close(release)
	wg.Wait()
	for _, o := range outs {
		if o.Status != StatusOK || o.Result != outs[0].Result || o.Revision != 1 {
			t.Fatalf("outcomes %+v", outs)
		}
	}
	if l := logLen(t, e, ownerLog(ScopeProject, "default", "c")); l != 1 {
		t.Fatalf("length %d", l)
	}
}

// R5.7: a nested call/method gets a child call id derived from its
// parent's and shares the parent's depth budget.
func TestNestedCallIDs(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("r", function(s, a) return s end)
define.method("r", "id", function(ctx) return ctx.call_id end)
define.method("r", "outer", function(ctx)
  return {ctx.call_id, call.method("r", "id"), call.method("r", "id"), call.method("r", "inner")}
end)
define.method("r", "inner", function(ctx) return {ctx.call_id, call.method("r", "id")} end)
define.method("r", "deep", function(ctx, s, n) return call.method("r", "deep", n + 1) end)`})
	i := start(t, e, "a", "main")
	out := mustOK(t, i.Method(context.Background(), MethodCall{Owner: "r", Method: "outer", CallID: "top"}))
	want := []any{"top", "top/1", "top/2", []any{"top/3", "top/3/1"}}
	if !reflect.DeepEqual(out.Result, want) {
		t.Fatalf("got %v", out.Result)
	}
	// nested results are recorded under their own ids (R5.6 for nested calls)
	rec, ok := e.calls.get(sessionLog(i, "r"), "top/3/1") // outside a turn, query records stay in memory
	if !ok || string(rec.Result) != `"top/3/1"` {
		t.Fatalf("nested record %+v %v", rec, ok)
	}
	out = hostCall(i, "r", "deep", 0.0)
	if out.Status != StatusFailed || !strings.Contains(out.Error, "reentry: calls nested deeper than 32") {
		t.Fatalf("depth: %+v", out.Status)
	}
}

// R5.5: concurrent commands at one observed revision: exactly one wins,
// the others fail stale-revision: and nothing of theirs is appended; each
// loser retried with a new call id gets in cleanly. Run on the memory and
// the SQLite store.
func TestConcurrentCommands(t *testing.T) {
	for _, kind := range []string{"memory", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			const n = 16
			var st store.Store = store.NewMemory()
			if kind == "sqlite" {
				sq, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "state.db"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { sq.Close() })
				st = sq
			}
			var arrived atomic.Int64
			var gate sync.WaitGroup
			gate.Add(n)
			e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("c", function(s, a) table.insert(s.by, a.who) return s end, {scope = "project", init = {by = {}}})
define.method("c", "claim", function(ctx, s, x)
  if x.wait then call.tool("barrier", {}) end
  propose({type = "claim", who = ctx.instance})
  return #s.by + 1
end, {kind = "command"})
define.method("c", "all", function(ctx, s) return s.by end)`}, func(o *Options) { o.Store = st })
			e.RegisterTool(HostTool{Path: "barrier", Core: func(context.Context, CoreCall) (any, error) {
				if arrived.Add(1) <= n {
					gate.Done()
					gate.Wait() // every caller has observed revision 0
				}
				return nil, nil
			}})
			var insts []*Instance
			for k := range n {
				insts = append(insts, start(t, e, fmt.Sprintf("i%02d", k), "main"))
			}
			first := make([]MethodOutcome, n)
			final := make([]MethodOutcome, n)
			var wg sync.WaitGroup
			for k, in := range insts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx := context.Background()
					first[k] = in.Method(ctx, MethodCall{Owner: "c", Method: "claim", Input: map[string]any{"wait": true}})
					final[k] = first[k]
					for final[k].Status != StatusOK {
						if !strings.HasPrefix(final[k].Error, "stale-revision: ") {
							return
						}
						final[k] = in.Method(ctx, MethodCall{Owner: "c", Method: "claim", Input: map[string]any{"wait": false}})
					}
				}()
			}
			wg.Wait()
			winners := 0
			for _, o := range first {
				switch {
				case o.Status == StatusOK:
					winners++
					if o.Revision != 1 || o.Result != 1.0 {
						t.Errorf("winner %+v", o)
					}
				case !strings.HasPrefix(o.Error, "stale-revision: owner c@project moved from revision 0 to "):
					t.Errorf("loser %+v", o)
				}
			}
			if winners != 1 {
				t.Fatalf("%d winners at revision 0", winners)
			}
			revs := map[int64]bool{}
			for _, o := range final {
				if o.Status != StatusOK || revs[o.Revision] || float64(o.Revision) != o.Result {
					t.Fatalf("final outcomes %+v", final)
				}
				revs[o.Revision] = true
			}
			out := mustOK(t, hostCall(insts[0], "c", "all", nil))
			by := out.Result.([]any)
			if len(by) != n || out.Revision != n {
				t.Fatalf("%d actions at revision %d", len(by), out.Revision)
			}
			seen := map[any]bool{}
			for _, w := range by {
				seen[w] = true
			}
			if len(seen) != n {
				t.Fatalf("claims %v", by)
			}
		})
	}
}

// R5.8: subscriptions run in the callback ambient after actions are
// appended, once per action, in append order, in every live instance whose
// pin subscribes to that log (a session owner: only that session's
// instances), before the appending call returns.
func TestSubscriptions(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	e := testEngine(t, `
[bots.main]
behaviors = ["owner", "watch"]
[bots.other]
behaviors = ["watch_only"]
`, map[string]string{
		"owner.lua": `
define.reducer("log", function(s, a) return s end, {scope = {"session", "project"}})
define.method("log", "write", function(ctx, s, input)
  for _, x in ipairs(input) do propose({type = "line", text = x}) end
  return #input
end, {kind = "command"})`,
		"watch.lua": `
subscribe("log", function(ctx, action) call.tool("seen", {where = ctx.instance, scope = "session", text = action.text}) end)
subscribe("log@project", function(ctx, action)
  call.tool("seen", {where = ctx.instance, scope = "project", text = action.text})
  action.text = "changed"
end)
subscribe("log@project", function(ctx, action) call.tool("seen", {where = ctx.instance, scope = "project2", text = action.text}) end)`,
		"watch_only.lua": `
subscribe("log@project", function(ctx, action) call.tool("seen", {where = ctx.instance, scope = "project", text = action.text}) end)
subscribe("log", function(ctx, action) error("a session subscription of another session ran") end)`,
	})
	e.RegisterTool(HostTool{Path: "seen", Core: func(_ context.Context, c CoreCall) (any, error) {
		m := c.Args.(map[string]any)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %s", m["where"], m["scope"], m["text"]))
		mu.Unlock()
		return nil, nil
	}})
	ctx := context.Background()
	a := start(t, e, "a", "main")
	if _, err := e.Start(ctx, StartOptions{ID: "b", Bot: "main", Session: a.Session()}); err != nil {
		t.Fatal(err)
	}
	c := start(t, e, "c", "main")       // another session
	d := start(t, e, "d", "other")      // subscribes, declares no owner
	stopped := start(t, e, "z", "main") // not live: never notified
	stopped.Stop()
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
	out := mustOK(t, hostCall(a, "log", "write", []any{"one", "two"}))
	if len(out.Diagnostics) != 0 {
		t.Fatal(out.Diagnostics)
	}
	got := take()
	want := []string{"a session one", "b session one", "a session two", "b session two"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("session owner:\n got %q\nwant %q", got, want)
	}
	mustOK(t, hostCall(c, "log@project", "write", []any{"p1", "p2"}))
	got = take()
	want = nil
	for _, text := range []string{"p1", "p2"} {
		for _, in := range []string{"a", "b", "c"} {
			want = append(want, in+" project "+text, in+" project2 "+text) // each handler gets its own copy
		}
		want = append(want, "d project "+text)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("project owner:\n got %q\nwant %q", got, want)
	}
	_ = d
}

// R5.8: a subscription that fails is reported beside the result; the
// actions stay appended.
func TestSubscriptionFailure(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("r", function(s) return s end)
define.method("r", "put", function(ctx) propose({type = "x"}) return "done" end, {kind = "command"})
subscribe("r", function(ctx, a) error("subscriber broke") end)
subscribe("r", function(ctx, a) propose({type = "y"}) end)`})
	i := start(t, e, "a", "main")
	out := mustOK(t, hostCall(i, "r", "put", nil))
	if out.Result != "done" || len(out.Diagnostics) != 2 || !strings.Contains(out.Diagnostics[0], "subscriber broke") ||
		!strings.Contains(out.Diagnostics[1], "propose is only available inside a command method") {
		t.Fatalf("got %+v", out)
	}
	if logLen(t, e, sessionLog(i, "r")) != 1 {
		t.Fatal("not appended")
	}
}

// A handler runs with no owner lock held: a query on the same owner runs
// while a command's handler waits.
func TestNoLockAcrossHandler(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("c", function(s, a) s.n = s.n + 1 return s end, {scope = "project", init = {n = 0}})
define.method("c", "slow", function(ctx, s) call.tool("wait", {}) propose({type = "x"}) return s.n end, {kind = "command"})
define.method("c", "add", function(ctx, s) propose({type = "x"}) return s.n + 1 end, {kind = "command"})`})
	e.RegisterTool(HostTool{Path: "wait", Core: func(context.Context, CoreCall) (any, error) { close(entered); <-release; return nil, nil }})
	a, b := start(t, e, "a", "main"), start(t, e, "b", "main")
	done := make(chan MethodOutcome)
	go func() { done <- hostCall(a, "c", "slow", nil) }()
	<-entered
	ch := make(chan MethodOutcome)
	go func() { ch <- hostCall(b, "c", "add", nil) }()
	select {
	case out := <-ch:
		mustOK(t, out)
	case <-time.After(5 * time.Second):
		t.Fatal("a command waited for another's handler")
	}
	close(release)
	if out := <-done; !strings.HasPrefix(out.Error, "stale-revision: owner c@project moved from revision 0 to 1") {
		t.Fatalf("slow: %+v", out)
	}
}

// R3.10, R5.6: host method calls made during a turn are journaled and a
// replay answers them from their call records without appending.
func TestReplayAnswersMethods(t *testing.T) {
	e := testEngine(t, counterCfg, map[string]string{"counter.lua": counterLua})
	i := start(t, e, "a", "main")
	ctx := context.Background()
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	mustOK(t, hostCall(i, "counter", "add", map[string]any{"by": 1.0}))
	mustOK(t, hostCall(i, "counter", "get", nil))
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := i.Replay(ctx); err != nil {
		t.Fatal(err)
	}
	if l := logLen(t, e, sessionLog(i, "counter")); l != 1 {
		t.Fatalf("replay appended: %d", l)
	}
}
