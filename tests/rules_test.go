package tests

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/BurntSushi/toml"
)

// docs/rules.md states every rule the code, the tests and the docs cite, and
// names the tests that exercise each one. Its "Tests:" lines are generated:
//
//	go test ./tests -run TestRulesDoc -update-rules
//
// rewrites them from the tests that name each rule (a Go test function that
// cites the id in its comments or body, a scenario whose rules = [...] lists
// it); the prose is written by hand.
var updateRules = flag.Bool("update-rules", false, "rewrite the Tests: lines of docs/rules.md from the tests that cite each rule")

var (
	ruleID      = regexp.MustCompile(`\bR[0-9]+\.[0-9]+\b`)
	ruleDefLine = regexp.MustCompile(`^\*\*(R[0-9]+\.[0-9]+)\*\*`)
	goTestGroup = regexp.MustCompile("^((?:`[A-Za-z0-9_]+`(?:, )?)+) \\(([A-Za-z0-9_./-]+_test\\.go)\\)$")
	scenarioRef = regexp.MustCompile("^`([A-Za-z0-9_./-]+\\.toml)`$")
	backquoted  = regexp.MustCompile("`([A-Za-z0-9_]+)`")
	mdLink      = regexp.MustCompile(`\]\(([^)#\s]+)(?:#[^)]*)?\)`)
	// A path a doc or a comment names: it starts at a top-level entry of the
	// repository (or one the layout once had) or climbs with ../.
	pathToken = regexp.MustCompile(`(?:\.\./)*[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?`)
)

// retiredRoots are top-level folders the repository no longer has; a path
// under one of them is always stale.
var retiredRoots = []string{"third_party"}

// examplePaths are paths the docs use as examples of what a user writes or
// gets, not as files of the repository.
var examplePaths = map[string]bool{
	"examples/.attune/state.db":           true, // made by the first attune run
	"tests/a.toml":                        true, // attune test -j 4 tests/a.toml tests/b/
	"tests/b/":                            true,
	"tests/watch.toml":                    true, // a coverage report's example
	"tests/engine/4-":                     true, // a --run pattern
	"../packs/mine":                       true, // a pack a recording names
	"cmd/glua":                            true, // upstream gopher-lua's, left out of internal/lua
	"hook/tol":                            true, // a misspelled form (hook/tool) that errors name
	"../etc":                              true, // an upstream tool name attune mcp encodes (docs/mcp.md, tool paths)
	"hook/testdata/captured/NAME-VERSION": true, // where a new dialect's captures go
	"hook/NAME_e2e_test.go":               true, // where a new dialect's end-to-end suite goes
	"testdata/artifacts":                  true, // screenshots a test writes (not kept in git)
}

// formNames are the headings of docs/forms.md: guard/tool, hook/round...
// name forms, not folders, though hook/ is one.
func formNames(fsys fs.FS) map[string]bool {
	names := map[string]bool{}
	data, _ := fs.ReadFile(fsys, "docs/forms.md")
	for _, line := range strings.Split(string(data), "\n") {
		if head, ok := strings.CutPrefix(line, "### "); ok {
			for _, w := range strings.Split(head, " and ") {
				names[strings.Trim(w, "` ")] = true
			}
		}
	}
	return names
}

// outsideCitations are documents that live outside the repository: the
// project's text names docs/rules.md and docs/scenarios.md instead.
var outsideCitations = []string{"SPEC" + ".md", "SCENARIOS" + ".md", "PERFORMANCE" + ".md", "../" + "shared", "SPEC" + " §", "SPEC" + " section", "§"}

// repoFile is one text file of the repository, as the checks read it.
type repoFile struct {
	path     string // slash-separated, from the repository root
	text     string // the whole file
	prose    string // what is written for readers: comments of a Go file, comment lines of a program, all of a doc
	goSource bool
}

// scanRepo reads the files the checks cover: Go, TOML, Markdown, and the
// Scheme and Lua programs, outside testdata, node_modules and .git.
func scanRepo(t *testing.T, fsys fs.FS) []repoFile {
	t.Helper()
	var files []repoFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules":
				return fs.SkipDir
			}
			return nil
		}
		ext := path.Ext(p)
		switch ext {
		case ".go", ".toml", ".md", ".scm", ".lua":
		default:
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		f := repoFile{path: p, text: string(data)}
		switch ext {
		case ".go":
			f.goSource = true
			f.prose = goComments(t, p, data)
		case ".md":
			f.prose = f.text
		case ".toml":
			f.prose = commentLines(f.text, "#")
		case ".scm":
			f.prose = commentLines(f.text, ";")
		case ".lua":
			f.prose = commentLines(f.text, "--")
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// goComments is src with everything but its comments blanked, so that
// offsets and lines stay those of the file.
func goComments(t *testing.T, name string, src []byte) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := make([]byte, len(src))
	for i, b := range src {
		out[i] = ' '
		if b == '\n' {
			out[i] = b
		}
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			from, to := fset.Position(c.Pos()).Offset, fset.Position(c.End()).Offset
			copy(out[from:to], src[from:to])
		}
	}
	return string(out)
}

