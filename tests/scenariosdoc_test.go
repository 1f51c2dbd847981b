package tests

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/attune-dev/attune/scenario"
)

// docs/scenarios.md's owner seeding example runs as written: its entries
// are read back through the engine's own offload owner.
func TestScenariosDocSeededOwners(t *testing.T) {
	data, err := os.ReadFile("../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "## Seeded owners\n")
	if !ok {
		t.Fatal("docs/scenarios.md has no section Seeded owners")
	}
	_, block, ok := strings.Cut(after, "```toml\n")
	if !ok {
		t.Fatal("docs/scenarios.md's Seeded owners section has no TOML example")
	}
	block, _, _ = strings.Cut(block, "```")
	text := `name = "docs/scenarios.md: seeded owners"

[config.bots.main]
behaviors = ["offload"]
ceiling   = ["read"]

` + block + `
[[step]]
op = "start"

[[step]]
op = "method"
owner = "offload@project"
method = "search"
input = {query = "make"}
expect = {result = {key = "build", body = "run make first", citation = "README", revision = 1}, revision = 1}
`
	sc, err := scenario.Parse("docs/scenarios.md", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if res := scenario.Run(context.Background(), sc); !res.Passed {
		t.Errorf("docs/scenarios.md's seeded owner example fails:\n%s", res.Failure)
	}
}
