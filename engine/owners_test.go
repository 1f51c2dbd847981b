package engine

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// counterLua is a small owner used across the owner tests: a session
// counter with a query, a command, a protected action and a throwing action.
const counterLua = `
applied = 0
define.reducer("counter", function(state, action)
  applied = applied + 1
  if action.type == "add" then state.n = state.n + action.by
  elseif action.type == "seal" then state.sealed = true
  elseif action.type == "boom" then error("cannot fold boom")
  end
  return state
end, {init = {n = 0}, protected = {"seal"}})

define.method("counter", "get", function(ctx, state, input) return state.n end)
define.method("counter", "state", function(ctx, state, input) return state end)
define.method("counter", "applied", function(ctx, state, input) return applied end)
define.method("counter", "add", function(ctx, state, input)
  propose({type = "add", by = input.by})
  return state.n + input.by
end, {kind = "command", input = {by = "number"}})
define.method("counter", "seal", function(ctx, state, input)
  propose({type = "seal"})
  return true
end, {kind = "command"})
define.method("counter", "boom", function(ctx, state, input)
  propose({type = "add", by = 1})
  propose({type = "boom"})
  return "never"
end, {kind = "command"})
`

const counterCfg = `
[bots.main]
behaviors = ["counter"]
ceiling = ["read"]
`

func mustOK(t testing.TB, out MethodOutcome) MethodOutcome {
	t.Helper()
	if out.Status != StatusOK {
		t.Fatalf("method call: %+v", out)
	}
	return out
}

func hostCall(i *Instance, owner, method string, input any) MethodOutcome {
	return i.Method(context.Background(), MethodCall{Owner: owner, Method: method, Input: input})
}

