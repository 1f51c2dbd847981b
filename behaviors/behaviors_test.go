package behaviors

import (
	"bytes"
	"io/fs"
	"os"
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
	"github.com/attune-dev/attune/internal/lua/parse"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/scheme"
)

// forms reads one file of the pack.
func forms(t *testing.T, file string) []*scheme.Form {
	t.Helper()
	src, err := fs.ReadFile(FS, file)
	if err != nil {
		t.Fatal(err)
	}
	out, err := scheme.Read(file, src)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// calls lists the head symbols of every list form in fs (quoted data too).
func calls(fs []*scheme.Form) []string {
	var out []string
	var walk func(f *scheme.Form)
	walk = func(f *scheme.Form) {
		if f.Kind != scheme.List {
			return
		}
		if len(f.Items) > 0 && f.Items[0].Kind == scheme.Symbol {
			out = append(out, f.Items[0].Text)
		}
		for _, it := range f.Items {
			walk(it)
		}
	}
	for _, f := range fs {
		walk(f)
	}
	return out
}

// strs lists every string literal in fs.
func strs(fs []*scheme.Form) []string {
	var out []string
	var walk func(f *scheme.Form)
	walk = func(f *scheme.Form) {
		switch f.Kind {
		case scheme.String:
			out = append(out, f.Text)
		case scheme.List:
			for _, it := range f.Items {
				walk(it)
			}
		}
	}
	for _, f := range fs {
		walk(f)
	}
	return out
}

// Every file of the pack reads and lowers.
func TestPackLowers(t *testing.T) {
	err := fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := fs.ReadFile(FS, p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".lua") {
			if _, err := parse.Parse(bytes.NewReader(src), p); err != nil {
				t.Errorf("%s: %v", p, err)
			}
			return nil
		}
		if _, err := compileScheme(p, src); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"branch.scm", "tasks.scm", "offload.scm", "goal.scm", "fusion.scm", "guardrails.lua", "commands/goal.scm", "commands/plan.scm"} {
		if _, err := fs.Stat(FS, want); err != nil {
			t.Errorf("the pack lacks %s", want)
		}
	}
}

// R6.10: fusion registers no subscription and no tool guard or hook, and
// never calls put-memory; R6.8: offload emits no note.
func TestFusionAndOffloadStayOutOfTheWay(t *testing.T) {
	for _, c := range calls(forms(t, "fusion.scm")) {
		switch c {
		case "subscribe", "guard/tool", "hook/tool", "guard/turn", "guard/round", "define/tool":
			t.Errorf("fusion.scm uses %s", c)
		}
	}
	for _, s := range strs(forms(t, "fusion.scm")) {
		if strings.Contains(s, "put-memory") {
			t.Errorf("fusion.scm names put-memory: %q", s)
		}
	}
	for _, c := range calls(forms(t, "offload.scm")) {
		switch c {
		case "notify", "hook/round", "hook/turn", "hook/tool", "subscribe":
			t.Errorf("offload.scm uses %s", c)
		}
	}
}

// Every method a program defines is documented in its header comment and in
// README.md.
func TestMethodsDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"tasks.scm", "offload.scm", "goal.scm", "fusion.scm"} {
		src, _ := fs.ReadFile(FS, file)
		header := ""
		for _, line := range strings.Split(string(src), "\n") {
			if !strings.HasPrefix(line, ";") {
				break
			}
			header += line + "\n"
		}
		for _, f := range forms(t, file) {
			if f.Head() != "define/method" || len(f.Items) < 3 {
				continue
			}
			name := f.Items[2].Text
			if !strings.Contains(header, "  "+name+" ") {
				t.Errorf("%s: method %s is not documented in the header comment", file, name)
			}
			if !strings.Contains(string(readme), "`"+name+"`") {
				t.Errorf("README.md: method %s of %s is not documented", name, file)
			}
		}
	}
}

// harness runs one program's handlers outside the engine, with the engine
// functions they use replaced by stand-ins: enough to test a handler's own
// logic (what it proposes, refuses or returns) apart from admission.
type harness struct {
	L         *lua.LState
	methods   map[string]*lua.LFunction
	proposals []*lua.LTable
}

