package scheme

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/luabind"
)

// seedFuzz adds every .scm file of the test data as a seed.
func seedFuzz(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(dataDir, "*", "*.scm"))
	if len(files) == 0 {
		f.Fatal("no seeds under " + dataDir)
	}
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range fuzzRegressions {
		f.Add([]byte(s))
	}
}

// fuzzRegressions are inputs the fuzzers once found a problem with.
var fuzzRegressions = []string{}

// FuzzRead: the reader never panics, positions are 1-based, errors are
// *Error, and a form printed back reads as the same form.
// R7.1
func FuzzRead(f *testing.F) {
	seedFuzz(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		forms, err := Read("fuzz.scm", src)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v is %T", err, err)
			}
			if se.Line < 1 || se.Col < 1 || se.File != "fuzz.scm" {
				t.Fatalf("bad position in %v", err)
			}
			return
		}
		var printed []string
		for _, form := range forms {
			form.Walk(func(g *Form) bool {
				if g.Line < 1 || g.Col < 1 || g.File != "fuzz.scm" {
					t.Fatalf("form %s at %v", g, g.Pos)
				}
				return true
			})
			printed = append(printed, form.String())
		}
		again, err := Read("again.scm", []byte(strings.Join(printed, "\n")))
		if err != nil {
			t.Fatalf("reading printed forms: %v\n%s", err, strings.Join(printed, "\n"))
		}
		if len(again) != len(forms) {
			t.Fatalf("printed %d forms, read back %d", len(forms), len(again))
		}
		for i := range again {
			if again[i].String() != printed[i] {
				t.Fatalf("round trip: %s became %s", printed[i], again[i])
			}
		}
	})
}

// luaLimits are the compile errors of gopher-lua that a program too big for
// Lua may get; any other failure of the lowered Lua is a translator bug.
var luaLimits = []string{"register overflow", "too many local variables", "too many constants", "too long to jump"}

// FuzzLower: the translator never panics, and what it lowers without error
// compiles with gopher-lua and keeps to the source's lines.
// R7.2 R7.4
func FuzzLower(f *testing.F) {
	seedFuzz(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		out, err := Lower("fuzz.scm", src)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v is %T", err, err)
			}
			return
		}
		// the engine's compiler: a program over Lua's or the compile
		// limits fails at a line of the .scm file; anything else is a
		// translator bug
		if _, err := luabind.Compile("fuzz.scm", []byte(out)); err != nil {
			var se *luabind.SyntaxError
			if !errors.As(err, &se) || se.File != "fuzz.scm" || !(errors.Is(err, luabind.ErrCompileLimit) || containsAny(se.Msg, luaLimits)) {
				t.Fatalf("lowered Lua does not compile: %v\nsource: %q\nlua:\n%s", err, src, out)
			}
		}
		if n, m := strings.Count(out, "\n"), strings.Count(string(src), "\n")+1; n > m {
			t.Fatalf("lowered Lua has %d lines, source %d\nsource: %q", n, m, src)
		}
	})
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