func logLen(t testing.TB, e *Engine, log string) int64 {
	t.Helper()
	n, err := e.Store().Length(context.Background(), log)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func sessionLog(i *Instance, name string) string { return ownerLog(ScopeSession, i.Session(), name) }

// R5.4: a query records its result under the call id and appends nothing;
// :kind defaults to "query". R5.5: a command appends its proposals.
func TestQueryAndCommand(t *testing.T) {
	e := testEngine(t, counterCfg, map[string]string{"counter.lua": counterLua})
	i := start(t, e, "a", "main")
	ctx := context.Background()
	log := sessionLog(i, "counter")

	out := mustOK(t, i.Method(ctx, MethodCall{Owner: "counter", Method: "get", CallID: "q1"}))
	if out.Result != 0.0 || out.Revision != 0 || out.CallID != "q1" {
		t.Fatalf("query: %+v", out)
	}
	if n := logLen(t, e, log); n != 0 {
		t.Fatalf("a query appended: length %d", n)
	}
	rec, ok := e.calls.get(log, "q1") // outside a turn, query records stay in memory
	if !ok || string(rec.Result) != "0" {
		t.Fatalf("query result not recorded: %+v", rec)
	}

	out = mustOK(t, hostCall(i, "counter", "add", map[string]any{"by": 2.0}))
	if out.Result != 2.0 || out.Revision != 1 {
		t.Fatalf("command: %+v", out)
	}
	out = mustOK(t, hostCall(i, "counter@session", "add", map[string]any{"by": 3.0}))
	if out.Result != 5.0 || out.Revision != 2 {
		t.Fatalf("command: %+v", out)
	}
	entries, err := e.Store().Read(ctx, log, 0, 0)
	if err != nil || len(entries) != 2 {
		t.Fatal(entries, err)
	}
	// every action records the reducer revision that proposed it, then
	// its author, host and time (identity.go)
	if got := string(entries[0].Data); !strings.HasPrefix(got, `{"rev":1,"action":{"by":2,"type":"add"},"by":`) {
		t.Fatalf("stored entry %s", got)
	}
	st, rev, err := i.State(ctx, "counter")
	if err != nil || rev != 2 || !reflect.DeepEqual(st, map[string]any{"n": 5.0}) {
		t.Fatalf("state %v %d %v", st, rev, err)
	}
	// the owner metadata record is created when the owner is first opened
	meta, err := e.Store().GetRecord(ctx, "owner", log)
	if err != nil || string(meta) != `{"abi":"1"}` {
		t.Fatalf("owner record %s %v", meta, err)
	}
}

// R5.1: scopes (default session, project, global, a list: one owner and
// one log each), revision, ABI, init copied for every fold, OWNER@SCOPE
// methods.
func TestReducerScopes(t *testing.T) {
	e := testEngine(t, `
[engine]
project = "acme"
[bots.main]
behaviors = ["m"]
`, map[string]string{"m.lua": `
define.reducer("mem", function(s, a) table.insert(s.items, a.text) return s end,
  {scope = {"project", "global"}, init = {items = {}}})
define.method("mem", "put", function(ctx, s, input) propose({type = "put", text = input}) return #s.items + 1 end, {kind = "command"})
define.method("mem", "all", function(ctx, s) s.items[1] = "changed by the handler" return s.items end)
define.method("mem@global", "only_global", function() return "global" end)
define.reducer("plain", function(s, a) return s end)
define.method("plain", "scope", function(ctx) return ctx.session end)
`})
	i := start(t, e, "a", "main")
	mustOK(t, hostCall(i, "mem", "put", "p1"))
	mustOK(t, hostCall(i, "mem@project", "put", "p2"))
	mustOK(t, hostCall(i, "mem@global", "put", "g1"))
	if n := logLen(t, e, "owner/project/acme/mem"); n != 2 {
		t.Fatalf("project log length %d", n)
	}
	if n := logLen(t, e, "owner/global/-/mem"); n != 1 {
		t.Fatalf("global log length %d", n)
	}
	// the handler's state is a copy: changing it changes no fold
	for range 2 {
		out := mustOK(t, hostCall(i, "mem", "all", nil))
		if !reflect.DeepEqual(out.Result, []any{"changed by the handler", "p2"}) {
			t.Fatalf("all: %+v", out.Result)
		}
	}
	st, _, err := i.State(context.Background(), "mem@project")
	if err != nil || !reflect.DeepEqual(st, map[string]any{"items": []any{"p1", "p2"}}) {
		t.Fatalf("state %v %v", st, err)
	}
	mustOK(t, hostCall(i, "mem@global", "only_global", nil))
	out := hostCall(i, "mem@project", "only_global", nil)
	if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "method: owner mem@project has no method only_global") {
		t.Fatalf("scoped method on another scope: %+v", out)
	}
	out = hostCall(i, "mem@session", "all", nil)
	if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "owner: mem is declared with scope project, global") {
		t.Fatalf("undeclared scope: %+v", out)
	}
	out = hostCall(i, "nobody", "all", nil)
	if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "owner: no program") {
		t.Fatalf("unknown owner: %+v", out)
	}
	// a reducer with no init starts from nil; the default scope is session
	mustOK(t, hostCall(i, "plain", "scope", nil))
	if _, err := e.Store().GetRecord(context.Background(), "owner", sessionLog(i, "plain")); err != nil {
		t.Fatalf("plain is not a session owner: %v", err)
	}
}

