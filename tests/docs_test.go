package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		for _, bad := range []string{"../shared", "SPEC.md", "SCENARIOS.md", "SPEC §"} {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s mentions %s, which a clone of the project does not have", f, bad)
			}
		}
	}
}
