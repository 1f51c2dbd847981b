package server

import "testing"

// R4.11: fields that do not apply are absent over serve, never empty
// strings: a tool call outside a turn or to an unknown tool carries no
// call_id; a method outcome carries only the fields that apply.
func TestServeOmitsFieldsThatDoNotApply(t *testing.T) {
	c := newPeer(t, "[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\"]\n", map[string]string{"p.lua": `
define.reducer("c", function(s, a) s.n = s.n + 1; return s end, {init = {n = 0}})
define.method("c", "get", function(ctx, s, i) return s.n end)`}, Options{}, map[string]any{})
	c.call("tools/register", map[string]any{"path": "fs/read", "effects": []string{"read"}})
	c.call("start", map[string]any{"instance": "a", "bot": "main"})
	noEmpty := func(what string, m map[string]any) {
		t.Helper()
		for k, v := range m {
			if v == "" || v == nil {
				t.Errorf("%s: field %q is %#v; a field that does not apply is absent (%v)", what, k, v, m)
			}
		}
	}
	out := c.call("tool", map[string]any{"instance": "a", "path": "fs/read", "args": map[string]any{}})
	if out["status"] != "ok" {
		t.Fatalf("tool outside a turn: %v", out)
	}
	noEmpty("tool outside a turn", out)
	out = c.call("tool", map[string]any{"instance": "a", "path": "no/such"})
	if out["status"] != "failed" {
		t.Fatalf("unknown tool: %v", out)
	}
	noEmpty("unknown tool", out)
	m := c.call("method", map[string]any{"instance": "a", "owner": "c", "method": "get"})
	if m["status"] != "ok" || m["result"] != 0.0 || m["call_id"] == nil {
		t.Fatalf("method: %v", m)
	}
	noEmpty("method", m)
	m = c.call("method", map[string]any{"instance": "a", "owner": "c", "method": "nope"})
	if m["status"] != "failed" && m["status"] != "refused" {
		t.Fatalf("unknown method: %v", m)
	}
	noEmpty("unknown method", m)
}