// R5.1: bad declarations fail the load with the form's name.
func TestReducerDeclarationErrors(t *testing.T) {
	for src, want := range map[string]string{
		`define.reducer("x", function() end, {scope = "room"})`:                                       `unknown scope "room"`,
		`define.reducer("x", function() end, {scope = {"project", "project"}})`:                       "project is listed twice",
		`define.reducer("x", function() end, {revision = 0})`:                                         "option revision",
		`define.reducer("x", function() end, {migrate = {[1] = 3}})`:                                  "option migrate: revision 1: want a function",
		`define.reducer("x", function() end, {migrate = {one = function() end}})`:                     `key "one"`,
		`define.reducer("x", function() end, {init = {f = print}})`:                                   "option init",
		`define.reducer("a.b", function() end)`:                                                       "may not contain",
		`define.reducer("x", function() end) define.reducer("x", function() end)`:                     "declared twice",
		`define.reducer("x", function() end) define.method("x", "m", print, {kind = "x"})`:            `option kind`,
		`define.reducer("x", function() end) define.method("x@global", "m", print)`:                   "names scope global",
		`define.method("y", "m", print)`:                                                              "names owner y",
		`define.reducer("x", function() end) define.method("x", "m", print, {input = {a = "strin"}})`: `unknown type "strin"`,
	} {
		e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": src})
		_, err := e.Start(context.Background(), StartOptions{ID: "a", Bot: "main"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %q", src, err, want)
		}
	}
	// decimal-string migration keys are accepted (R2.7)
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("x", function(s) return s end, {revision = 3, migrate = {["1"] = function(a) return a end, [2] = function(a) return a end}})`})
	start(t, e, "a", "main")
}

// R5.5: a reducer that throws on a proposal fails the command and appends
// nothing; the failure starts with reducer:.
func TestReducerThrowAppendsNothing(t *testing.T) {
	e := testEngine(t, counterCfg, map[string]string{"counter.lua": counterLua})
	i := start(t, e, "a", "main")
	out := hostCall(i, "counter", "boom", nil)
	if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "reducer: ") || !strings.Contains(out.Error, "cannot fold boom") {
		t.Fatalf("got %+v", out)
	}
	if !strings.Contains(out.Error, "counter.lua:7:") {
		t.Fatalf("no position: %s", out.Error)
	}
	if n := logLen(t, e, sessionLog(i, "counter")); n != 0 {
		t.Fatalf("appended %d", n)
	}
	if _, err := e.Store().GetCall(context.Background(), sessionLog(i, "counter"), out.CallID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a failed command was recorded: %v", err)
	}
	// the owner still works
	mustOK(t, hostCall(i, "counter", "add", map[string]any{"by": 1.0}))
}

// R1.5: in the reducer ambient propose, call/method, call/tool, notify,
// admit/read and every register form throw "<name> is not available in the
// reducer ambient"; the reducer may change its state and action in place.
func TestReducerAmbient(t *testing.T) {
	for _, call := range []string{
		`propose({type = "x"})`, `call.method("r", "get")`, `call.tool("fs/read", {})`, `notify("hi")`,
		`admit.read("k")`, `define.tool("t", print)`, `define.reducer("z", print)`, `define.method("r", "m", print)`,
		`subscribe("r", print)`, `guard.tool("a", print)`, `hook.turn("start", print)`, `require("x")`,
		`validate.configuration(print)`, `define.command(print)`,
	} {
		name := strings.ReplaceAll(call[:strings.Index(call, "(")], ".", "/")
		e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("r", function(s, a) ` + call + ` return s end)
define.method("r", "get", function(ctx, s) return s end)
define.method("r", "put", function(ctx, s) propose({type = "x"}) end, {kind = "command"})`})
		i := start(t, e, "a", "main")
		out := hostCall(i, "r", "put", nil)
		want := name + " is not available in the reducer ambient"
		if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "reducer: ") || !strings.Contains(out.Error, want) {
			t.Errorf("%s: got %+v", call, out)
		}
	}
	// in place: the reducer changes the action and the state it was given;
	// init is copied for every fold.
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("r", function(s, a)
  a.seen = true
  table.insert(s.log, a)
  s.count = #s.log
  return s
end, {init = {log = {}, count = 0}})
define.method("r", "get", function(ctx, s) return s end)
define.method("r", "put", function(ctx, s, x) propose({type = "x", v = x}) end, {kind = "command"})`})
	i := start(t, e, "a", "main")
	mustOK(t, hostCall(i, "r", "put", 1.0))
	mustOK(t, hostCall(i, "r", "put", 2.0))
	e.owners.invalidate(sessionLog(i, "r")) // a cold fold from init
	out := mustOK(t, hostCall(i, "r", "get", nil))
	want := map[string]any{"count": 2.0, "log": []any{
		map[string]any{"type": "x", "v": 1.0, "seen": true},
		map[string]any{"type": "x", "v": 2.0, "seen": true}}}
	if !reflect.DeepEqual(out.Result, want) {
		t.Fatalf("got %#v", out.Result)
	}
	entries, _ := e.Store().Read(context.Background(), sessionLog(i, "r"), 0, 0)
	if strings.Contains(string(entries[0].Data), "seen") {
		t.Fatal("the reducer's change to an action reached the log")
	}
}

// R5.3, R5.5, R6.4: a protected action proposed without host authority is
// refused (refused_by = authority) and nothing is appended; with host
// authority it is appended, also from a nested call.
func TestProtectedActions(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"counter\", \"sealer\"]\ngrants = [\"counter.seal\"]\n", map[string]string{
		"counter.lua": counterLua,
		"sealer.lua": `
