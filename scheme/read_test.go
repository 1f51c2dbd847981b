package scheme

import (
	"errors"
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
)

// TestReadPositions checks that every form carries its file, line and column.
// R7.1
func TestReadPositions(t *testing.T) {
	src := "; comment\n(define (f x)\n  \"two\nlines\" 'q\r\n  :key -1.5 #t)\n  ☃x y"
	forms, err := Read("p.scm", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range forms {
		f.Walk(func(g *Form) bool {
			got = append(got, g.Pos.String()+" "+g.Kind.String()+" "+g.String())
			return true
		})
	}
	want := []string{
		`p.scm:2:1 list (define (f x) "two\nlines" (quote q) :key -1.5 #t)`,
		`p.scm:2:2 symbol define`,
		`p.scm:2:9 list (f x)`,
		`p.scm:2:10 symbol f`,
		`p.scm:2:12 symbol x`,
		`p.scm:3:3 string "two\nlines"`,
		`p.scm:4:8 list (quote q)`,
		`p.scm:4:8 symbol quote`,
		`p.scm:4:9 symbol q`,
		`p.scm:5:3 keyword :key`,
		`p.scm:5:8 number -1.5`,
		`p.scm:5:13 boolean #t`,
		`p.scm:6:3 symbol ☃x`,
		`p.scm:6:6 symbol y`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReadValues checks the values the reader decodes.
// R7.1
func TestReadValues(t *testing.T) {
	forms, err := Read("v.scm", []byte(`"a\nb\tc\r\"\\\a\b\0" "\x41;\x2603;" "joined \
	   here" 42 -7 +3 0.5 -.25 1e3 2.5E-2 #t #f #true #false :post-fail foo/bar a.b - ... 'x`))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind Kind
		text string
		num  float64
		b    bool
	}
	wants := []want{
		{String, "a\nb\tc\r\"\\\a\b\x00", 0, false},
		{String, "A☃", 0, false},
		{String, "joined here", 0, false},
		{Number, "42", 42, false},
		{Number, "-7", -7, false},
		{Number, "+3", 3, false},
		{Number, "0.5", 0.5, false},
		{Number, "-.25", -0.25, false},
		{Number, "1e3", 1000, false},
		{Number, "2.5E-2", 0.025, false},
		{Bool, "", 0, true},
		{Bool, "", 0, false},
		{Bool, "", 0, true},
		{Bool, "", 0, false},
		{Keyword, "post-fail", 0, false},
		{Symbol, "foo/bar", 0, false},
		{Symbol, "a.b", 0, false},
		{Symbol, "-", 0, false},
		{Symbol, "...", 0, false},
		{List, "", 0, false},
	}
	if len(forms) != len(wants) {
		t.Fatalf("read %d forms, want %d", len(forms), len(wants))
	}
	for i, w := range wants {
		f := forms[i]
		if f.Kind != w.kind || f.Text != w.text || f.Num != w.num || f.Bool != w.b {
			t.Errorf("form %d: got %v %q %v %v, want %v %q %v %v", i, f.Kind, f.Text, f.Num, f.Bool, w.kind, w.text, w.num, w.b)
		}
	}
	if q := forms[len(forms)-1]; q.Head() != "quote" || q.Items[1].Text != "x" {
		t.Errorf("'x read as %s", q)
	}
	if !forms[3].IsInteger() || forms[6].IsInteger() {
		t.Error("IsInteger")
	}
}

// TestReadErrors checks reader errors that a text file of test data cannot
// hold; the others are under tests/scheme/errors.
// R7.1
func TestReadErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"(a\n  (b", "e.scm:2:3: unclosed list"},
		{"\"abc\xff\"", "e.scm:1:5: invalid UTF-8 byte 0xff in string"},
		{"(a \xc3)", "e.scm:1:4: invalid UTF-8 byte 0xc3"},
		{strings.Repeat("(", maxDepth+1), "e.scm:1:501: forms nest more than 500 deep"},
		{strings.Repeat("'", maxDepth+1) + "x", "e.scm:1:501: forms nest more than 500 deep"},
		{`"\x110000;"`, `e.scm:1:2: bad \x escape: \x110000; is not a Unicode character`},
		{`"\xD800;"`, `e.scm:1:2: bad \x escape`},
		{`"abc\`, `e.scm:1:5: unterminated string`},
		{"(x 1e999)", "e.scm:1:4: number 1e999 is out of range"},
		{"(x 1.2.3)", `e.scm:1:4: bad number "1.2.3"`},
		{"'", "e.scm:1:1: a quote ' must be followed by a form"},
		{"(a ,b)", "e.scm:1:4: unexpected ','"},
		{"#", `e.scm:1:1: bad # syntax "#"`},
		{"#(1 2)", `e.scm:1:1: bad # syntax "#"`},
	}
	for _, tc := range cases {
		_, err := Read("e.scm", []byte(tc.src))
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v is not an *Error", tc.src, err)
			continue
		}
		if se.Form != "" {
			t.Errorf("%q: reader error names a form: %v", tc.src, err)
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n  got:  %v\n  want: %s...", tc.src, err, tc.want)
		}
	}
	// Comments may hold any bytes.
	if _, err := Read("c.scm", []byte("; \xff\xfe\n(a)")); err != nil {
		t.Errorf("comment with invalid UTF-8: %v", err)
	}
}

