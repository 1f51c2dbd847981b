package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/attune-dev/attune/luabind"
)

// docs/forms.md documents every register form and callback function the
// engine declares (forms.go), each under its own heading with a Lua and a
// Scheme-style example; every example compiles.
func TestFormsAreDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "forms.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	sections := map[string]string{} // heading -> its text
	var heads []string
	for _, part := range strings.Split(doc, "\n### ")[1:] {
		head, body, _ := strings.Cut(part, "\n")
		if i := strings.Index(body, "\n## "); i >= 0 {
			body = body[:i]
		}
		sections[head] = body
		heads = append(heads, head)
	}
	for _, f := range forms {
		var sec string
		found := false
		for _, h := range heads {
			for _, w := range strings.Split(h, " and ") {
				if w == f.Name {
					sec, found = sections[h], true
				}
			}
		}
		if !found {
			t.Errorf("docs/forms.md: no heading for %s (forms.go declares it)", f.Name)
			continue
		}
		if !strings.Contains(sec, "`"+f.LuaName()) {
			t.Errorf("docs/forms.md, %s: the Lua spelling %s is not given", f.Name, f.LuaName())
		}
		if !strings.Contains(sec, "```lua\n") || !strings.Contains(sec, "```scheme\n") {
			t.Errorf("docs/forms.md, %s: want a Lua and a Scheme-style example", f.Name)
		}
	}
	block := regexp.MustCompile("(?s)```(lua|scheme)\n(.*?)```")
	n := 0
	for _, m := range block.FindAllStringSubmatch(doc, -1) {
		n++
		src := m[2]
		if m[1] == "scheme" {
			lowered, err := lowerScheme("example.scm", []byte(src))
			if err != nil {
				t.Errorf("docs/forms.md: a Scheme-style example does not lower: %v\n%s", err, src)
				continue
			}
			src = lowered
		}
		if _, err := luabind.Compile("example.lua", []byte(src)); err != nil {
			t.Errorf("docs/forms.md: an example does not compile: %v\n%s", err, m[2])
		}
	}
	if n == 0 {
		t.Error("docs/forms.md has no examples")
	}
}
