package scheme

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected .lua files and error lines under tests/scheme")

// dataDir holds the translator's test data: lower/*.scm with the expected
// *.lua next to each, and errors/*.scm, one kind of bad input per file.
const dataDir = "../tests/scheme"

func dataFiles(t testing.TB, sub string) []string {
	files, err := filepath.Glob(filepath.Join(dataDir, sub, "*.scm"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test data in %s/%s: %v", dataDir, sub, err)
	}
	return files
}

// TestLowerData lowers every tests/scheme/lower/*.scm file and compares the
// result with the .lua file next to it. Run with -update to rewrite them.
// R7.2 R7.3 R7.5
func TestLowerData(t *testing.T) {
	for _, path := range dataFiles(t, "lower") {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".scm"), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Lower(name, src)
			if err != nil {
				t.Fatalf("Lower: %v", err)
			}
			// Line alignment: the output never has more lines than the source.
			if n, m := strings.Count(got, "\n"), bytes.Count(src, []byte("\n"))+1; n > m {
				t.Errorf("output has %d lines, source %d", n, m)
			}
			want := strings.TrimSuffix(path, ".scm") + ".lua"
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(exp) {
				t.Errorf("lowered %s differs from %s (run go test -update to accept):\n%s", name, filepath.Base(want), firstDiff(string(exp), got))
			}
		})
	}
}

// firstDiff describes the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(no difference)"
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

const errorPrefix = "; error: "

// TestErrorData lowers every tests/scheme/errors/*.scm file, each one kind of
// bad input, and checks the error against the file's first line,
// "; error: FILE:LINE:COL: message". Run with -update to rewrite those lines.
// R7.1 R7.2 R7.3
func TestErrorData(t *testing.T) {
	for _, path := range dataFiles(t, "errors") {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".scm"), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			first, rest, _ := strings.Cut(string(src), "\n")
			if !strings.HasPrefix(first, strings.TrimSpace(errorPrefix)) {
				t.Fatalf("first line must be %q followed by the expected error", errorPrefix)
			}
			_, err = Lower(name, src)
			if err == nil {
				t.Fatalf("Lower succeeded; want an error")
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), name+":") {
				t.Errorf("error %q does not start with the file name", err)
			}
			if se.Line < 2 {
				t.Errorf("error %q points at the expectation line", err)
			}
			if *update {
				out := errorPrefix + err.Error() + "\n" + rest
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := strings.TrimPrefix(first, errorPrefix); err.Error() != want {
				t.Errorf("error:\n  got:  %s\n  want: %s", err, want)
			}
		})
	}
}