// TestFormString checks that printing a form and reading it back gives the
// same form.
func TestFormString(t *testing.T) {
	src := `(define (f x) (list "a\"b\\c\n" :k 'sym -1.5 #t #f ("\x1;")))`
	forms, err := Read("s.scm", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	printed := forms[0].String()
	again, err := Read("s.scm", []byte(printed))
	if err != nil {
		t.Fatalf("reading %s: %v", printed, err)
	}
	if again[0].String() != printed {
		t.Errorf("round trip: %s became %s", printed, again[0])
	}
}

// TestLowerFile checks the entry point of `attune lower`.
// R7.5
func TestLowerFile(t *testing.T) {
	out, err := LowerFile(dataDir + "/lower/calls.scm")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `hook.tool("fs/*", {pre = f, post_fail = g})`) {
		t.Errorf("unexpected output:\n%s", out)
	}
	if _, err := LowerFile(dataDir + "/errors/stray-paren.scm"); err == nil || !strings.HasPrefix(err.Error(), dataDir+"/errors/stray-paren.scm:2:13: ") {
		t.Errorf("error does not name the path: %v", err)
	}
	if _, err := LowerFile(dataDir + "/no-such-file.scm"); err == nil {
		t.Error("no error for a missing file")
	}
}

// TestCompile checks that Compile returns a prototype that runs under the
// file's name.
// R7.4
func TestCompile(t *testing.T) {
	proto, err := lowerAndCompile("c.scm", []byte("(define x 1)\n(error (string-append \"x=\" x))"))
	if err != nil {
		t.Fatal(err)
	}
	L := newLuaState(t)
	L.Push(L.NewFunctionFromProto(proto))
	err = L.PCall(0, 0, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "c.scm:2: x=1") {
		t.Errorf("got %v", err)
	}
	if _, err := lowerAndCompile("c.scm", []byte("(")); err == nil {
		t.Error("no error for bad source")
	}
}

// TestLuaLimits checks that a program too big for Lua lowers (Lower compiles
// nothing) and fails to compile with one error type at the .scm line.
func TestLuaLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("\n(f")
	for i := 0; i < 300; i++ {
		b.WriteString(" (g)")
	}
	b.WriteString(")")
	_, err := lowerAndCompile("big.scm", []byte(b.String()))
	var se *luabind.SyntaxError
	if !errors.As(err, &se) || se.File != "big.scm" || !strings.HasPrefix(err.Error(), "big.scm:") || !strings.Contains(se.Msg, "too big for Lua") {
		t.Errorf("got %v", err)
	}
}

// TestManyTopLevelNames checks that a program with more top-level definitions
// than Lua allows locals still lowers and runs, with globals.
func TestManyTopLevelNames(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 250; i++ {
		b.WriteString("(define (f" + itoa(i) + ") " + itoa(i) + ")\n")
	}
	b.WriteString("(emit (+ (f0) (f249)))\n")
	L := newLuaState(t)
	var got lua.LValue
	L.SetGlobal("emit", L.NewFunction(func(L *lua.LState) int { got = L.Get(1); return 0 }))
	if err := runLowered(t, L, "many.scm", b.String()); err != nil {
		t.Fatal(err)
	}
	if got != lua.LNumber(249) {
		t.Errorf("got %v", got)
	}
}

// lowerAndCompile lowers src and compiles the Lua with gopher-lua, as the
// engine does (through luabind.Compile) with a program it loads.
func lowerAndCompile(file string, src []byte) (*lua.FunctionProto, error) {
	out, err := Lower(file, src)
	if err != nil {
		return nil, err
	}
	return luabind.Compile(file, []byte(out))
}
