package tests

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// docs/architecture.md names every package of the module (a folder with Go
// files, nested modules and testdata aside), so a package added without
// its place in the layers fails here. The files it names are checked by
// TestRulesDoc, as every doc's are.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := packages(t, "..")
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages: %v", len(pkgs), pkgs)
	}
	for _, p := range pkgs {
		if !strings.Contains(string(doc), "`"+p+"`") {
			t.Errorf("docs/architecture.md does not name package %s", p)
		}
	}
	if missing := packagesNamedNowhere(string(doc), pkgs); len(missing) > 0 {
		t.Errorf("docs/architecture.md names packages the module lacks: %v", missing)
	}
}

// packages are the module's package folders under root, slash-separated.
func packages(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // a module of its own
				}
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && rel != "." {
			if dir := filepath.ToSlash(filepath.Dir(rel)); dir != "." {
				seen[dir] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// packagesNamedNowhere are the first cells of the doc's package tables that
// name no package of the module.
func packagesNamedNowhere(doc string, pkgs []string) []string {
	have := map[string]bool{}
	for _, p := range pkgs {
		have[p] = true
	}
	var out []string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(line, "|", 3)[1], " `"), "` ")
		if !have[cell] {
			out = append(out, cell)
		}
	}
	return out
}

// The adapters reach the store only through the engine's API
// (engine.Store, engine.OpenStore, the engine's records): none imports the
// store package, in any file of any build.
func TestAdaptersDoNotImportStore(t *testing.T) {
	const storePkg = "github.com/attune-dev/attune/store"
	for _, pkg := range []string{"hook", "harness", "mcpproxy", "server", "inspect"} {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", pkg, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range af.Imports {
				if p := strings.Trim(im.Path.Value, `"`); p == storePkg || strings.HasPrefix(p, storePkg+"/") {
					t.Errorf("%s imports %s: reach the store through the engine (engine.Store, engine.OpenStore, Engine.Flag)", filepath.ToSlash(f), p)
				}
			}
		}
	}
}
