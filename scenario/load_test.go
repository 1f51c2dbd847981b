package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const header = `name = "t"
[config.bots.main]
behaviors = []
ceiling = ["read"]
`

// loadErrs parses src and returns its problems.
func loadErrs(t *testing.T, src string) []*LoadError {
	t.Helper()
	_, err := Parse("x.toml", []byte(src))
	if err == nil {
		t.Fatalf("Parse accepted:\n%s", src)
	}
	var many LoadErrors
	if errors.As(err, &many) {
		return many
	}
	var one *LoadError
	if errors.As(err, &one) {
		return []*LoadError{one}
	}
	t.Fatalf("Parse returned %T %v, want a *LoadError", err, err)
	return nil
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		line int
		key  string
		msg  string
	}{
		{"unknown op key", header + `
[[step]]
op = "start"

[[step]]
op = "tool"
pth = "fs/read"
`, 11, "step[2].pth", `unknown key for op tool; did you mean "path"?`},
		{"unknown expect key", header + `
[[step]]
op = "start"
expect.staus = "ok"
`, 8, "step[1].expect.staus", `unknown expectation; did you mean "status"?`},
		{"unknown expect key in a sub-table", header + `
[[step]]
op = "start"

[step.expect]
status = "ok"
resutl = 3
`, 11, "step[1].expect.resutl", `did you mean "result"?`},
		{"unknown op", header + `
[[step]]
op = "tol"
`, 7, "step[1].op", `unknown op "tol"; did you mean "tool"?`},
		{"missing op", header + `
[[step]]
path = "x"
`, 6, "step[1]", "a step needs an op"},
		{"missing required key", header + `
[[step]]
op = "tool"
`, 6, "step[1].path", "op tool needs path"},
		{"unknown top-level key", "nmae = \"x\"\n" + header + `
[[step]]
op = "start"
`, 1, "nmae", `unknown key; did you mean "name"?`},
		{"unknown host key", header + `
[host.tools."fs/read"]
effect = ["read"]
reslt = "x"
[[step]]
op = "start"
`, 8, `host.tools."fs/read".reslt`, `did you mean "result"?`},
		{"unknown host table", header + `
[host.raeds]
a = 1
[[step]]
op = "start"
`, 0, "host.raeds", `did you mean "reads"?`},
		{"wrong type", header + `
[[step]]
op = "tool"
path = 3
`, 8, "step[1].path", "want a string, got integer 3"},
		{"bad status", header + `
[[step]]
op = "start"
expect.status = "fine"
`, 8, "step[1].expect.status", "want ok, refused or failed"},
		{"bad refused_by", header + `
[[step]]
op = "start"
expect.refused_by = "nobody"
`, 8, "step[1].expect.refused_by", "want one of ceiling"},
		{"unknown round key", header + `
[[step]]
op = "turn"
rounds = [{tols = []}]
`, 8, "step[1].rounds", "rounds[1]: unknown key tols"},
		{"program escaping the pack", header + `
[programs]
"../x.lua" = "x"
[[step]]
op = "start"
`, 7, `programs."../x.lua"`, "inside the scratch pack"},
		{"state on a step with no owner", header + `
[[step]]
op = "tool"
path = "x"
expect.state = {}
`, 9, "step[1].expect.state", "names no owner"},
		{"config error", header + `ceilng = ["x"]
[[step]]
op = "start"
`, 5, "config.bots.main.ceilng", "unknown key"},
		{"no steps", header, 0, "step", "at least one [[step]]"},
		{"bad rule id", "rules = [\"R1.1\", \"r3\"]\n" + header + "[[step]]\nop = \"start\"\n", 1, "rules", `"r3" is not a spec rule id`},
		{"TOML syntax", header + "[[step]\n", 0, "", "expected end of table array name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := loadErrs(t, c.src)
			for _, e := range errs {
				if e.Key == c.key && strings.Contains(e.Msg, c.msg) && (c.line == 0 || e.Line == c.line) {
					if !strings.HasPrefix(e.Error(), "x.toml:") {
						t.Errorf("%q does not start with the file name", e.Error())
					}
					return
				}
			}
			t.Errorf("want a problem at line %d, key %s, containing %q; got:\n%v", c.line, c.key, c.msg, LoadErrors(errs))
		})
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	errs := loadErrs(t, header+`
[[step]]
op = "start"
bto = "main"

[[step]]
op = "tool"
path = "a"
expect = {reslt = 1}
`)
	if len(errs) != 2 {
		t.Fatalf("want 2 problems, got %d:\n%v", len(errs), LoadErrors(errs))
	}
	if errs[0].Line != 8 || errs[1].Line != 13 {
		t.Errorf("lines %d, %d; want 8, 13", errs[0].Line, errs[1].Line)
	}
}

