package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/internal/lua/parse"
)

// R7.5: `attune lower FILE.scm` prints the Lua the program lowers to: Lua
// that parses, line for line with the source (R7.4), with the forms'
// names and options lowered (R7.2). A file that does not read is an error
// at its file, line and column, with exit code 1.
func TestLowerPrintsLua(t *testing.T) {
	dir := t.TempDir()
	src := "; a guard\n" +
		"(guard/tool \"fs/*\"\n" +
		"  (lambda (call invoke)\n" +
		"    (if (null? (get call.args \"path\")) (refuse \"no path\") (invoke))))\n" +
		"(hook/tool \"fs/read\" :post-fail (lambda (call failure) (notify \"failed\" \"ambient\")))\n"
	file := write(t, dir, "careful.scm", src)
	code, out, errOut := run("lower", file)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{`guard.tool("fs/*"`, `refuse("no path")`, `hook.tool("fs/read", {post_fail = `, `notify("failed", "ambient")`, `null_p`} {
		if !strings.Contains(out, want) {
			t.Errorf("the Lua printed lacks %s:\n%s", want, out)
		}
	}
	if got, want := strings.Count(out, "\n"), strings.Count(src, "\n"); got != want {
		t.Errorf("%d lines printed for %d lines of source:\n%s", got, want, out)
	}
	if _, err := parse.Parse(strings.NewReader(out), "careful.lua"); err != nil {
		t.Errorf("the Lua printed does not parse: %v\n%s", err, out)
	}

	// The engine's own programs lower to Lua that parses.
	programs, _ := filepath.Glob(filepath.Join("..", "..", "behaviors", "*.scm"))
	if len(programs) == 0 {
		t.Fatal("no programs in behaviors/")
	}
	for _, p := range programs {
		code, out, errOut := run("lower", p)
		if code != 0 || strings.TrimSpace(out) == "" {
			t.Errorf("%s: exit %d, stderr %q", p, code, errOut)
			continue
		}
		if _, err := parse.Parse(strings.NewReader(out), p); err != nil {
			t.Errorf("%s: the Lua printed does not parse: %v", p, err)
		}
	}

	bad := write(t, dir, "bad.scm", "(define x\n  \"open)\n")
	code, out, errOut = run("lower", bad)
	if code != 1 || out != "" || !strings.HasPrefix(errOut, bad+":2:3: ") {
		t.Errorf("an unterminated string: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.lua")); err == nil {
		t.Error("lower wrote a file; it only prints")
	}
}