define.reducer("sealer", function(s) return s end)
define.method("sealer", "seal_counter", function(ctx) return call.method("counter", "seal") end, {kind = "command"})
define.method("sealer", "authority", function(ctx) return ctx.host_authority end)`,
	})
	i := start(t, e, "a", "main")
	ctx := context.Background()
	out := hostCall(i, "counter", "seal", nil)
	if out.Status != StatusRefused || out.RefusedBy != ByAuthority || !strings.Contains(out.Reason, "seal") {
		t.Fatalf("no authority: %+v", out)
	}
	out = hostCall(i, "sealer", "seal_counter", nil)
	if out.Status != StatusFailed || !strings.Contains(out.Error, "authority: action seal of owner counter@session is protected") {
		t.Fatalf("nested, no authority: %+v", out)
	}
	if n := logLen(t, e, sessionLog(i, "counter")); n != 0 {
		t.Fatalf("appended %d", n)
	}
	out = i.Method(ctx, MethodCall{Owner: "sealer", Method: "authority", HostAuthority: true})
	if out.Result != true {
		t.Fatalf("ctx.host_authority: %+v", out)
	}
	mustOK(t, i.Method(ctx, MethodCall{Owner: "counter", Method: "seal", HostAuthority: true}))
	mustOK(t, i.Method(ctx, MethodCall{Owner: "sealer", Method: "seal_counter", HostAuthority: true}))
	if n := logLen(t, e, sessionLog(i, "counter")); n != 2 {
		t.Fatalf("length %d", n)
	}
}

// R2.7: actions recorded under another reducer revision need a migration
// from that revision, else the call fails with revision:; a host reset is
// the other way past them.
func TestMigrations(t *testing.T) {
	v1 := `define.reducer("c", function(s, a) s.n = s.n + a.by return s end, {scope = "project", init = {n = 0}})
define.method("c", "add", function(ctx, s, x) propose({type = "add", by = x}) end, {kind = "command"})
define.method("c", "get", function(ctx, s) return s.n end)`
	v2 := `define.reducer("c", function(s, a) s.n = s.n + a.amount return s end, {scope = "project", revision = 2, init = {n = 0},
  migrate = {["1"] = function(a) a.amount = a.by * 10 a.by = nil return a end}})
define.method("c", "add", function(ctx, s, x) propose({type = "add", amount = x}) end, {kind = "command"})
define.method("c", "get", function(ctx, s) return s.n end)`
	v3 := `define.reducer("c", function(s, a) s.n = s.n + a.amount return s end, {scope = "project", revision = 3, init = {n = 0},
  migrate = {[2] = function(a) return a end}})
