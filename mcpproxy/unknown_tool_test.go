//go:build e2e

package mcpproxy_test

import (
	"path/filepath"
	"testing"
	"time"
)

// A tools/call of a tool the proxy does not list is invalid params, and the
// message says so once: "attune mcp: unknown tool NAME".
func TestUnknownToolMessage(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	r := startRaw(t, "--config", filepath.Join(dir, "attune.toml"), "--", "node", everythingServer(t))
	r.send(initLine)
	if m := r.recv(20 * time.Second); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nosuch","arguments":{}}}`)
	m := r.recv(20 * time.Second)
	for m["id"] == nil { // the server's notifications (tools/list_changed, ...)
		m = r.recv(20 * time.Second)
	}
	if code, msg := errorOf(m); code != -32602 || msg != "attune mcp: unknown tool nosuch" {
		t.Errorf("tools/call of an unknown tool: %v", m)
	}
}
