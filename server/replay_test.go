package server

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"testing/fstest"

	"attune/config"
	"attune/engine"
	"attune/pin"
	"attune/store"
)

// R3.10: replay over serve returns its notes, the steps it re-ran and
// every divergence (empty when it reproduced the session); it never asks
// the host.
func TestServeReplayReportsDivergence(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := New(outW)
	// a count in a Lua global: a hydration restarts it, a replay does not
	pack := fstest.MapFS{"p.lua": {Data: []byte(`
local rounds = 0
hook.round("end", function(b) rounds = rounds + 1 notify("round " .. rounds .. " on " .. tostring(admit.read("vcs/branch"))) end)`)}}
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: store.NewMemory(), Read: srv.Read, Floor: srv.Floor,
		PacksFirst: []pin.Pack{{Name: "t", FS: pack}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv.Attach(e)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, inR); outW.Close() }()
	c := &client{t: t, in: inW, out: bufio.NewScanner(outR)}
	turn := func() {
		for _, m := range []string{"turn/begin", "round/begin", "round/end", "turn/end"} {
			if out := c.request(m, map[string]any{"instance": "a"}); out["status"] != "ok" {
				t.Fatalf("%s: %v", m, out)
			}
		}
	}
	c.request("start", map[string]any{"instance": "a", "bot": "main"})
	turn()
	reads := c.reads
	out := c.request("replay", map[string]any{"instance": "a"})
	if d, ok := out["diverged"].([]any); !ok || len(d) != 0 || out["steps"] != float64(4) {
		t.Fatalf("a clean replay: %v", out)
	}
	if c.reads != reads {
		t.Fatalf("the replay asked the host %d times", c.reads-reads)
	}
	c.request("hydrate", map[string]any{"instance": "a"})
	turn()
	out = c.request("replay", map[string]any{"instance": "a"})
	d, _ := out["diverged"].([]any)
	if len(d) != 1 {
		t.Fatalf("want one divergence, got %v", out)
	}
	first := d[0].(map[string]any)
	if first["step"] != "round-end" || first["field"] != "notes" || first["turn"] != float64(2) ||
		!strings.Contains(first["recorded"].(string), "round 1 on main") || !strings.Contains(first["replayed"].(string), "round 2 on main") {
		t.Fatalf("divergence %v", first)
	}
	inW.Close()
	<-done
}