func commentLines(text, prefix string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, prefix); i >= 0 {
			b.WriteString(line[i:])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// vendored reports whether p belongs to the imported Lua packages, whose
// comments speak of their upstream layout; their README files are the
// project's own and are checked.
func vendored(p string) bool {
	return (strings.HasPrefix(p, "internal/lua/") || strings.HasPrefix(p, "internal/luar/")) && path.Base(p) != "README.md"
}

type problem struct{ where, what string }

func (p problem) String() string { return p.where + ": " + p.what }

func lineOf(text string, at int) int { return strings.Count(text[:at], "\n") + 1 }

// checkRuleCitations: every rule id a file cites is defined in docs/rules.md.
func checkRuleCitations(files []repoFile, defined map[string]bool) []problem {
	var out []problem
	for _, f := range files {
		for _, m := range ruleID.FindAllStringIndex(f.text, -1) {
			if id := f.text[m[0]:m[1]]; !defined[id] {
				out = append(out, problem{fmt.Sprintf("%s:%d", f.path, lineOf(f.text, m[0])), "cites rule " + id + ", which docs/rules.md does not define"})
			}
		}
	}
	return out
}

// checkOutsideCitations: no file points readers at documents the
// repository does not hold. A Go file is read whole except for its tests'
// string literals (this file names the texts it looks for).
func checkOutsideCitations(files []repoFile) []problem {
	var out []problem
	for _, f := range files {
		text := f.text
		if strings.HasSuffix(f.path, "_test.go") {
			text = f.prose
		}
		for _, bad := range outsideCitations {
			if i := strings.Index(text, bad); i >= 0 {
				out = append(out, problem{fmt.Sprintf("%s:%d", f.path, lineOf(text, i)), "cites " + bad + ", which is not in the repository: point to docs/rules.md or docs/scenarios.md"})
			}
		}
	}
	return out
}

// checkPaths: a path a doc or a comment names under a top-level folder of
// the repository exists, from the root or from the file's own folder.
// Placeholders (NAME, N-section, *, ...) are patterns, not paths.
func checkPaths(fsys fs.FS, files []repoFile) []problem {
	forms := formNames(fsys)
	roots := map[string]bool{}
	entries, _ := fs.ReadDir(fsys, ".")
	for _, e := range entries {
		if e.Name() != ".git" {
			roots[e.Name()] = true
		}
	}
	retired := map[string]bool{}
	for _, r := range retiredRoots {
		retired[r] = true
	}
	exists := func(p string) bool {
		p = path.Clean(p)
		if p == "." || strings.HasPrefix(p, "../") {
			return p == "."
		}
		_, err := fs.Stat(fsys, p)
		return err == nil
	}
	// suffixOf: a path relative to a folder the text has in mind (a
	// scenario's packs, a package's testdata) is the tail of a path of the
	// repository.
	var all []string
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() == ".git" || d.Name() == "node_modules" {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		all = append(all, p)
		return nil
	})
	suffixOf := func(tok string) bool {
		tail := path.Clean(strings.TrimLeft(tok, "./"))
		for _, p := range all {
			if p == tail || strings.HasSuffix(p, "/"+tail) {
				return true
			}
		}
		return false
	}
	var out []problem
	for _, f := range files {
		if vendored(f.path) {
			continue
		}
		if strings.HasSuffix(f.path, ".md") {
			for _, m := range mdLink.FindAllStringSubmatchIndex(f.text, -1) {
				target := f.text[m[2]:m[3]]
				if strings.Contains(target, ":") {
					continue // https://..., mailto:...
				}
				if !exists(path.Join(path.Dir(f.path), target)) {
					out = append(out, problem{fmt.Sprintf("%s:%d", f.path, lineOf(f.text, m[2])), "links to " + target + ", which the repository does not have"})
				}
			}
		}
		for _, m := range pathToken.FindAllStringIndex(f.prose, -1) {
			tok := f.prose[m[0]:m[1]]
			if m[0] > 0 && strings.ContainsRune("/.:@~$", rune(f.prose[m[0]-1])) {
				continue // part of a URL, an absolute path, a module path or ~/...
			}
			if m[1] < len(f.prose) && strings.ContainsRune("*{", rune(f.prose[m[1]])) {
				continue // a glob or a template
			}
			tok = strings.TrimRight(tok, ".")
			first := strings.SplitN(strings.TrimLeft(tok, "./"), "/", 2)[0]
			climbs := strings.HasPrefix(tok, "../")
			if !climbs && !roots[first] && !retired[first] {
				continue
			}
			if placeholder(tok) || forms[tok] || examplePaths[tok] {
				continue
			}
			if retired[first] || !(exists(tok) || exists(path.Join(path.Dir(f.path), tok)) || suffixOf(tok)) {
				out = append(out, problem{fmt.Sprintf("%s:%d", f.path, lineOf(f.prose, m[0])), "names " + tok + ", which the repository does not have"})
			}
		}
	}
	return out
}

