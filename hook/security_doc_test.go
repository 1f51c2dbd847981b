package hook

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every guarantee of the README's Security section names a test, and every
// test it names exists (a Go test or fuzz function, or a scenario file).
func TestSecuritySectionNamesTests(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "\n## Security\n")
	if !ok {
		t.Fatal("README.md has no Security section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var src strings.Builder
	filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "_test.go") && !strings.Contains(p, "node_modules") {
			b, _ := os.ReadFile(p)
			src.Write(b)
		}
		return nil
	})
	names := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`").FindAllStringSubmatch(sec, -1)
	if len(names) < 10 {
		t.Fatalf("the Security section names %d tests", len(names))
	}
	for _, m := range names {
		if !strings.Contains(src.String(), "func "+m[1]+"(") {
			t.Errorf("the Security section names %s, which no test file defines", m[1])
		}
	}
	for _, m := range regexp.MustCompile("`(tests/[^`]+\\.toml)`").FindAllStringSubmatch(sec, -1) {
		if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
			t.Errorf("the Security section names %s: %v", m[1], err)
		}
	}
	// each bullet and paragraph of a guarantee names one
	for _, para := range strings.Split(sec, "\n- ") {
		if strings.Contains(para, "out of scope") || strings.HasPrefix(strings.TrimSpace(para), "attune's guards") {
			continue
		}
		if !regexp.MustCompile("`(Test|Fuzz)[A-Za-z0-9_]+`|`tests/").MatchString(para) {
			t.Errorf("a guarantee names no test: %.120s", para)
		}
	}
}
