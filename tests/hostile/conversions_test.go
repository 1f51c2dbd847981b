package hostile

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// bigList is plain Go data over the data limit of values (a list one
// longer than luabind.MaxDataNodes).
func bigList() []any {
	l := make([]any, luabind.MaxDataNodes)
	for i := range l {
		l[i] = i
	}
	return l
}

// lib is a host library whose answer is over the data limits, and whose
// Take counts how often it was reached.
type lib struct{ took atomic.Int32 }

func (l *lib) Big() []int                 { return make([]int, luabind.MaxDataNodes+1) }
func (l *lib) Take(m map[string]any) bool { l.took.Add(1); return m != nil }

const overLimit = "memory: over the data limit of 262144 values"

// R1.11: Go data handed to a script — a tool's arguments, a host tool's
// result, a method's input, an admit/read answer, a host library's answer,
// a turn's input — is counted against the data limits like data leaving a
// script: over them the callback it was for fails (or the script's call
// raises) with a memory error, and the registry stays usable. A host
// library's arguments are counted before gopher-luar copies them.
func TestGoDataIntoScriptsIsCounted(t *testing.T) {
	cfg, err := config.Parse("attune.toml", []byte(`[bots.main]
behaviors = ["g"]
ceiling = ["read"]
grants = ["g.put"]
`))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"g.lua": {Data: []byte(`
define.reducer("g", function(s) return s end, {init = {}, scope = {"session"}})
define.method("g", "put", function(ctx, state, input) return "took " .. #input end, {kind = "query"})
define.tool("g/args", function(ctx, args) return "took " .. #args end, {effect = {"read"}})
define.tool("g/result", function(ctx, args)
  local ok, e = pcall(call.tool, "host/big", {})
  return tostring(e)
end, {effect = {"read"}})
define.tool("g/read", function(ctx, args)
  local ok, e = pcall(admit.read, "big")
  return tostring(e)
end, {effect = {"read"}})
define.tool("g/readcycle", function(ctx, args)
  local ok, e = pcall(admit.read, "cycle")
  return tostring(e)
end, {effect = {"read"}})
define.tool("g/lib", function(ctx, args)
  local ok, e = pcall(hl.big)
  return tostring(e)
end, {effect = {"read"}})
define.tool("g/libargs", function(ctx, args)
  local t = {}
  for i = 1, 24 do t = {a = t, b = t} end
  local ok, e = pcall(hl.take, t)
  return tostring(e)
end, {effect = {"read"}})
define.tool("g/libcycle", function(ctx, args)
  local t = {}
  t.self = t
  local ok, e = pcall(hl.take, t)
  return tostring(e)
end, {effect = {"read"}})
define.tool("g/libsmall", function(ctx, args) return hl.take({a = {1, 2}}) end, {effect = {"read"}})
define.tool("g/ping", function(ctx, args) return "pong" end, {effect = {"read"}})
hook.turn("start", function(b) notify("input of " .. #b.input) end)
`)}}
	l := &lib{}
	e, err := engine.New(context.Background(), engine.Options{Config: cfg, Store: store.NewMemory(),
		PacksFirst: []pin.Pack{{Name: "hostile", FS: fsys}},
		Read: func(_ context.Context, key string) (any, error) {
			if key == "cycle" { // a Go map holding itself: ToLua recursed until the process died
				m := map[string]any{}
				m["self"] = m
				return m, nil
			}
			return bigList(), nil
		},
		Libraries: []engine.HostLibrary{{Name: "hl", Value: l}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.RegisterTool(engine.HostTool{Path: "host/big", Effects: []string{"read"},
		Core: func(context.Context, engine.CoreCall) (any, error) { return bigList(), nil }}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	i, err := e.Start(ctx, engine.StartOptions{ID: "g", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	ping := func(what string) {
		t.Helper()
		if out := i.Tool(ctx, engine.ToolCall{Path: "g/ping"}); out.Result != "pong" {
			t.Errorf("after %s the registry did not answer: %+v", what, out)
		}
	}
	// a tool's arguments from the host
	out := i.Tool(ctx, engine.ToolCall{Path: "g/args", Args: bigList()})
	if out.Status != engine.StatusFailed || !strings.Contains(out.Error, "value[262144]: "+overLimit) || engine.CodeOf(out.Err) != engine.CodeMemory {
		t.Errorf("tool arguments: %+v", out)
	}
	ping("tool arguments")
	// a method's input from the host
	mo := i.Method(ctx, engine.MethodCall{Owner: "g", Method: "put", Input: bigList()})
	if mo.Status != engine.StatusFailed || !strings.Contains(mo.Error, overLimit) {
		t.Errorf("method input: %+v", mo)
	}
	ping("method input")
	// results the script's own calls receive: a host tool's result, an
	// admit/read answer, a host library's answer
	for path, want := range map[string]string{
		"g/result":    "call.tool: value[262144]: " + overLimit,
		"g/read":      "admit.read: value[262144]: " + overLimit,
		"g/readcycle": "admit.read: value.self.self.self",
		"g/lib":       "hl.big: value[262144]: " + overLimit,
		"g/libargs":   "hl.take: argument 1.", // then the path, in pairs() order
		"g/libcycle":  "hl.take: argument 1.self.self",
	} {
		out := i.Tool(ctx, engine.ToolCall{Path: path})
		if out.Status != engine.StatusOK || !strings.Contains(out.Result.(string), want) ||
			(path == "g/libargs" && !strings.Contains(out.Result.(string), overLimit)) {
			t.Errorf("%s: %+v, want a result with %q", path, out, want)
		}
		ping(path)
	}
	if out := i.Tool(ctx, engine.ToolCall{Path: "g/libsmall"}); out.Result != true {
		t.Errorf("a small argument: %+v", out)
	}
	if n := l.took.Load(); n != 1 {
		t.Errorf("hl.take ran %d times, want once (the small argument only)", n)
	}
	// a turn's input reaches the turn-start hook in its boundary record
	res, err := i.BeginTurn(ctx, engine.TurnInput{Input: bigList()})
	if err == nil && res.Status == engine.StatusOK {
		t.Errorf("turn input: %+v", res)
	} else if text := errString(err) + res.Error; !strings.Contains(text, overLimit) {
		t.Errorf("turn input: %+v %v", res, err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