define.method("c", "add", function(ctx, s, x) propose({type = "add", amount = x}) end, {kind = "command"})
define.method("c", "get", function(ctx, s) return s.n end)`
	// three versions of one program: a project owner belongs to the
	// program that declared it, whatever its version
	e, edit := versionedEngine(t, "[bots.one]\nbehaviors = [\"c\"]\n[bots.two]\nbehaviors = [\"c\"]\n[bots.three]\nbehaviors = [\"c\"]\n", "c.lua", v1)
	a := start(t, e, "a", "one")
	edit("c.lua", v2)
	b := start(t, e, "b", "two")
	edit("c.lua", v3)
	c := start(t, e, "c", "three")
	mustOK(t, hostCall(a, "c", "add", 1.0))
	mustOK(t, hostCall(a, "c", "add", 2.0))
	// v2 migrates revision 1 (an integer or decimal-string key)
	if out := mustOK(t, hostCall(b, "c", "get", nil)); out.Result != 30.0 {
		t.Fatalf("migrated fold: %+v", out)
	}
	mustOK(t, hostCall(b, "c", "add", 5.0))
	if out := mustOK(t, hostCall(b, "c", "get", nil)); out.Result != 35.0 || out.Revision != 3 {
		t.Fatalf("after a revision-2 action: %+v", out)
	}
	// v3 migrates 2 but not 1
	out := hostCall(c, "c", "get", nil)
	if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "revision: reducer revision 1 has no migration to 3") {
		t.Fatalf("unmigrated: %+v", out)
	}
	// v1 cannot read revision 2
	out = hostCall(a, "c", "get", nil)
	if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "revision: reducer revision 2 has no migration to 1") {
		t.Fatalf("unmigrated: %+v", out)
	}
	if _, _, err := c.State(context.Background(), "c"); err == nil || !strings.HasPrefix(err.Error(), "revision: ") {
		t.Fatalf("state: %v", err)
	}
	// a host reset: folds restart from :init at the marker
	if err := c.ResetOwner(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}
	out = mustOK(t, hostCall(c, "c", "get", nil))
	if out.Result != 0.0 || out.Revision != 4 {
		t.Fatalf("after reset: %+v", out)
	}
	mustOK(t, hostCall(c, "c", "add", 7.0))
	if out := mustOK(t, hostCall(c, "c", "get", nil)); out.Result != 7.0 || out.Revision != 5 {
		t.Fatalf("after the reset: %+v", out)
	}
	// v2 reads past the reset but not the revision-3 action after it
	out = hostCall(b, "c", "get", nil)
	if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "revision: reducer revision 3 has no migration to 2") {
		t.Fatalf("v2 after the reset: %+v", out)
	}
}

// R2.8, R2.9: an existing shared owner keeps its ABI; a caller whose pinned
// reducer declares another is refused (refused_by = abi), others are not;
// only the host's upgrade changes it. Owners open lazily, and a mismatch
// fails only that call.
func TestOwnerABI(t *testing.T) {
	prog := func(abi string) string {
		return `define.reducer("mem", function(s, a) s.n = s.n + 1 return s end, {scope = "global", abi = "` + abi + `", init = {n = 0}})
