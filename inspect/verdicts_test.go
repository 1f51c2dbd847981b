package inspect

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

const verdictsTOML = `
[bots.main]
behaviors = ["audit", "secrets", "flaky"]
ceiling = ["read"]
retry_budget = 2
`

var verdictPrograms = fstest.MapFS{
	"audit.lua": {Data: []byte(`
guard.tool("fs/*", function(call, invoke)
  mark(call, "audited")
  return invoke()
end)`)},
	"secrets.lua": {Data: []byte(`
guard.tool("fs/*", function(call, invoke)
  if call.args.path == ".env" then
    return refuse("secrets: .env holds secrets")
  end
  return invoke()
end)`)},
	"flaky.lua": {Data: []byte(`
guard.tool("fs/flaky", function(call, invoke)
  if call.attempt == 1 then return retry("first attempt") end
  return invoke()
end)`)},
}

// Every guard's verdict on a call is journaled with the call, in pin order
// per attempt, with the marks the call carried when it returned (R4.3,
// R4.4, R4.10): a passing guard's verdict is read from the journal, not
// inferred from the outcome. A journal written before verdicts were
// journaled still inspects, its passing guards inferred (recorded: false).
func TestGuardVerdictsJournaled(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte(verdictsTOML))
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewMemory()
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: st, PacksFirst: []pin.Pack{{Name: "scratch", FS: verdictPrograms}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, p := range []string{"fs/read", "fs/flaky"} {
		e.RegisterTool(engine.HostTool{Path: p, Effects: []string{"read"}, Core: func(context.Context, engine.CoreCall) (any, error) { return "text", nil }})
	}
	i, err := e.Start(ctx, engine.StartOptions{ID: "v", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	i.BeginTurn(ctx, engine.TurnInput{Input: "go"})
	i.BeginRound(ctx)
	outs := []engine.Outcome{
		i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "a.txt"}}),
		i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": ".env"}}),
		i.Tool(ctx, engine.ToolCall{Path: "fs/flaky", Args: map[string]any{"path": "b.txt"}}),
	}
	i.EndRound(ctx, engine.RoundEnd{})
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	if outs[0].Status != engine.StatusOK || outs[1].Status != engine.StatusRefused || outs[2].Status != engine.StatusOK {
		t.Fatalf("outcomes %+v", outs)
	}

	// the journal itself holds them
	list, err := engine.ListSessions(ctx, st)
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	raw, err := st.Read(ctx, session.LogName(list[0].Session, "v"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	journaled := 0
	for _, r := range raw {
		if strings.HasPrefix(string(r.Data), `{"t":"tool"`) && strings.Contains(string(r.Data), `"guards":[{"at":"audit.lua:2","pattern":"fs/*","verdict":"invoke","marks":["audited"]}`) {
			journaled++
		}
	}
	if journaled != 3 {
		for _, r := range raw {
			t.Logf("%s", r.Data)
		}
		t.Fatalf("%d tool entries journal the audit guard's verdict, want 3", journaled)
	}

	tl, err := Load(ctx, st, "v")
	if err != nil {
		t.Fatal(err)
	}
	var calls []Event
	for _, ev := range tl.Events {
		if ev.Kind == KindCall {
			calls = append(calls, ev)
		}
	}
	if len(calls) != 3 {
		t.Fatalf("%d calls", len(calls))
	}
	audit := GuardVerdict{At: "audit.lua:2", Pattern: "fs/*", Verdict: "invoke", Marks: []string{"audited"}}
	secretsPass := GuardVerdict{At: "secrets.lua:2", Pattern: "fs/*", Verdict: "invoke", Marks: []string{"audited"}}
	for k, want := range []struct {
		verdict string
		guards  []GuardVerdict
	}{
		{"pass", []GuardVerdict{audit, secretsPass}},
		// the audit guard invoked the rest; the secrets guard refused
		{"refuse", []GuardVerdict{audit, {At: "secrets.lua:2", Pattern: "fs/*", Verdict: "refuse", Reason: "secrets: .env holds secrets", Marks: []string{"audited"}}}},
		// attempt 1: the flaky guard asked for a retry (marks cleared, R4.10); attempt 2 ran every guard again
		{"pass", []GuardVerdict{audit, secretsPass, {At: "flaky.lua:2", Pattern: "fs/flaky", Verdict: "retry", Reason: "first attempt", Marks: []string{"audited"}},
			{At: "audit.lua:2", Pattern: "fs/*", Verdict: "invoke", Marks: []string{"audited"}, Attempt: 2},
			{At: "secrets.lua:2", Pattern: "fs/*", Verdict: "invoke", Marks: []string{"audited"}, Attempt: 2},
			{At: "flaky.lua:2", Pattern: "fs/flaky", Verdict: "invoke", Marks: []string{"audited"}, Attempt: 2}}},
	} {
		var g *Step
		for s := range calls[k].Chain {
			if calls[k].Chain[s].Step == "guards" {
				g = &calls[k].Chain[s]
			}
		}
		if g == nil || g.Verdict != want.verdict || !g.Recorded || !reflect.DeepEqual(g.Guards, want.guards) {
			a, _ := json.MarshalIndent(calls[k].Chain, "", " ")
			t.Errorf("call %d (%s): guards step:\n%s", k, calls[k].Input, a)
		}
	}

	// an older journal: no verdicts; the passing guards are inferred
	rec := &engine.Recording{Session: "old", Instances: []engine.RecordedInstance{{ID: "old", Entries: []session.Entry{
		{Type: session.TurnBegin, Turn: 1, Status: engine.StatusOK},
		{Type: session.Floor, Path: "fs/read", Value: map[string]any{"refused": false, "reason": ""}},
		{Type: session.Core, Path: "fs/read", Value: "text"},
		{Type: session.Tool, Path: "fs/read", CallID: "c1", Status: engine.StatusOK, Value: map[string]any{"path": "a.txt"}, Result: "text"},
	}}}}
	old := Build(rec)
	if ev := old.Events[1]; ev.Kind != KindCall || len(ev.Chain) < 2 || ev.Chain[1].Step != "guards" || ev.Chain[1].Recorded || ev.Chain[1].Guards != nil {
		t.Fatalf("old journal's call: %+v", ev)
	}
}

// The verdicts a call journals are bounded: at most
// engine.MaxJournaledGuards of them, a reason cut at
// engine.MaxJournaledVerdictText bytes (R4.3).
func TestGuardVerdictsBounded(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = [\"many\"]\nceiling = [\"read\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	src := `
for k = 1, 20 do
  guard.tool("fs/*", function(call, invoke) return invoke() end)
end
guard.tool("fs/*", function(call, invoke) return refuse(string.rep("é", 400)) end)
`
	st := store.NewMemory()
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: st, PacksFirst: []pin.Pack{{Name: "scratch", FS: fstest.MapFS{"many.lua": {Data: []byte(src)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.RegisterTool(engine.HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(context.Context, engine.CoreCall) (any, error) { return "text", nil }})
	i, err := e.Start(ctx, engine.StartOptions{ID: "v", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	i.BeginTurn(ctx, engine.TurnInput{Input: "go"})
	out := i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "a"}})
	i.EndTurn(ctx)
	if out.Status != engine.StatusRefused || len(out.Reason) != 800 {
		t.Fatalf("outcome %+v", out)
	}
	tl, err := Load(ctx, st, "v")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range tl.Events {
		if ev.Kind != KindCall {
			continue
		}
		g := ev.Chain[1]
		if g.Step != "guards" || len(g.Guards) != engine.MaxJournaledGuards {
			t.Fatalf("guards step %+v", g)
		}
		// the innermost guards returned first: the refusing one is kept, cut
		last := g.Guards[len(g.Guards)-1]
		if last.Verdict != "refuse" || len(last.Reason) > engine.MaxJournaledVerdictText || len(last.Reason) < engine.MaxJournaledVerdictText-2 || !utf8.ValidString(last.Reason) {
			t.Fatalf("the refusing guard's verdict: %q (%d bytes)", last.Reason, len(last.Reason))
		}
		if ev.Reason != out.Reason {
			t.Fatalf("the call's own reason was cut")
		}
		return
	}
	t.Fatal("no call in the timeline")
}
