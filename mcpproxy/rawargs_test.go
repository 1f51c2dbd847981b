//go:build e2e

package mcpproxy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Arguments no guard rewrote reach the upstream as the client wrote them
// (spacing, and a "<" encoding/json would write as \u003c); a guard's
// rewrite reaches it encoded. The upstream's input is teed to a file.
func TestArgumentsReachUpstreamAsWritten(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "pack", "echo.lua"), `
guard.tool("mcp/upstream/echo", function(c, invoke)
  if c.args.message == "rewrite me" then return invoke({message = "rewritten"}) end
  return invoke()
end)
`)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\npacks = [\"pack\"]\n[bots.main]\nbehaviors = [\"echo\"]\nceiling = []\n")
	log := filepath.Join(dir, "upstream-input.log")
	r := startRaw(t, "--config", filepath.Join(dir, "attune.toml"), "--", "sh", "-c", "tee "+log+" | node "+everythingServer(t))
	r.send(initLine)
	if m := r.recv(20 * time.Second); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	answer := func(id float64) map[string]any {
		for {
			if m := r.recv(20 * time.Second); m["id"] == id {
				return m
			}
		}
	}
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{ "message" : "a<b" }}}`)
	if m := answer(2); m["result"] == nil || strings.Contains(toJSON(m), `"isError":true`) {
		t.Fatalf("echo: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"rewrite me"}}}`)
	if m := answer(3); !strings.Contains(toJSON(m), "rewritten") {
		t.Fatalf("echo of the rewrite: %v", m)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"arguments":{ "message" : "a<b" }`, `"arguments":{"message":"rewritten"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the upstream did not receive %s:\n%s", want, b)
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