define.method("mem", "put", function(ctx, s) propose({type = "put"}) return s.n + 1 end, {kind = "command"})
define.method("mem", "get", function(ctx, s) return s.n end)
define.reducer("own", function(s) return s end, {init = "mine"})
define.method("own", "get", function(ctx, s) return s end)`
	}
	e, edit := versionedEngine(t, "[bots.old]\nbehaviors = [\"a\"]\n[bots.new]\nbehaviors = [\"a\"]\n", "a.lua", prog("1"))
	ctx := context.Background()
	old := start(t, e, "old", "old")
	edit("a.lua", prog("2"))
	nw := start(t, e, "new", "new")
	if keys, _ := e.Store().ListRecords(ctx, "owner", ""); len(keys) != 0 {
		t.Fatalf("owners opened before any call: %v", keys) // R2.9
	}
	mustOK(t, hostCall(old, "mem", "put", nil))
	out := hostCall(nw, "mem", "put", nil)
	if out.Status != StatusRefused || out.RefusedBy != ByABI || !strings.Contains(out.Reason, `keeps ABI "1"`) {
		t.Fatalf("new ABI: %+v", out)
	}
	if _, _, err := nw.State(ctx, "mem"); err == nil || !strings.HasPrefix(err.Error(), "abi: ") {
		t.Fatalf("state read: %v", err)
	}
	// only that call fails: the instance's other owners work
	mustOK(t, hostCall(nw, "own", "get", nil))
	mustOK(t, hostCall(old, "mem", "put", nil))
	if err := e.UpgradeOwnerABI(ctx, "new", "mem"); err != nil {
		t.Fatal(err)
	}
	if out := mustOK(t, hostCall(nw, "mem", "get", nil)); out.Result != 2.0 {
		t.Fatalf("after upgrade: %+v", out)
	}
	if out := hostCall(old, "mem", "get", nil); out.RefusedBy != ByABI {
		t.Fatalf("old ABI after upgrade: %+v", out)
	}
	meta, _ := e.Store().GetRecord(ctx, "owner", "owner/global/-/mem")
	if string(meta) != `{"abi":"2"}` {
		t.Fatalf("record %s", meta)
	}
	// another engine on the same store sees the stored ABI
	e2 := testEngine(t, "[bots.old]\nbehaviors = [\"a\"]\n", map[string]string{"a.lua": prog("1")}, func(o *Options) { o.Store = e.Store() })
	if out := hostCall(start(t, e2, "old2", "old"), "mem", "get", nil); out.RefusedBy != ByABI {
		t.Fatalf("second engine: %+v", out)
	}
}

// Schemas name the path of a violation, nested lists and maps included
// (docs/forms.md); input and output violations are refused with refused_by =
// schema (R5.3).
func TestMethodSchemas(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("plan", function(s) return s end)
define.method("plan", "set", function(ctx, s, input) return input.bad_output end, {
  input = {text = "string", steps = {"string"}, ["meta?"] = {owner = "string", ["tags?"] = {"integer"}}, n = "integer?", bad_output = "any?"},
  output = {ok = "boolean"}})`})
	i := start(t, e, "a", "main")
	for _, c := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"steps": []any{}}, "input.text: want string, got nothing (the field is required)"},
		{map[string]any{"text": "t", "steps": []any{"a", 2.0}}, "input.steps[2]: want string, got number"},
		{map[string]any{"text": "t", "steps": "a"}, "input.steps: want list, got string"},
		{map[string]any{"text": "t", "steps": []any{}, "meta": map[string]any{"owner": 1.0}}, "input.meta.owner: want string, got number"},
		{map[string]any{"text": "t", "steps": []any{}, "meta": map[string]any{"owner": "o", "tags": []any{1.0, 1.5}}}, "input.meta.tags[2]: want integer, got number"},
		{map[string]any{"text": "t", "steps": []any{}, "n": 1.5}, "input.n: want integer, got number"},
		{map[string]any{"text": "t", "steps": []any{}, "bad_output": map[string]any{"ok": "yes"}}, "output.ok: want boolean, got string"},
	} {
		out := hostCall(i, "plan", "set", c.in)
		if out.Status != StatusRefused || out.RefusedBy != BySchema || out.Reason != c.want {
			t.Errorf("%v: got %+v, want %q", c.in, out, c.want)
		}
	}
	out := hostCall(i, "plan", "set", map[string]any{"text": "t", "steps": []any{"a"}, "meta": map[string]any{"owner": "o"}, "bad_output": map[string]any{"ok": true}})
	if out.Status != StatusOK || !reflect.DeepEqual(out.Result, map[string]any{"ok": true}) {
		t.Fatalf("valid: %+v", out)
	}
}

