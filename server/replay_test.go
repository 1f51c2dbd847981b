package server

import (
	"strings"
	"testing"
)

// R3.10: replay over serve returns its notes, the steps it re-ran and
// every divergence (empty when it reproduced the session); it never asks
// the host.
func TestServeReplayReportsDivergence(t *testing.T) {
	// a count in a Lua global: a hydration restarts it, a replay does not
	c := newPeer(t, "[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\"]\n", map[string]string{"p.lua": `
local rounds = 0
hook.round("end", function(b) rounds = rounds + 1 notify("round " .. rounds .. " on " .. tostring(admit.read("vcs/branch"))) end)`},
		Options{}, map[string]any{})
	turn := func() {
		t.Helper()
		for _, m := range []string{"turn/begin", "round/begin", "round/end", "turn/end"} {
			if out := c.call(m, map[string]any{"instance": "a"}); out["status"] != "ok" {
				t.Fatalf("%s: %v", m, out)
			}
		}
	}
	reads := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.calls["host/read"]
	}
	c.call("start", map[string]any{"instance": "a", "bot": "main"})
	turn()
	before := reads()
	out := c.call("replay", map[string]any{"instance": "a"})
	if d, ok := out["diverged"].([]any); !ok || len(d) != 0 || out["steps"] != float64(4) {
		t.Fatalf("a clean replay: %v", out)
	}
	if n := reads() - before; n != 0 {
		t.Fatalf("the replay asked the host %d times", n)
	}
	c.call("hydrate", map[string]any{"instance": "a"})
	turn()
	out = c.call("replay", map[string]any{"instance": "a"})
	d, _ := out["diverged"].([]any)
	if len(d) != 1 {
		t.Fatalf("want one divergence, got %v", out)
	}
	first := d[0].(map[string]any)
	if first["step"] != "round-end" || first["field"] != "notes" || first["turn"] != float64(2) ||
		!strings.Contains(first["recorded"].(string), "round 1 on main") || !strings.Contains(first["replayed"].(string), "round 2 on main") {
		t.Fatalf("divergence %v", first)
	}
}
