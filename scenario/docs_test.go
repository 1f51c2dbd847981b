package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/scenarios.md documents every key a scenario file may hold and every
// op the runner accepts, with each op's keys in its row of the op table.
func TestScenarioFormatIsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "scenarios.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	row := func(first string) string {
		for _, line := range strings.Split(doc, "\n") {
			if strings.HasPrefix(line, "| `"+first+"` |") {
				return line
			}
		}
		return ""
	}
	for _, op := range Ops() {
		r := row(op)
		if r == "" {
			t.Errorf("docs/scenarios.md: no row for op %s", op)
			continue
		}
		for _, k := range opKeys[op] {
			if !strings.Contains(r, "`"+k+"`") && !strings.Contains(r, "`"+k+" = ") {
				t.Errorf("docs/scenarios.md: the row of op %s does not name its key %s", op, k)
			}
		}
	}
	for _, k := range topKeys {
		if row(k) == "" {
			t.Errorf("docs/scenarios.md: no row for top-level key %s", k)
		}
	}
	for _, k := range expectKeys {
		if row(k) == "" {
			t.Errorf("docs/scenarios.md: no row for expectation %s", k)
		}
	}
	for _, k := range hostKeys {
		if !strings.Contains(doc, "`host."+k) {
			t.Errorf("docs/scenarios.md: host key %s is not documented", k)
		}
	}
	for _, k := range hostToolKeys {
		if !strings.Contains(doc, "`host.tools.\"PATH\"."+k+"`") {
			t.Errorf("docs/scenarios.md: host tool key %s is not documented", k)
		}
	}
	for _, k := range hostFloor {
		if !strings.Contains(doc, "`host.floor."+k+"`") {
			t.Errorf("docs/scenarios.md: host floor key %s is not documented", k)
		}
	}
	for _, group := range [][]string{answerKeys, roundKeys, roundToolKeys, noteKeys, floorKeys, statuses, refusers} {
		for _, k := range group {
			if !strings.Contains(doc, k) {
				t.Errorf("docs/scenarios.md: %s is not documented", k)
			}
		}
	}
}