// R5.9: session owners roll back with the session; project and global
// owners are never touched.
func TestSessionRollbackOwners(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
local function add(s, a) s.n = s.n + 1 return s end
define.reducer("goal", add, {init = {n = 0}})
define.reducer("late", add, {init = {n = 0}})
define.reducer("memory", add, {scope = "project", init = {n = 0}})
for _, o in ipairs({"goal", "late", "memory"}) do
  define.method(o, "tick", function(ctx, s) propose({type = "tick"}) return s.n + 1 end, {kind = "command"})
  define.method(o, "get", function(ctx, s) return s.n end)
end`})
	ctx := context.Background()
	i := start(t, e, "a", "main")
	mustOK(t, hostCall(i, "goal", "tick", nil))
	mustOK(t, hostCall(i, "goal", "tick", nil))
	mustOK(t, hostCall(i, "memory", "tick", nil))
	revs, err := i.sessionRevs(ctx)
	if err != nil || !reflect.DeepEqual(revs, map[string]int64{sessionLog(i, "goal"): 2}) {
		t.Fatalf("revs %v %v", revs, err)
	}
	mustOK(t, hostCall(i, "goal", "tick", nil))
	mustOK(t, hostCall(i, "late", "tick", nil))
	mustOK(t, hostCall(i, "memory", "tick", nil))
	if out := mustOK(t, hostCall(i, "goal", "get", nil)); out.Result != 3.0 {
		t.Fatal(out)
	}
	if err := i.truncateSessionOwners(ctx, revs); err != nil {
		t.Fatal(err)
	}
	for owner, want := range map[string]float64{"goal": 2, "late": 0, "memory": 2} {
		if out := mustOK(t, hostCall(i, owner, "get", nil)); out.Result != want {
			t.Errorf("%s after rollback: %+v", owner, out)
		}
	}
	// another session's owners are untouched by this one's rollback
	j, err := e.Start(ctx, StartOptions{ID: "b", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, hostCall(j, "goal", "tick", nil))
	if err := i.truncateSessionOwners(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if out := mustOK(t, hostCall(j, "goal", "get", nil)); out.Result != 1.0 {
		t.Fatalf("other session: %+v", out)
	}
	if out := mustOK(t, hostCall(i, "goal", "get", nil)); out.Result != 0.0 {
		t.Fatalf("rolled back to nothing: %+v", out)
	}
}

// R5.9 through the session: a rollback to a turn end restores the session
// owners' revisions of that turn end and leaves the project owner.
func TestRollbackThroughSession(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
local function add(s, a) s.n = s.n + 1 return s end
define.reducer("goal", add, {init = {n = 0}})
define.reducer("memory", add, {scope = "project", init = {n = 0}})
for _, o in ipairs({"goal", "memory"}) do
  define.method(o, "tick", function(ctx, s) propose({type = "tick"}) return s.n + 1 end, {kind = "command"})
  define.method(o, "get", function(ctx, s) return s.n end)
end
hook.turn("start", function(b) call.method("goal", "tick") call.method("memory", "tick") end)`})
	ctx := context.Background()
	i := start(t, e, "a", "main")
	for range 2 {
		if _, err := i.BeginTurn(ctx, TurnInput{Input: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := i.EndTurn(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := i.Rollback(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if out := mustOK(t, hostCall(i, "goal", "get", nil)); out.Result != 1.0 {
		t.Fatalf("goal after rollback: %+v", out)
	}
	if out := mustOK(t, hostCall(i, "memory", "get", nil)); out.Result != 2.0 {
		t.Fatalf("memory after rollback: %+v", out)
	}
}

// R5.10: appends are durable: an instance restarted, and another engine on
// the same SQLite file, fold the same state.
func TestOwnersDurable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	open := func() store.Store {
		st, err := store.OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	e := testEngine(t, counterCfg, map[string]string{"counter.lua": counterLua}, func(o *Options) { o.Store = st })
	i := start(t, e, "a", "main")
	mustOK(t, hostCall(i, "counter", "add", map[string]any{"by": 4.0}))
	mustOK(t, i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 1.0}, CallID: "once"}))
	i, err := e.Restart(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if out := mustOK(t, hostCall(i, "counter", "get", nil)); out.Result != 5.0 {
		t.Fatalf("after restart: %+v", out)
	}
	e.Close()
	st.Close()

	st = open()
	defer st.Close()
	e = testEngine(t, counterCfg, map[string]string{"counter.lua": counterLua}, func(o *Options) { o.Store = st })
	i = start(t, e, "a", "")
	if out := mustOK(t, hostCall(i, "counter", "get", nil)); out.Result != 5.0 || out.Revision != 2 {
		t.Fatalf("new engine: %+v", out)
	}
	// the call record survived too (R5.6)
	out := mustOK(t, i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 1.0}, CallID: "once"}))
	if out.Result != 5.0 || out.Revision != 2 || logLen(t, e, sessionLog(i, "counter")) != 2 {
		t.Fatalf("replayed call after reopening: %+v", out)
	}
}

