package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestHarnessTable(t *testing.T) {
	cfg, err := Parse("attune.toml", []byte(`
[bots.main]
[bots.scout]
[harness.claude]
bot = "main"
ask_marks = ["ask"]
fail_open = true
[harness.claude.agents]
Explore = "scout"
[harness.claude.tools]
mcp__github__create_issue = ["network", "write"]
`))
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Hook("claude")
	want := &HookHarness{Bot: "main", Agents: map[string]string{"Explore": "scout"},
		Tools: map[string][]string{"mcp__github__create_issue": {"network", "write"}}, AskMarks: []string{"ask"}, FailOpen: true}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("got %+v", h)
	}
	if d := cfg.Hook("codex"); d.Bot != "main" || d.FailOpen {
		t.Fatalf("default %+v", d)
	}
}

func TestHarnessErrors(t *testing.T) {
	_, err := Parse("attune.toml", []byte(`
[bots.main]
[harness.claude]
bot = "mian"
fail_opne = true
[harness.claude.agents]
Explore = "scout"
[harness.claude.tools]
Bash = "exec"
[harness.cluade]
`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`attune.toml:4: harness.claude.bot: no bot named "mian" (the bots are main); did you mean "main"?`,
		`attune.toml:5: harness.claude.fail_opne: unknown key; did you mean "fail_open"?`,
		`attune.toml:7: harness.claude.agents.Explore: no bot named "scout"`,
		`attune.toml:9: harness.claude.tools.Bash: want a list of strings, got string`,
		`attune.toml:10: harness.cluade: unknown key; did you mean "claude"?`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
}
