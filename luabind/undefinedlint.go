package luabind

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/attune-dev/attune/internal/lua/ast"
	"github.com/attune-dev/attune/internal/lua/parse"
	"github.com/attune-dev/attune/internal/tomlx"
)

// UndefinedCalls finds the calls of a program that can only fail: a call
// of a global the program never assigns and the sandbox and the engine do
// not define (refuze), and a call of a field of one of the engine's
// namespaces that the namespace does not hold (hook.tol, in the forms
// hook/tol). known are the engine's script functions in their Lua
// spelling ("guard.tool", "notify"); the sandbox's own names are added
// here. It returns one problem per call, "FILE:LINE: ...", in source
// order, each naming the callee as the program spells it and the nearest
// defined name. src is Lua (lowered Lua for a .scm program, whose lines
// are the source's). A program that does not parse gives none; loading it
// reports the syntax error.
func UndefinedCalls(file string, src []byte, known []string, hints []string) []string {
	if checkSize(file, src) != nil {
		return nil
	}
	chunk, err := parse.Parse(bytes.NewReader(src), file)
	if err != nil || checkNesting(file, chunk) != nil {
		return nil
	}
	w := &undefWalker{assigned: map[string]bool{}}
	walkChunk(w, chunk)
	defined := map[string]bool{}
	spaces := map[string]map[string]bool{}
	for _, n := range append(append([]string(nil), known...), shared().names...) {
		defined[n] = true
		if ns, f, ok := strings.Cut(n, "."); ok {
			if spaces[ns] == nil {
				spaces[ns] = map[string]bool{}
			}
			spaces[ns][f] = true
		}
	}
	forms := isForms(file)
	var candidates []string
	spell := func(n string) string {
		if forms {
			return formsSpelling(n)
		}
		return n
	}
	for n := range defined {
		candidates = append(candidates, spell(n))
	}
	for n := range w.assigned {
		candidates = append(candidates, spell(n))
	}
	if forms {
		candidates = append(candidates, hints...)
	}
	sort.Strings(candidates)
	var out []string
	for _, c := range w.calls {
		head, field, dotted := strings.Cut(c.name, ".")
		switch {
		case w.assigned[head]:
			continue // the program's own global (or a field of one)
		case !dotted && defined[head]:
			continue
		case dotted && spaces[head] == nil && defined[head]:
			continue // a field of a sandbox value that is no namespace (a string's method)
		case dotted && spaces[head] != nil && (spaces[head][field] || strings.Contains(field, ".")):
			continue
		}
		name := spell(c.name)
		what := "is not a defined function"
		if forms {
			what = "is not a form or function"
		}
		out = append(out, fmt.Sprintf("%s:%d: %s %s (calling it fails when the code runs)%s", file, c.line, name, what, tomlx.Suggest(name, candidates)))
	}
	return out
}

type undefCall struct {
	name string
	line int
}

// undefWalker collects the calls of globals (and of fields of globals) and
// the globals the program assigns anywhere, with the locals in scope.
type undefWalker struct {
	noVisit
	scopes   []map[string]bool
	assigned map[string]bool
	calls    []undefCall
}

func (w *undefWalker) local(name string) bool {
	for k := len(w.scopes) - 1; k >= 0; k-- {
		if w.scopes[k][name] {
			return true
		}
	}
	return false
}

func (w *undefWalker) push(names []string) {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	w.scopes = append(w.scopes, m)
}

func (w *undefWalker) pop() { w.scopes = w.scopes[:len(w.scopes)-1] }

func (w *undefWalker) openFunc(_ *ast.FunctionExpr, params []string) { w.push(params) }
func (w *undefWalker) closeFunc()                                    { w.pop() }
func (w *undefWalker) openBlock(names []string)                      { w.push(names) }
func (w *undefWalker) closeBlock()                                   { w.pop() }

func (w *undefWalker) declare(names []string) {
	if len(w.scopes) == 0 {
		w.push(nil) // the chunk's own scope
	}
	for _, n := range names {
		w.scopes[len(w.scopes)-1][n] = true
	}
}

func (w *undefWalker) enter(n ast.PositionHolder, _ int) bool {
	switch x := n.(type) {
	case *ast.LocalAssignStmt:
		// local function f: f is in scope in its own body
		if len(x.Names) == 1 && len(x.Exprs) == 1 {
			if _, ok := x.Exprs[0].(*ast.FunctionExpr); ok {
				w.declare(x.Names)
			}
		}
	case *ast.AssignStmt:
		for _, l := range x.Lhs {
			if name := w.globalName(l); name != "" {
				w.assigned[name] = true
			}
		}
	case *ast.FuncDefStmt:
		if x.Name != nil {
			target := x.Name.Func
			if target == nil {
				target = x.Name.Receiver
			}
			if name := w.globalName(target); name != "" {
				w.assigned[name] = true
			}
		}
	case *ast.FuncCallExpr:
		if x.Func != nil {
			if name := w.globalName(x.Func); name != "" {
				w.calls = append(w.calls, undefCall{name: name, line: x.Line()})
			}
		}
	}
	return true
}

// globalName spells e when it is a global or a chain of constant fields of
// one ("refuze", "hook.tol"); "" otherwise.
func (w *undefWalker) globalName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.IdentExpr:
		if w.local(x.Value) || x.Value == "_G" {
			return ""
		}
		return x.Value
	case *ast.AttrGetExpr:
		k, ok := x.Key.(*ast.StringExpr)
		if !ok {
			return ""
		}
		obj := w.globalName(x.Object)
		if obj == "" {
			return ""
		}
		return obj + "." + k.Value
	}
	return ""
}
