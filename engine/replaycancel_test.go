package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/session"
)

// R3.10: a step the host's ctx ended while its script ran replays clean:
// when the host gave up is not in the journal, so the replayed step, ended
// by its own budget, matches it as a cancellation. A cancellation does not
// match a step that answered or failed otherwise.
func TestReplayAfterHostCancel(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[engine]\ncallback_budget = \"200ms\"\n[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n",
		map[string]string{"g.lua": `
guard.tool("fs/read", function(c, invoke)
  if c.args == "loop" then
    while true do end
  end
  return invoke()
end)`})
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "q", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	for _, cause := range []func() (context.Context, context.CancelFunc){
		func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 30*time.Millisecond) },
		func() (context.Context, context.CancelFunc) {
			c, cancel := context.WithCancel(ctx)
			time.AfterFunc(30*time.Millisecond, cancel)
			return c, cancel
		},
	} {
		cctx, cancel := cause()
		out := i.Tool(cctx, ToolCall{Path: "fs/read", Args: "loop"})
		cancel()
		if out.Status != StatusFailed || !hostCancelled(string(CodeOf(out.Err))) {
			t.Fatalf("the cancelled call: %+v", out)
		}
	}
	if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "x"}); out.Status != StatusOK {
		t.Fatalf("a call after them: %+v", out)
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := i.Replay(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diverged) != 0 || res.Steps != 5 {
		t.Fatalf("replay: %d steps, diverged %v", res.Steps, res.Diverged)
	}

	// the match is for a recorded host cancellation only, told by the
	// entry's code, never by its text
	for _, c := range []struct {
		want, got         Code
		wantText, gotText string
		diverges          bool
	}{
		{CodeScript, CodeBudget, "g.lua:4: boom", "g.lua:4: cancelled: time budget", true},
		{CodeBudget, CodeScript, "g.lua:4: cancelled: time budget", "g.lua:4: boom", true},
		{CodeCancelled, CodeScript, "g.lua:4: cancelled: context canceled", "g.lua:4: boom", true},
		// a script's own text that reads like a cancellation is not one
		{CodeScript, CodeBudget, "g.lua:4: cancelled: context canceled", "g.lua:4: cancelled: time budget", true},
		{CodeCancelled, CodeBudget, "g.lua:4: cancelled: context canceled", "g.lua:4: cancelled: time budget", false},
		{CodeCancelled, CodeCancelled, "g.lua:4: cancelled: context deadline exceeded", "g.lua:9: cancelled: context canceled", false},
	} {
		en := session.Entry{Type: session.Tool, Path: "fs/read", Status: StatusFailed, Error: c.wantText, Code: string(c.want)}
		d := compareStep(0, en, stepOutcome{Status: StatusFailed, Error: c.gotText, Code: string(c.got)}, nil, nil, nil, false)
		if diverged := len(d) == 1 && strings.Contains(d[0].String(), "error"); diverged != c.diverges || (!c.diverges && len(d) != 0) {
			t.Fatalf("recorded %s %q, replayed %s %q: %v, want divergence %v", c.want, c.wantText, c.got, c.gotText, d, c.diverges)
		}
	}
	// the journal keeps the code of each cancelled step
	entries, err := session.OpenJournal(e.Store(), i.Session(), i.ID()).Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, en := range entries {
		if en.Type == session.Tool && en.Status == StatusFailed {
			codes = append(codes, en.Code)
		}
	}
	if len(codes) != 2 || codes[0] != string(CodeCancelled) || codes[1] != string(CodeCancelled) {
		t.Fatalf("the cancelled calls' codes in the journal: %v", codes)
	}
}