// Folding reads only the entries after the snapshot: one new action is
// applied once, never the whole log again.
func TestFoldIsIncremental(t *testing.T) {
	e := testEngine(t, counterCfg, map[string]string{"counter.lua": counterLua})
	i := start(t, e, "a", "main")
	for range 5 {
		mustOK(t, hostCall(i, "counter", "add", map[string]any{"by": 1.0}))
	}
	// 5 commands: each proposal applied once when the command was checked;
	// the snapshot kept, so no fold re-applied them.
	if out := mustOK(t, hostCall(i, "counter", "applied", nil)); out.Result != 5.0 {
		t.Fatalf("applied %v times", out.Result)
	}
	// an action appended by someone else is folded once
	data, _ := json.Marshal(map[string]any{"rev": 1, "action": map[string]any{"type": "add", "by": 10}})
	if _, err := e.Store().Append(context.Background(), sessionLog(i, "counter"), 5, [][]byte{data}, nil); err != nil {
		t.Fatal(err)
	}
	if out := mustOK(t, hostCall(i, "counter", "get", nil)); out.Result != 15.0 {
		t.Fatal(out)
	}
	if out := mustOK(t, hostCall(i, "counter", "applied", nil)); out.Result != 6.0 {
		t.Fatalf("applied %v times", out.Result)
	}
}

// The entry decoder reads what encodeEntry and encoding/json write.
func TestEntryCodec(t *testing.T) {
	e := testEngine(t, counterCfg, map[string]string{"counter.lua": counterLua})
	i := start(t, e, "a", "main")
	st := i.cur.Load().regs[0].st
	for _, v := range []any{
		map[string]any{"type": "x", "s": "quote \" back \\ nl \n tab \t uni é \u2028 😀", "n": -12.5e3, "i": 42.0, "b": true, "f": false,
			"l": []any{1.0, "a", []any{}, map[string]any{}}, "m": map[string]any{"k": []any{true}}},
	} {
		data, err := encodeEntry(3, v, nil)
		if err != nil {
			t.Fatal(err)
		}
		rev, lv, err := decodeEntry(st, data)
		if err != nil || rev != 3 {
			t.Fatal(rev, err)
		}
		got, err := st.FromLua(lv)
		if err != nil || !reflect.DeepEqual(got, v) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, v)
		}
	}
	_, lv, err := decodeEntry(st, []byte(`{"action":{"s":"\ud83d\ude00\u00e9\/"},"rev":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := st.FromLua(lv); !reflect.DeepEqual(got, map[string]any{"s": "😀é/"}) {
		t.Fatalf("escapes: %#v", got)
	}
	for _, bad := range []string{``, `[]`, `{"rev":1}`, `{"rev":1,"action":{"a":}}`, `{"rev":1,"action":"x`, `{"rev":"1","action":1}`} {
		if _, _, err := decodeEntry(st, []byte(bad)); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// versionedEngine is testEngine with a scratch pack the test edits between
// starts (each start pins the version it finds).
func versionedEngine(t *testing.T, cfg, file, src string) (*Engine, func(name, src string)) {
	fsys := fsMap{file: &fstest.MapFile{Data: []byte(src)}}
	e := testEngine(t, cfg, nil, func(o *Options) {
		o.PacksFirst = []pin.Pack{{Name: "scratch", FS: fsys}}
	})
	return e, func(name, src string) { fsys[name] = &fstest.MapFile{Data: []byte(src)} }
}