func newHarness(t *testing.T, file string) *harness {
	t.Helper()
	src, err := fs.ReadFile(FS, file)
	if err != nil {
		t.Fatal(err)
	}
	proto, err := compileScheme(file, src)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{L: lua.NewState(), methods: map[string]*lua.LFunction{}}
	t.Cleanup(h.L.Close)
	L := h.L
	noop := L.NewFunction(func(*lua.LState) int { return 0 })
	ns := func(name string, fns map[string]lua.LGFunction) {
		tb := L.NewTable()
		for k, f := range fns {
			tb.RawSetString(k, L.NewFunction(f))
		}
		L.SetGlobal(name, tb)
	}
	ns("define", map[string]lua.LGFunction{
		"reducer": func(*lua.LState) int { return 0 },
		"method": func(L *lua.LState) int {
			h.methods[L.CheckString(1)+"."+L.CheckString(2)] = L.CheckFunction(3)
			return 0
		},
	})
	ns("hook", map[string]lua.LGFunction{"round": func(*lua.LState) int { return 0 }})
	ns("validate", map[string]lua.LGFunction{"configuration": func(*lua.LState) int { return 0 }})
	ns("read", map[string]lua.LGFunction{"forms": readForms})
	L.SetGlobal("notify", noop)
	L.SetGlobal("list", L.NewFunction(func(L *lua.LState) int {
		tb := L.NewTable()
		for i := 1; i <= L.GetTop(); i++ {
			tb.Append(L.Get(i))
		}
		L.Push(tb)
		return 1
	}))
	L.SetGlobal("propose", L.NewFunction(func(L *lua.LState) int {
		h.proposals = append(h.proposals, L.CheckTable(1))
		return 0
	}))
	L.SetGlobal("refuse", L.NewFunction(func(L *lua.LState) int {
		tb := L.NewTable()
		tb.RawSetString("refused", lua.LString(L.OptString(1, "")))
		L.Push(tb)
		return 1
	}))
	L.SetGlobal("config", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNil); return 1 }))
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 0, nil); err != nil {
		t.Fatal(err)
	}
	return h
}

// readForms stands in for the engine's read/forms: symbols are plain
// strings, keywords ":name", string literals {string = "..."}, lists lists;
// {error = message} when the text does not read.
func readForms(L *lua.LState) int {
	read, err := scheme.Read("program.scm", []byte(L.CheckString(1)))
	if err != nil {
		t := L.NewTable()
		t.RawSetString("error", lua.LString(err.Error()))
		L.Push(t)
		return 1
	}
	var conv func(f *scheme.Form) lua.LValue
	conv = func(f *scheme.Form) lua.LValue {
		switch f.Kind {
		case scheme.List:
			tb := L.NewTable()
			for _, it := range f.Items {
				tb.Append(conv(it))
			}
			return tb
		case scheme.Symbol:
			return lua.LString(f.Text)
		case scheme.Keyword:
			return lua.LString(":" + f.Text)
		case scheme.String:
			tb := L.NewTable()
			tb.RawSetString("string", lua.LString(f.Text))
			return tb
		case scheme.Number:
			return lua.LNumber(f.Num)
		case scheme.Bool:
			return lua.LBool(f.Bool)
		}
		return lua.LNil
	}
	out := L.NewTable()
	for _, f := range read {
		out.Append(conv(f))
	}
	L.Push(out)
	return 1
}

// call runs a method handler with an empty ctx.
func (h *harness) call(t *testing.T, method string, state, input *lua.LTable) (lua.LValue, error) {
	t.Helper()
	fn, ok := h.methods[method]
	if !ok {
		t.Fatalf("no method %s", method)
	}
	h.proposals = nil
	err := h.L.CallByParam(lua.P{Fn: fn, NRet: 1, Protect: true}, h.L.NewTable(), state, input)
	if err != nil {
		return nil, err
	}
	ret := h.L.Get(-1)
	h.L.Pop(1)
	return ret, nil
}

func emptyTasks(L *lua.LState) *lua.LTable {
	st := L.NewTable()
	st.RawSetString("tasks", L.NewTable())
	st.RawSetString("order", L.NewTable())
	st.RawSetString("next", lua.LNumber(0))
	return st
}

