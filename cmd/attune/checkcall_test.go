package main

import (
	"strings"
	"testing"
)

// R9.2: attune check warns when a handler's parameter named call hides
// the call namespace and is then used as call.method or call.tool, in Lua
// and in the Scheme-style forms, and stays quiet for the record named c.
func TestCheckWarnsShadowedCall(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pack/shadow.lua", `guard.tool("fs/*", function(call, invoke)
  local n = call.method("tasks", "incomplete", {})
  return invoke()
end)
hook.tool("fs/read", {post = function(call, outcome)
  call.tool("fs/list", {})
end})
guard.tool("kv/*", function(c, invoke)
  call.method("tasks", "incomplete", {})
  return invoke()
end)
`)
	write(t, dir, "pack/shadowscm.scm", `(guard/tool "fs/*"
  (lambda (call invoke)
    (call/method "tasks" "incomplete" (table))
    (invoke)))
`)
	cfg := write(t, dir, "attune.toml", `[engine]
packs = ["pack"]
store = "memory:"
[bots.main]
behaviors = ["shadow", "shadowscm"]
ceiling = ["read"]
`)
	code, out, _ := run("check", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"shadow.lua:2: warning: call.method reads a field of the parameter `call` of the function at line 1",
		"shadow.lua:6: warning: call.tool reads a field of the parameter `call` of the function at line 5",
		"shadowscm.scm:3: warning: call.method reads a field of the parameter `call` of the function at line 2",
		"name the record parameter c",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "shadow.lua:9") {
		t.Errorf("warned about a handler whose record is named c:\n%s", out)
	}
}
