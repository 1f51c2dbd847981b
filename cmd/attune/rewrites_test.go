package main

import (
	"strings"
	"testing"
)

// attune check reports the statements gopher-lua would compile wrongly as
// written, which the engine compiles through temporaries: file, line and
// the same code by hand. They are notes: the configuration is fine.
func TestCheckReportsRewrittenAssignments(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pack/swap.lua", "local a, b = 1, 2\n\na, b = b, a\n")
	write(t, dir, "pack/andy.lua", "local function f() return false end\nlocal x = 1\nx = f() and 2\nx = x or 3\n")
	write(t, dir, "pack/commands/go.lua", "define.command(function(ctx, text)\n  local t, c = {}, 1\n  t.a, t.b = c, c\nend)\n")
	cfg := write(t, dir, "attune.toml", `[engine]
packs = ["pack"]
store = "memory:"
[bots.main]
behaviors = ["swap", "andy"]
ceiling = ["read"]
`)
	code, out, _ := run("check", cfg)
	if code != 0 || !strings.Contains(out, "ok (1 bot(s))") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"swap.lua:3: note: the multiple assignment to a, b is compiled through temporaries",
		"andy.lua:3: note: x = <and/or expression> is compiled through a temporary",
		"local tmp = <expression>; x = tmp",
		"commands/go.lua:3: note: the multiple assignment to t.a, t.b",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "andy.lua:4:") {
		t.Errorf("x = x or 3 compiles right and is not reported:\n%s", out)
	}
}