// R6.2: create reads the validation program as forms. The scenarios under
// tests/behaviors check the same through the engine; this test pins the
// reason of each refusal.
func TestTasksCreateReadsForms(t *testing.T) {
	h := newHarness(t, "tasks.scm")
	cases := []struct {
		name, program, refused string // refused: "" when create accepts
	}{
		{"call/tool both", `(call/tool "tree/list" (table)) (call/tool "tasks/write-completion-verdict" (table :verdict "pass"))`, ""},
		{"head symbols", `(tree/read "go.mod") (tasks/write-completion-verdict "pass")`, ""},
		{"nested", `(define (f) (when #t (let ((x (call/tool "tree/stat" (table)))) (tasks/write-completion-verdict x)))) (f)`, ""},
		{"strings only", `(display "(call/tool \"tree/list\")") (display "tasks/write-completion-verdict")`, "never calls a tree/"},
		{"comments only", "; (call/tool \"tree/list\")\n; (tasks/write-completion-verdict)\n(call/tool \"fs/read\" (table))", "never calls a tree/"},
		{"verdict in a string", `(call/tool "tree/list" (table)) (call/tool "log/write" (table :text "tasks/write-completion-verdict"))`, "never calls tasks/write-completion-verdict"},
		{"verdict in a comment", "(call/tool \"tree/list\" (table)) ; (tasks/write-completion-verdict \"pass\")", "never calls tasks/write-completion-verdict"},
		{"quoted", `(quote (call/tool "tree/list")) '(tasks/write-completion-verdict "pass")`, "never calls a tree/"},
		{"quoted verdict", `(call/tool "tree/list") '(tasks/write-completion-verdict "pass")`, "never calls tasks/write-completion-verdict"},
		{"bare tree/", `(call/tool "tree/" (table)) (tasks/write-completion-verdict "pass")`, "never calls a tree/"},
		{"computed path", `(call/tool (string-append "tree/" "x")) (tasks/write-completion-verdict "pass")`, "never calls a tree/"},
		{"tree as an argument", `(call/tool "fs/read" "tree/list") (tasks/write-completion-verdict "pass")`, "never calls a tree/"},
		{"keyword", `(call/tool :tree/list) (tasks/write-completion-verdict "pass")`, "never calls a tree/"},
		{"unreadable", `(call/tool "tree/list" (table)) (tasks/write-completion-verdict "pass"`, "cannot be read as forms"},
		{"empty", ``, "never calls a tree/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := h.L.NewTable()
			in.RawSetString("title", lua.LString(c.name))
			in.RawSetString("validation", lua.LString(c.program))
			ret, err := h.call(t, "tasks@session.create", emptyTasks(h.L), in)
			if err != nil {
				t.Fatal(err)
			}
			tb, _ := ret.(*lua.LTable)
			if tb == nil {
				t.Fatalf("create returned %v", ret)
			}
			reason := tb.RawGetString("refused")
			if c.refused == "" {
				if reason != lua.LNil || len(h.proposals) != 1 || tb.RawGetString("id").String() != "t1" {
					t.Fatalf("want accepted as t1, got refused=%v id=%v, %d proposals", reason, tb.RawGetString("id"), len(h.proposals))
				}
				return
			}
			if !strings.Contains(reason.String(), c.refused) {
				t.Fatalf("want a refusal containing %q, got %v", c.refused, reason)
			}
			if len(h.proposals) != 0 {
				t.Fatalf("a refused create proposed %d actions", len(h.proposals))
			}
		})
	}
}

// R6.7: put-memory refuses a blank citation and proposes nothing.
func TestOffloadBlankCitation(t *testing.T) {
	h := newHarness(t, "offload.scm")
	st := h.L.NewTable()
	st.RawSetString("entries", h.L.NewTable())
	st.RawSetString("writes", lua.LNumber(0))
	in := h.L.NewTable()
	in.RawSetString("body", lua.LString("a fact"))
	in.RawSetString("citation", lua.LString("  \n"))
	ret, err := h.call(t, "offload.put-memory", st, in)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := ret.(*lua.LTable)
	if tb == nil || !strings.Contains(tb.RawGetString("refused").String(), "citation") || len(h.proposals) != 0 {
		t.Fatalf("want a refusal naming the citation and no proposal, got %v, %d proposals", ret, len(h.proposals))
	}
}

// compileScheme lowers a .scm file and compiles it the way the engine does.
func compileScheme(file string, src []byte) (*lua.FunctionProto, error) {
	out, err := scheme.Lower(file, src)
	if err != nil {
		return nil, err
	}
	return luabind.Compile(file, []byte(out))
}
