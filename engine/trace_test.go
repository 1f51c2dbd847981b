package engine

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/attune-dev/attune/session"
)

const traceCfg = `
[bots.main]
behaviors = ["g"]
ceiling = ["read"]
`

// Options.Trace hears each step of the chain in the order they end: the
// registrations the path matched, each guard's verdict with its marks, the
// outcome (R4.3, R4.11).
func TestTraceChain(t *testing.T) {
	var mu sync.Mutex
	var steps []TraceStep
	e := testEngine(t, traceCfg, map[string]string{"g.lua": `
guard.tool("fs/*", function(c, invoke) mark(c, "seen") return invoke() end)
guard.tool("fs/read", function(c, invoke)
  if c.args == "secret" then return refuse("no secrets") end
  return invoke()
end)
hook.tool("fs/**", {post = function(c, out) return "read " .. c.args end})
`}, func(o *Options) {
		o.Trace = func(s TraceStep) { mu.Lock(); steps = append(steps, s); mu.Unlock() }
	})
	e.RegisterTool(echoTool("fs/read", "read"))
	e.RegisterTool(echoTool("net/get", "network"))
	i := start(t, e, "a", "main")
	out := i.Tool(context.Background(), ToolCall{Path: "fs/read", Args: "secret", CallID: "c1"})
	if out.Status != StatusRefused || out.Reason != "no secrets" {
		t.Fatalf("outcome %+v", out)
	}
	var got []string
	for _, s := range steps {
		line := s.Step + " " + s.Verdict + " " + s.Reason + " " + strings.Join(s.Marks, ",")
		if s.Step == TraceMatched {
			for _, r := range s.Registrations {
				line += " " + r.Form + ":" + r.Pattern + "@" + r.Pos
			}
		}
		if s.CallID != "c1" || s.Path != "fs/read" {
			t.Errorf("step %+v: call id or path", s)
		}
		got = append(got, strings.TrimSpace(line))
	}
	want := []string{
		"matched    guard/tool:fs/*@g.lua:2 guard/tool:fs/read@g.lua:3 hook/tool:fs/**@g.lua:7",
		"guard refuse no secrets seen",
		"guard invoke  seen",
		"outcome refused no secrets seen",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	steps = nil
	if out := i.Tool(context.Background(), ToolCall{Path: "fs/read", Args: "a"}); out.Status != StatusOK {
		t.Fatalf("outcome %+v", out)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Step+":"+s.Verdict)
	}
	if w := "matched: floor:pass core:ok post:ok guard:invoke guard:invoke outcome:ok"; strings.Join(names, " ") != w {
		t.Fatalf("steps %s, want %s", strings.Join(names, " "), w)
	}
	steps = nil
	i.Tool(context.Background(), ToolCall{Path: "net/get", Args: "x"})
	if len(steps) != 1 || steps[0].Step != TraceCeiling || steps[0].RefusedBy != ByCeiling { // R4.1
		t.Fatalf("ceiling steps %+v", steps)
	}
}

// print and log reach Options.Print and the journal of the open turn,
// bounded per callback.
func TestPrintAndLog(t *testing.T) {
	var mu sync.Mutex
	var lines []Printed
	e := testEngine(t, traceCfg, map[string]string{"g.lua": `
hook.turn("start", function(b)
  print("hello", 1)
  log("warn", "careful")
  for k = 1, 70 do log("debug", "line " .. k) end
end)
`}, func(o *Options) {
		o.Print = func(p Printed) { mu.Lock(); lines = append(lines, p); mu.Unlock() }
	})
	i := start(t, e, "a", "main")
	if _, err := i.BeginTurn(context.Background(), TurnInput{Input: "go"}); err != nil {
		t.Fatal(err)
	}
	if len(lines) != MaxTracesPerCallback+1 {
		t.Fatalf("%d lines, want %d", len(lines), MaxTracesPerCallback+1)
	}
	if p := lines[0]; p.Level != "print" || p.Text != "hello\t1" || p.Program != "g" || p.Turn != 1 || p.Instance != "a" {
		t.Fatalf("first line %+v", p)
	}
	if p := lines[1]; p.Level != "warn" || p.Text != "careful" {
		t.Fatalf("second line %+v", p)
	}
	if p := lines[len(lines)-1]; !strings.Contains(p.Text, "dropped") {
		t.Fatalf("last line %+v", p)
	}
	entries, err := i.sess.Load().j.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, en := range entries {
		if en.Type == session.Trace {
			n++
			if n == 2 && (en.Kind != "warn" || en.Key != "careful" || en.Name != "g") {
				t.Fatalf("journaled %+v", en)
			}
		}
	}
	if n != MaxTracesPerCallback+1 {
		t.Fatalf("%d trace entries journaled", n)
	}
	e2 := testEngine(t, traceCfg, map[string]string{"g.lua": `hook.turn("start", function(b) log("loud", "x") end)`})
	i2 := start(t, e2, "b", "main")
	res, _ := i2.BeginTurn(context.Background(), TurnInput{Input: "go"})
	if !strings.Contains(res.Error, `level "loud" is not one of debug, info, warn, error`) {
		t.Fatalf("bad level: %+v", res)
	}
}
