package tests

import (
	"context"
	"os"
	"strings"
	"testing"

	"attune/scenario"
)

// The README's scenario and its first behavior are the ones a QA engineer
// and a bot author copy: they must run as written.
func TestReadmeScenario(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, block := range strings.Split(string(data), "```toml\n")[1:] {
		text := block[:strings.Index(block, "```")]
		if !strings.HasPrefix(text, "name") {
			continue // the config example
		}
		found++
		sc, err := scenario.Parse("README.md", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if res := scenario.Run(context.Background(), sc); !res.Passed {
			t.Errorf("the README's scenario fails:\n%s", res.Failure)
		}
	}
	if found == 0 {
		t.Fatal("the README has no scenario")
	}
}

// The README's first behavior in the forms behaves like its Lua twin.
func TestReadmeSchemeBehavior(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(string(data), "```scheme\n", 2)
	if len(parts) != 2 {
		t.Fatal("the README has no Scheme example")
	}
	program := parts[1][:strings.Index(parts[1], "```")]
	text := `name = "README careful.scm"
[config.bots.main]
behaviors = ["careful"]
ceiling = ["read"]
[programs]
"careful.scm" = '''
` + program + `'''
[host.tools."fs/read"]
effect = ["read"]
echo = true
[[step]]
op = "start"
instance = "a"
bot = "main"
[[step]]
op = "tool"
instance = "a"
path = "fs/read"
args = { path = "/etc/passwd" }
expect = { status = "refused", refused_by = "guard", reason = "absolute paths are not allowed", core_calls = 0 }
[[step]]
op = "tool"
instance = "a"
path = "fs/read"
args = { path = "notes.txt" }
expect = { status = "ok", core_calls = 1, floor = { args = { path = "notes.txt" }, marks = ["checked"] } }
[[step]]
op = "turn-begin"
instance = "a"
[[step]]
op = "round-begin"
instance = "a"
[[step]]
op = "round-end"
instance = "a"
expect = { notes = [{ kind = "ambient", text = "round 1 finished" }] }
`
	sc, err := scenario.Parse("README.md", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if res := scenario.Run(context.Background(), sc); !res.Passed {
		t.Errorf("the README's Scheme behavior fails:\n%s", res.Failure)
	}
}
