package main

import (
	"strings"
	"testing"
)

// attune check prints every problem of a configuration in one run: an
// unknown key no longer hides a program no pack holds (R8.2).
func TestCheckEveryProblemAtOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pack/hello.lua", `hook.turn("start", function(b) notify("hi") end)`)
	cfg := write(t, dir, "attune.toml", `[engine]
packs = ["pack"]
colour = "blue"
[bots.main]
behaviors = ["hello", "nowhere"]
ceilng = ["read"]
`)
	code, out, _ := run("check", cfg)
	for _, want := range []string{"attune.toml:3: engine.colour: unknown key", "attune.toml:6: bots.main.ceilng: unknown key", `no pack holds program "nowhere"`, "3 problem(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("check does not say %q (exit %d):\n%s", want, code, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d", code)
	}
}

// A ceiling that names an effect no tool has allows nothing: attune check
// names it and the nearest effect.
func TestCheckUnknownEffect(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pack/tool.lua", `define.tool("db/query", function(ctx, a) return 1 end, {effect = "database"})`)
	cfg := write(t, dir, "attune.toml", `[engine]
packs = ["pack"]
[bots.main]
behaviors = ["tool"]
ceiling = ["read", "exce", "databse", "database", "spawn"]
`)
	code, out, _ := run("check", cfg)
	if code != 1 || !strings.Contains(out, `attune.toml:5: bots.main.ceiling[2]: effect "exce" is not an effect of any tool`) ||
		!strings.Contains(out, `did you mean "exec"?`) || !strings.Contains(out, `ceiling[3]: effect "databse"`) || !strings.Contains(out, `did you mean "database"?`) ||
		!strings.Contains(out, "2 problem(s)") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// attune check finds the calls of a handler that can only fail, in Lua and
// in the forms, naming each and the nearest form or function, though the
// handler never ran.
func TestCheckUndefinedCalls(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pack/g.lua", `local function helper(n) if n > 0 then return helper(n - 1) end return 0 end
guard.tool("x/*", function(c, invoke)
  if later() then return invoke() end
  return refuze("no " .. string.upperr(c.path))
end)
function later() return helper(2) == 0 and ("x"):upper() == "X" end
`)
	write(t, dir, "pack/s.scm", `(define (count n) (if (= n 0) 0 (count (- n 1))))
(hook/tool "x/*" :pre (lambda (c) (put c "a" (count 2))))
`)
	cfg := write(t, dir, "attune.toml", `[engine]
packs = ["pack"]
[bots.main]
behaviors = ["g", "s"]
ceiling = ["read"]
`)
	code, out, _ := run("check", cfg)
	for _, want := range []string{
		`g.lua:4: refuze is not a defined function (calling it fails when the code runs); did you mean "refuse"?`,
		`g.lua:4: string.upperr is not a defined function (calling it fails when the code runs); did you mean "string.upper"?`,
		`s.scm:2: put is not a form or function (calling it fails when the code runs); did you mean "put!"?`,
		"3 problem(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check does not say %q (exit %d):\n%s", want, code, out)
		}
	}
	if code != 1 || strings.Contains(out, "later") || strings.Contains(out, "helper") || strings.Contains(out, "count") {
		t.Errorf("exit %d, or a defined name reported:\n%s", code, out)
	}
}