var placeholderSegment = regexp.MustCompile(`^(?:[A-Z]{2,}|.*\bN\b.*|.*\.\.\..*)(?:\.[a-z]+)?$`)

func placeholder(tok string) bool {
	for _, seg := range strings.Split(strings.Trim(tok, "/"), "/") {
		if placeholderSegment.MatchString(seg) || strings.Contains(seg, "N-") || strings.Contains(seg, "rN.") {
			return true
		}
	}
	return false
}

// testIndex is what the repository's tests cite: for each Go test function
// (by file and name) and each scenario file, the rule ids it names.
type testIndex struct {
	goTests   map[string]map[string][]string // file -> func -> ids
	scenarios map[string][]string            // file -> ids
}

func buildTestIndex(t *testing.T, files []repoFile) testIndex {
	t.Helper()
	ix := testIndex{goTests: map[string]map[string][]string{}, scenarios: map[string][]string{}}
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.path, "_test.go"):
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, f.path, f.text, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("%s: %v", f.path, err)
			}
			funcs := map[string][]string{}
			for _, d := range af.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv != nil || !isTestName(fd.Name.Name) {
					continue
				}
				start := fd.Pos()
				if fd.Doc != nil {
					start = fd.Doc.Pos()
				}
				// The ids named in the function's comments, its doc comment
				// included: a rule id in a string is data, not a citation.
				body := f.prose[fset.Position(start).Offset:fset.Position(fd.End()).Offset]
				funcs[fd.Name.Name] = uniq(ruleID.FindAllString(body, -1))
			}
			ix.goTests[f.path] = funcs
		case strings.HasSuffix(f.path, ".toml") && (strings.HasPrefix(f.path, "tests/") || strings.HasPrefix(f.path, "examples/")):
			var sc struct {
				Name  string   `toml:"name"`
				Rules []string `toml:"rules"`
			}
			if _, err := toml.Decode(f.text, &sc); err != nil || sc.Name == "" {
				continue // not a scenario
			}
			ix.scenarios[f.path] = uniq(sc.Rules)
		}
	}
	return ix
}

func isTestName(name string) bool {
	for _, p := range []string{"Test", "Fuzz", "Example"} {
		if rest, ok := strings.CutPrefix(name, p); ok && (rest == "" || !('a' <= rest[0] && rest[0] <= 'z')) {
			return name != "TestMain"
		}
	}
	return false
}

