package server

import (
	"fmt"
	"testing"
)

// With capability trace, what behaviors print and log reaches the client
// as trace notifications, each checked against docs/protocol.schema.json
// by the peer, before the answer of the request that ran them.
func TestTraceNotifications(t *testing.T) {
	p := newPeer(t, "[bots.main]\nbehaviors = [\"p\"]\nceiling = [\"read\"]\n", map[string]string{"p.lua": `
hook.turn("start", function(b)
  print("turn", 1)
  log("warn", "no plan yet")
end)
`}, Options{}, map[string]any{"trace": true})
	p.call("start", map[string]any{"instance": "a", "bot": "main"})
	p.call("turn/begin", map[string]any{"instance": "a"})
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.traces) != 2 {
		t.Fatalf("traces %v", p.traces)
	}
	got := fmt.Sprint(p.traces[1]["level"], " ", p.traces[1]["text"], " ", p.traces[1]["program"], " ", p.traces[1]["instance"], " ", p.traces[1]["turn"])
	if got != "warn no plan yet p a 1" || p.traces[0]["level"] != "print" || p.traces[0]["text"] != "turn\t1" {
		t.Fatalf("traces %v", p.traces)
	}
}
