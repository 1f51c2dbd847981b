//go:build e2e

package mcpproxy_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// A result guard rewrites what attune mcp relays: the client gets the
// redacted result, or an error for a withheld one, never the upstream's.
func TestResultGuardRewritesRelayedResult(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "a.txt"), "token sk-live999 here")
	writeFile(t, filepath.Join(work, "key.pem"), "-----BEGIN PRIVATE KEY-----")
	writeFile(t, filepath.Join(dir, "pack", "redact.lua"), `
guard.result("mcp/upstream/read_text_file", function(call, outcome)
  local text = outcome.result.content[1].text
  if text:find("PRIVATE KEY") then return refuse("the file holds a private key") end
  return replace(outcome, {content = {{type = "text", text = (text:gsub("sk%-%w+", "sk-[redacted]"))}}})
end)
`)
	writeFile(t, filepath.Join(dir, "attune.toml"), `
[engine]
store = "memory:"
packs = ["pack"]
[harness.mcp.tools]
"mcp/upstream/read_text_file" = ["read"]
[bots.main]
behaviors = ["redact"]
ceiling = ["read"]
`)
	p := proxyPlan(t, filepath.Join(dir, "attune.toml"), nil, "node", fsServer(t), work)
	p.Steps = []map[string]any{
		{"op": "call", "name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(work, "a.txt")}},
		{"op": "call", "name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(work, "key.pem")}},
	}
	s := runClient(t, p)
	if r := result[toolResult](t, s[1]); r.IsError || len(r.Content) != 1 || r.Content[0].Text != "token sk-[redacted] here" {
		t.Errorf("redacted: %s", s[1].Result)
	}
	if r := result[toolResult](t, s[2]); !r.IsError || strings.Contains(string(s[2].Result), "BEGIN PRIVATE") || !strings.Contains(texts(r)[0], "the file holds a private key") {
		t.Errorf("withheld: %s", s[2].Result)
	}
}