func TestLoadDefaults(t *testing.T) {
	sc, err := Parse("dir/x.toml", []byte(header+`
[programs]
"commands/hi.lua" = "define.command(function(ctx, text) end)"

[host.reads]
"vcs/branch" = "main"
"n" = 3

[host.tools."fs/read"]
effect = "read"
echo = true

[host.floor]
refuse_marks = ["deny"]

[[step]]
op = "start"

[[step]]
op = "start"
instance = "b"

[[step]]
op = "turn"
rounds = [{tools = [{path = "fs/read", args = {n = 1}}], output = "hi", host_continue = true}, {}]
expect = {rounds = 2, notes = [{kind = "ambient"}], floor = {marks = []}}

[[step]]
op = "tool"
instance = "main"
path = "fs/read"
`))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Config.Engine.Store != "memory:" {
		t.Errorf("store %q, want memory:", sc.Config.Engine.Store)
	}
	if s := sc.Steps[0]; s.Instance != "main" || s.Bot != "main" || s.Line != 20 {
		t.Errorf("step 1: instance %q bot %q line %d", s.Instance, s.Bot, s.Line)
	}
	if s := sc.Steps[2]; s.Instance != "b" || s.MaxRounds != 10 || len(s.Rounds) != 2 || s.Rounds[0].Tools[0].Path != "fs/read" ||
		*s.Rounds[0].Output != "hi" || !s.Rounds[0].HostContinue || s.Rounds[1].Output != nil {
		t.Errorf("step 3: %+v", s)
	}
	if n := sc.Steps[2].Rounds[0].Tools[0].Args.(map[string]any)["n"]; n != 1.0 {
		t.Errorf("numbers are float64: got %T", n)
	}
	if sc.Steps[3].Instance != "main" {
		t.Errorf("step 4 instance %q", sc.Steps[3].Instance)
	}
	if len(sc.Host.Tools) != 1 || sc.Host.Tools[0].Effects[0] != "read" || !sc.Host.Tools[0].Echo {
		t.Errorf("host tools %+v", sc.Host.Tools)
	}
	if sc.Host.Floor == nil || sc.Host.Floor.RefuseMarks[0] != "deny" || sc.Host.Reads["n"] != 3.0 {
		t.Errorf("host %+v", sc.Host)
	}
	if len(sc.Programs) != 1 || sc.Programs[0].File != "commands/hi.lua" {
		t.Errorf("programs %+v", sc.Programs)
	}
}

// TestLoadSpecExample loads the example in docs/scenarios.md's top level.
func TestLoadSpecExample(t *testing.T) {
	_, err := Parse("x.toml", []byte(`name  = "goal ticks while loops remain"
rules = ["R6.9", "R3.6"]

[config]
engine.store = "memory:"
[config.bots.main]
behaviors = ["goal"]
ceiling   = ["read", "write"]
grants    = []

[programs]
"counter.lua" = '''
hook.round("end", function(b) notify("round " .. b.round, "ambient") end)
'''
"commands/hello.scm" = '''(define/command (lambda (ctx text) (notify text "ambient")))'''

[host.reads]
"vcs/branch" = "main"

[host.tools."fs/read"]
effect = ["read"]
result = "hello"

[host.floor]
refuse_marks = ["deny"]

[[step]]
op = "start"
instance = "main"
bot = "main"
kind = "foreground"
[[step]]
op = "turn"
input = "hi"
rounds = [{tools = [{path = "fs/read", args = {path = "a"}}], output = "ok", host_continue = false}]
max_rounds = 3
expect = {status = "ok", rounds = 1, notes = [{kind = "ambient", text = "round 1"}]}
[[step]]
op = "consume"
note = "last"
expect = {status = "failed", error = "already consumed"}
[[step]]
op = "method"
owner = "goal"
method = "get"
input = {}
call_id = "c1"
host_authority = true
expect = {revision = 0, state = {}, result = {}}
`))
	if err != nil {
		t.Fatal(err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.toml"))
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v", err)
	}
}

// A configuration key at a scenario's top level ([bots.main] where
// [config.bots.main] was meant, or a project's attune.toml picked up by
// `attune test .`) says where configuration goes in a scenario.
func TestLoadConfigKeyAtTop(t *testing.T) {
	_, err := Parse("attune.toml", []byte("[engine]\npacks = [\"p\"]\n[bots.main]\nceiling = []\n[harness.claude]\nbot = \"main\"\n"))
	if err == nil {
		t.Fatal("a configuration loaded as a scenario")
	}
	for _, want := range []string{
		"attune.toml:1: engine: unknown key: a configuration key; in a scenario it goes under [config] (as [config.engine])",
		"attune.toml:3: bots: unknown key: a configuration key; in a scenario it goes under [config] (as [config.bots])",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
