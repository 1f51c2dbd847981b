package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/harness"
)

// The project's documentation stands alone: a clone has nothing beside the
// repository, so the README and docs/ point only at files inside it.
func TestDocsStandAlone(t *testing.T) {
	files, _ := filepath.Glob("../docs/*.md")
	files = append(files, "../README.md", "../DEVELOPERS.md", "../behaviors/README.md")
	examples, _ := filepath.Glob("../examples/*/*.md")
	files = append(files, examples...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// spelled in pieces, so that this file does not cite what it forbids
		for _, bad := range []string{"../" + "shared", "SPEC" + ".md", "SCENARIOS" + ".md", "SPEC" + " §"} {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s mentions %s, which a clone of the project does not have", f, bad)
			}
		}
	}
}

// Every hook dialect's tool paths are in the README: a bot author must know
// the path a guard names (claude/NAME, codex/NAME, ...).
func TestReadmeHookToolPaths(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range config.HookDialects() {
		d, ok := harness.Dialects(name)
		if !ok {
			t.Fatalf("no hook dialect %s", name)
		}
		path := strings.TrimSuffix(d.ToolPath("NAME"), "NAME") + "NAME"
		if !strings.Contains(string(data), "`"+path+"`") {
			t.Errorf("the README does not say that %s's tools are at `%s`", name, path)
		}
	}
}

// Every field of a result record in docs/protocol.schema.json is named in
// docs/protocol.md, which calls itself the whole contract.
func TestProtocolDocNamesEveryResultField(t *testing.T) {
	doc, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../docs/protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	for _, def := range []string{"outcome", "methodOutcome", "boundary", "note"} {
		d, ok := schema.Defs[def]
		if !ok || len(d.Properties) == 0 {
			t.Fatalf("the schema has no $defs.%s with properties", def)
		}
		for field := range d.Properties {
			if !strings.Contains(string(doc), "`"+field+"`") {
				t.Errorf("docs/protocol.md does not name %s's field `%s`", def, field)
			}
		}
	}
}

// The layouts in the README and DEVELOPERS.md name every package folder of
// the repository.
func TestLayoutNamesEveryPackage(t *testing.T) {
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{"../README.md", "../DEVELOPERS.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" || e.Name() == "docs" || e.Name() == "scripts" {
				continue
			}
			if goFiles, _ := filepath.Glob(filepath.Join("..", e.Name(), "*.go")); len(goFiles) == 0 && e.Name() != "cmd" {
				continue
			}
			if !regexp.MustCompile(`(?m)(^|\s)` + e.Name() + `/`).MatchString(string(data)) {
				t.Errorf("%s's layout does not name %s/", doc, e.Name())
			}
		}
	}
}