func uniq(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// testsLine is the generated list of tests that name a rule: Go test
// functions grouped by file, then scenario files.
func (ix testIndex) testsLine(id string) string {
	var groups []string
	for _, file := range sortedKeys(ix.goTests) {
		var names []string
		for _, fn := range sortedKeys(ix.goTests[file]) {
			if contains(ix.goTests[file][fn], id) {
				names = append(names, "`"+fn+"`")
			}
		}
		if len(names) > 0 {
			groups = append(groups, strings.Join(names, ", ")+" ("+file+")")
		}
	}
	for _, file := range sortedKeys(ix.scenarios) {
		if contains(ix.scenarios[file], id) {
			groups = append(groups, "`"+file+"`")
		}
	}
	if len(groups) == 0 {
		return "Tests: none"
	}
	return "Tests: " + strings.Join(groups, "; ") + "."
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// rulesDoc is docs/rules.md read: the rules it defines, in order, and the
// Tests: line of each.
type rulesDoc struct {
	order []string
	tests map[string]string // id -> its Tests: line
	line  map[string]int
}

func parseRulesDoc(text string) (rulesDoc, []problem) {
	doc := rulesDoc{tests: map[string]string{}, line: map[string]int{}}
	var out []problem
	current := ""
	for i, line := range strings.Split(text, "\n") {
		if m := ruleDefLine.FindStringSubmatch(line); m != nil {
			current = m[1]
			if _, dup := doc.line[current]; dup {
				out = append(out, problem{fmt.Sprintf("docs/rules.md:%d", i+1), current + " is defined twice"})
			}
			doc.order = append(doc.order, current)
			doc.line[current] = i + 1
			continue
		}
		if strings.HasPrefix(line, "Tests:") {
			if current == "" {
				out = append(out, problem{fmt.Sprintf("docs/rules.md:%d", i+1), "a Tests: line before any rule"})
				continue
			}
			if _, dup := doc.tests[current]; dup {
				out = append(out, problem{fmt.Sprintf("docs/rules.md:%d", i+1), current + " has two Tests: lines"})
			}
			doc.tests[current] = line
		}
	}
	return doc, out
}

// checkRulesDocTests: every rule has a Tests: line naming at least one
// test; each Go test function named exists in the file given and cites the
// rule; each scenario named exists and lists the rule in its rules.
func checkRulesDocTests(doc rulesDoc, ix testIndex) []problem {
	var out []problem
	for _, id := range doc.order {
		where := fmt.Sprintf("docs/rules.md:%d", doc.line[id])
		line, ok := doc.tests[id]
		if !ok {
			out = append(out, problem{where, id + " has no Tests: line"})
			continue
		}
		list := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(line, "Tests:")), ".")
		if list == "" || list == "none" {
			out = append(out, problem{where, id + " names no test that exercises it"})
			continue
		}
		for _, group := range strings.Split(list, "; ") {
			if m := goTestGroup.FindStringSubmatch(group); m != nil {
				funcs, ok := ix.goTests[m[2]]
				if !ok {
					out = append(out, problem{where, id + " names " + m[2] + ", which is not a Go test file of the repository"})
					continue
				}
				for _, n := range backquoted.FindAllStringSubmatch(m[1], -1) {
					ids, ok := funcs[n[1]]
					switch {
					case !ok:
						out = append(out, problem{where, id + " names " + n[1] + " in " + m[2] + ", which has no such test"})
					case !contains(ids, id):
						out = append(out, problem{where, id + " names " + n[1] + " (" + m[2] + "), which does not cite " + id})
					}
				}
				continue
			}
			if m := scenarioRef.FindStringSubmatch(group); m != nil {
				ids, ok := ix.scenarios[m[1]]
				switch {
				case !ok:
					out = append(out, problem{where, id + " names " + m[1] + ", which is not a scenario file of the repository"})
				case !contains(ids, id):
					out = append(out, problem{where, id + " names " + m[1] + ", whose rules do not list " + id})
				}
				continue
			}
			out = append(out, problem{where, fmt.Sprintf("%s: cannot read %q: write `TestName`, `TestOther` (dir/file_test.go) or `tests/dir/file.toml`", id, group)})
		}
	}
	return out
}

// rewriteTestsLines replaces each rule's Tests: line with the generated one.
func rewriteTestsLines(text string, ix testIndex) string {
	lines := strings.Split(text, "\n")
	current := ""
	for i, line := range lines {
		if m := ruleDefLine.FindStringSubmatch(line); m != nil {
			current = m[1]
		} else if strings.HasPrefix(line, "Tests:") && current != "" {
			lines[i] = ix.testsLine(current)
		}
	}
	return strings.Join(lines, "\n")
}

func report(t *testing.T, problems []problem) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
}

