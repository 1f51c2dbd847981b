package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const okScenario = `name = "NAME"
[config.bots.main]
behaviors = []
ceiling = ["read"]
[host.tools."calc/add"]
effect = ["read"]
result = 3
[[step]]
op = "start"
[[step]]
op = "tool"
path = "calc/add"
expect.result = RESULT
`

func scenarioText(name, result string) string {
	return strings.NewReplacer("NAME", name, "RESULT", result).Replace(okScenario)
}

func run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := dispatch(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestTestExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "good/a.toml", scenarioText("a", "3"))
	write(t, dir, "good/sub/b.toml", scenarioText("b", "3"))
	bad := write(t, dir, "bad.toml", scenarioText("c", "4"))
	broken := write(t, dir, "broken.toml", "name = \"d\"\n[[step]]\nop = \"start\"\nbto = 1\n")

	code, out, _ := run("test", filepath.Join(dir, "good"))
	if code != 0 || !strings.HasSuffix(out, "2 passed, 0 failed\n") {
		t.Errorf("good: exit %d\n%s", code, out)
	}
	code, out, _ = run("test", good, bad)
	if code != 1 || !strings.HasSuffix(out, "1 passed, 1 failed\n") || !strings.Contains(out, "step 2 (tool): result: want 4, got 3") {
		t.Errorf("bad: exit %d\n%s", code, out)
	}
	code, out, _ = run("test", good, broken)
	if code != 2 || !strings.Contains(out, "broken.toml:4: step[1].bto: unknown key for op start") {
		t.Errorf("broken: exit %d\n%s", code, out)
	}
	if code, _, _ = run("test"); code != 2 {
		t.Errorf("no path: exit %d", code)
	}
	if code, _, _ = run("test", filepath.Join(dir, "none")); code != 2 {
		t.Errorf("missing path: exit %d", code)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pack/hello.lua", `hook.turn("start", function(b) notify("hi") end)`)
	write(t, dir, "pack/broken.lua", `hook.turn("start", function(b) notify("hi") end`)
	write(t, dir, "pack/branch.lua", `-- shadows the engine's own branch`)
	good := write(t, dir, "good.toml", `[engine]
packs = ["pack"]
store = "memory:"
[bots.main]
behaviors = ["hello"]
ceiling = ["read"]
`)
	code, out, _ := run("check", good)
	if code != 0 || !strings.Contains(out, "warning: program branch in pack behaviors is shadowed") || !strings.Contains(out, "ok (1 bot(s))") {
		t.Errorf("good: exit %d\n%s", code, out)
	}
	missing := write(t, dir, "missing.toml", `[engine]
packs = ["pack"]
[bots.main]
behaviors = ["hello", "nowhere"]
ceilng = ["read"]
`)
	code, out, _ = run("check", missing)
	if code != 1 || !strings.Contains(out, "missing.toml:5: bots.main.ceilng: unknown key") {
		t.Errorf("missing: exit %d\n%s", code, out)
	}
	unheld := write(t, dir, "unheld.toml", `[engine]
packs = ["pack"]
[bots.main]
behaviors = ["hello", "nowhere"]
`)
	code, out, _ = run("check", unheld)
	if code != 1 || !strings.Contains(out, `no pack holds program "nowhere"`) {
		t.Errorf("unheld: exit %d\n%s", code, out)
	}
	syntax := write(t, dir, "syntax.toml", `[engine]
packs = ["pack"]
[bots.main]
behaviors = ["broken"]
`)
	code, out, _ = run("check", syntax)
	if code != 1 || !strings.Contains(out, "broken.lua") {
		t.Errorf("syntax: exit %d\n%s", code, out)
	}
}

func TestStubs(t *testing.T) {
	for _, c := range []string{"run", "lower", "serve"} {
		if _, ok := commands[c]; !ok {
			t.Errorf("no command %s", c)
		}
	}
	if code, _, _ := run("nope"); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
}