// TestRulesDoc holds docs/rules.md and the repository to each other: every
// rule id cited anywhere is defined there, every test it lists exists and
// exercises the rule, every rule has a test, no file names a path the
// repository lacks or a document outside it.
func TestRulesDoc(t *testing.T) {
	repo := os.DirFS("..")
	data, err := fs.ReadFile(repo, "docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	files := scanRepo(t, repo)
	ix := buildTestIndex(t, files)
	if *updateRules {
		updated := rewriteTestsLines(string(data), ix)
		if updated != string(data) {
			if err := os.WriteFile("../docs/rules.md", []byte(updated), 0o644); err != nil {
				t.Fatal(err)
			}
			data = []byte(updated)
		}
	}
	doc, problems := parseRulesDoc(string(data))
	report(t, problems)
	if len(doc.order) == 0 {
		t.Fatal("docs/rules.md defines no rule (a rule is a line that starts with its id in bold)")
	}
	defined := map[string]bool{}
	for _, id := range doc.order {
		defined[id] = true
	}
	report(t, checkRuleCitations(files, defined))
	report(t, checkRulesDocTests(doc, ix))
	report(t, checkOutsideCitations(files))
	report(t, checkPaths(repo, files))
}

// The checks of TestRulesDoc fail on planted bad input.
func TestRulesDocChecksFail(t *testing.T) {
	id := func(a, b int) string { return fmt.Sprintf("R%d.%d", a, b) }
	rules := "# Rules\n\n**" + id(1, 1) + "** One rule.\n\n" +
		"Tests: `TestGood`, `TestGone` (pkg/a_test.go); `TestSilent` (pkg/a_test.go); `tests/one.toml`; `tests/missing.toml`.\n\n" +
		"**" + id(1, 2) + "** Another.\n\nTests: none\n\n" +
		"**" + id(1, 3) + "** A third.\n\nTests: `TestGood` somewhere\n"
	fsys := fstest.MapFS{
		"docs/rules.md": {Data: []byte(rules)},
		"pkg/a.go": {Data: []byte("// Package pkg (" + id(1, 1) + ", " + id(9, 9) + "); see pkg/b.go and docs/gone.md, not pkg/a.go or docs/rules.md.\n" +
			"// Its sources were under third" + "_party/gopher-lua; the rules are in " + outsideCitations[0] + ".\npackage pkg\n")},
		"pkg/a_test.go":      {Data: []byte("package pkg\n\nimport \"testing\"\n\n// " + id(1, 1) + "\nfunc TestGood(t *testing.T) {}\n\nfunc TestSilent(t *testing.T) {}\n")},
		"tests/one.toml":     {Data: []byte("name = \"one\"\nrules = [\"" + id(1, 2) + "\"]\n")},
		"docs/guide.md":      {Data: []byte("Read [the rules](rules.md#r11), ../README.md is above; `fs/read` is a tool, github.com/x/y/z.go a URL.\nSee [limits](limits.md) and [the site](https://example.com/a.md).\n")},
		"testdata/stale.md":  {Data: []byte(id(7, 7) + " " + outsideCitations[1] + "\n")},
		"pkg/commands/x.scm": {Data: []byte("; see docs/nothing.md\n")},
		"README.md":          {Data: []byte("attune\n")},
	}
	files := scanRepo(t, fsys)
	doc, problems := parseRulesDoc(rules)
	if len(problems) != 0 {
		t.Fatalf("parse: %v", problems)
	}
	if fmt.Sprint(doc.order) != fmt.Sprint([]string{id(1, 1), id(1, 2), id(1, 3)}) {
		t.Fatalf("rules read: %v", doc.order)
	}
	defined := map[string]bool{id(1, 1): true, id(1, 2): true, id(1, 3): true}
	ix := buildTestIndex(t, files)
	want := func(name string, got []problem, texts ...string) {
		t.Helper()
		all := fmt.Sprint(got)
		for _, s := range texts {
			if !strings.Contains(all, s) {
				t.Errorf("%s: no problem says %q; got %v", name, s, got)
			}
		}
		if len(got) != len(texts) {
			t.Errorf("%s: %d problems, want %d: %v", name, len(got), len(texts), got)
		}
	}
	want("citations", checkRuleCitations(files, defined), "pkg/a.go:1: cites rule "+id(9, 9))
	want("tests", checkRulesDocTests(doc, ix),
		"names TestGone in pkg/a_test.go, which has no such test",
		"names TestSilent (pkg/a_test.go), which does not cite "+id(1, 1),
		"tests/one.toml, whose rules do not list "+id(1, 1),
		"tests/missing.toml, which is not a scenario file",
		id(1, 2)+" names no test",
		id(1, 3)+`: cannot read "`+"`TestGood` somewhere"+`"`)
	want("outside", checkOutsideCitations(files), "pkg/a.go:2: cites "+outsideCitations[0])
	want("paths", checkPaths(fsys, files),
		"docs/rules.md:5: names tests/missing.toml",
		"pkg/a.go:1: names pkg/b.go",
		"pkg/a.go:1: names docs/gone.md",
		"pkg/a.go:2: names third"+"_party/gopher-lua",
		"pkg/commands/x.scm:1: names docs/nothing.md",
		"docs/guide.md:2: links to limits.md")

	// The generated lines list exactly the tests that cite a rule.
	got := rewriteTestsLines(rules, ix)
	if !strings.Contains(got, "Tests: `TestGood` (pkg/a_test.go).\n") || !strings.Contains(got, "Tests: `tests/one.toml`.\n") {
		t.Errorf("rewritten:\n%s", got)
	}
	if !bytes.Contains([]byte(got), []byte("Tests: none")) {
		t.Errorf("a rule no test cites is not listed as untested:\n%s", got)
	}
}
