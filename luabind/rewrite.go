package luabind

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/attune-dev/attune/internal/lua/ast"
	"github.com/attune-dev/attune/internal/lua/parse"
)

// gopher-lua v1.1.2 compiles some assignments wrongly:
//
//   - A logical expression assigned to an existing local variable of the
//     function being compiled: the right side is evaluated straight into the
//     local's register, and in x = f() and y, when f() is false or nil, the
//     false branch jumps to the end without copying the value: x keeps its
//     old value. Every operand of an and chain whose false value is the
//     result and that is not a local variable, a constant or a comparison
//     does this: x = g and y with g a global or an upvalue, x = t.k and y,
//     x = a or f() and y. Assignments to globals, upvalues and fields, and
//     local statements, compile right.
//   - Multiple assignments. A local target is assigned before the other
//     expressions are read: a, b = b, a gives 2, 2 (upstream issue #440), a
//     closure called later in the statement sees the new value, and
//     a, a.k = v, w stores into the new a. And when a field's value is a
//     local variable, the compiler miscounts its registers: g, t.x = 5, c
//     assigns the wrong value to g.
//
// rewriteChunk walks the parsed program before code generation and rewrites
// every such statement through fresh temporaries, in shapes the compiler
// gets right:
//
//	x = f() and y        do local t = f() and y; x = t end
//	a, t[k] = e1, e2     do local o, q = t, k; local v1, v2 = e1, e2; o[q] = v2; a = v1 end
//
// in detail: the table and key of every indexed target first (in order),
// then every value into a local list (which keeps the rules for calls and
// ... that fill or drop values), then one assignment per target from the
// last to the first, as gopher-lua orders them. Every assignment with more
// than one target or value is rewritten, whatever its targets (the
// compiler's register counting cannot be trusted there); a logical
// expression assigned to a local only when an operand can lose its value.
// The temporaries are named "(assign N)", which no script can spell, so they
// never shadow a script's names. Line numbers are the statement's, so errors
// and tracebacks point where they did.

// Rewrite is one statement compiled through temporaries.
type Rewrite struct {
	File string
	Line int
	// Shape is "logical" (a logical expression assigned to a local) or
	// "multiple" (an assignment with several targets or values).
	Shape string
	// Targets are the statement's targets as written (a, t.k, t[...]).
	Targets []string
}

func (r Rewrite) String() string {
	t := strings.Join(r.Targets, ", ")
	if r.Shape == "logical" {
		return fmt.Sprintf("%s:%d: note: %s = <and/or expression> is compiled through a temporary (gopher-lua v1.1.2 would leave %s unchanged when an operand before the last is false or nil); the same code by hand: local tmp = <expression>; %s = tmp", r.File, r.Line, t, t, t)
	}
	return fmt.Sprintf("%s:%d: note: the multiple assignment to %s is compiled through temporaries (gopher-lua v1.1.2 can assign a target before the statement reads it, or store the wrong value); the same code by hand: local v1, v2 = <values>; %s = v1, v2 with one assignment per line", r.File, r.Line, t, t)
}

// Rewrites parses Lua source and lists the statements Compile rewrites.
// Check reports them (multiple assignments only when they read a target).
func Rewrites(file string, src []byte) ([]Rewrite, error) {
	if err := checkSize(file, src); err != nil {
		return nil, err
	}
	chunk, err := parse.Parse(bytes.NewReader(src), file)
	if err != nil {
		return nil, err
	}
	if err := checkNesting(file, chunk); err != nil { // limits.go: before the walk
		return nil, err
	}
	return rewriteChunk(file, chunk), nil
}

// rewriteChunk rewrites a parsed chunk in place (see above) and returns
// what it rewrote.
func rewriteChunk(file string, chunk []ast.Stmt) []Rewrite {
	rw := &rewriter{file: file}
	rw.openFunc(nil, nil)
	walkChunk(rw, chunk)
	rw.closeFunc()
	return rw.out
}

// rewriter knows the locals in scope as it walks, and rewrites
// assignments after their expressions were walked.
type rewriter struct {
	noVisit
	file  string
	fn    *fnScope
	temps int
	out   []Rewrite
}

// fnScope is one function being walked: its blocks of locals, innermost
// last.
type fnScope struct {
	parent *fnScope
	blocks [][]string
}

// openFunc starts a function whose parameters are locals (with self for a
// method, arg for a vararg function, as the compiler declares them).
func (rw *rewriter) openFunc(_ *ast.FunctionExpr, params []string) {
	rw.fn = &fnScope{parent: rw.fn, blocks: [][]string{params, nil}}
}

func (rw *rewriter) closeFunc() { rw.fn = rw.fn.parent }

// openBlock starts a block; names are locals it starts with (loop
// variables).
func (rw *rewriter) openBlock(names []string) { rw.fn.blocks = append(rw.fn.blocks, names) }

func (rw *rewriter) closeBlock() { rw.fn.blocks = rw.fn.blocks[:len(rw.fn.blocks)-1] }

func (rw *rewriter) declare(names []string) {
	b := rw.fn.blocks
	b[len(b)-1] = append(b[len(b)-1], names...)
}

// isLocal reports whether name is a local variable of the function being
// walked (not an upvalue, not a global).
func (rw *rewriter) isLocal(name string) bool {
	for _, b := range rw.fn.blocks {
		for _, n := range b {
			if n == name {
				return true
			}
		}
	}
	return false
}

func (rw *rewriter) replace(s ast.Stmt) ast.Stmt {
	if a, ok := s.(*ast.AssignStmt); ok {
		return rw.assign(a)
	}
	return nil
}

// assign rewrites an assignment of an affected shape (nil: keep it).
func (rw *rewriter) assign(s *ast.AssignStmt) ast.Stmt {
	if len(s.Lhs) > 1 || len(s.Rhs) > 1 {
		rw.out = append(rw.out, Rewrite{File: rw.file, Line: s.Line(), Shape: "multiple", Targets: targetNames(s.Lhs)})
		return rw.through(s)
	}
	id, ok := s.Lhs[0].(*ast.IdentExpr)
	if !ok || !rw.isLocal(id.Value) {
		return nil
	}
	lg, ok := s.Rhs[0].(*ast.LogicalOpExpr)
	if !ok || !rw.loses(lg) {
		return nil
	}
	rw.out = append(rw.out, Rewrite{File: rw.file, Line: s.Line(), Shape: "logical", Targets: []string{id.Value}})
	return rw.through(s)
}

// targetNames spells assignment targets for a report.
func targetNames(lhs []ast.Expr) []string {
	out := make([]string, len(lhs))
	for k, e := range lhs {
		switch x := e.(type) {
		case *ast.IdentExpr:
			out[k] = x.Value
		case *ast.AttrGetExpr:
			obj := "(...)"
			if id, ok := x.Object.(*ast.IdentExpr); ok {
				obj = id.Value
			}
			if key, ok := x.Key.(*ast.StringExpr); ok {
				out[k] = obj + "." + key.Value
			} else {
				out[k] = obj + "[...]"
			}
		}
	}
	return out
}

// through is s compiled through temporaries: the tables and keys of
// indexed targets, then the values, then one assignment per target from the
// last to the first.
func (rw *rewriter) through(s *ast.AssignStmt) ast.Stmt {
	line, last := s.Line(), s.LastLine()
	at := func(n interface{ SetLine(int) }) {
		n.SetLine(line)
		if l, ok := n.(interface{ SetLastLine(int) }); ok {
			l.SetLastLine(last)
		}
	}
	ident := func(name string) *ast.IdentExpr {
		id := &ast.IdentExpr{Value: name}
		at(id)
		return id
	}
	local := func(names []string, exprs []ast.Expr) ast.Stmt {
		st := &ast.LocalAssignStmt{Names: names, Exprs: exprs}
		at(st)
		return st
	}
	var out []ast.Stmt
	targets := make([]ast.Expr, len(s.Lhs))
	var pnames []string
	var pexprs []ast.Expr
	for k, e := range s.Lhs {
		ag, ok := e.(*ast.AttrGetExpr)
		if !ok {
			targets[k] = e
			continue
		}
		t := &ast.AttrGetExpr{Key: ag.Key}
		at(t)
		o := rw.temp()
		pnames, pexprs = append(pnames, o), append(pexprs, ag.Object)
		t.Object = ident(o)
		switch ag.Key.(type) {
		case *ast.StringExpr, *ast.NumberExpr:
		default:
			q := rw.temp()
			pnames, pexprs = append(pnames, q), append(pexprs, ag.Key)
			t.Key = ident(q)
		}
		targets[k] = t
	}
	if len(pnames) > 0 {
		out = append(out, local(pnames, pexprs))
	}
	values := make([]string, len(s.Lhs))
	for k := range values {
		values[k] = rw.temp()
	}
	out = append(out, local(values, s.Rhs))
	for k := len(targets) - 1; k >= 0; k-- {
		a := &ast.AssignStmt{Lhs: []ast.Expr{targets[k]}, Rhs: []ast.Expr{ident(values[k])}}
		at(a)
		out = append(out, a)
	}
	do := &ast.DoBlockStmt{Stmts: out}
	at(do)
	return do
}

func (rw *rewriter) temp() string {
	rw.temps++
	return "(assign " + strconv.Itoa(rw.temps) + ")"
}

// loses reports whether gopher-lua loses the value of e when it is
// assigned to an existing local: it follows compileLogicalOpExprAux's
// jumps and finds an operand whose false value is the result (its false
// jump goes to the end) that is compiled into a scratch register and
// tested without being copied to the local.
func (rw *rewriter) loses(e *ast.LogicalOpExpr) bool {
	const end, next = 1, 2
	var aux func(x ast.Expr, then, els int, hasNext bool) bool
	aux = func(x ast.Expr, then, els int, hasNext bool) bool {
		switch v := x.(type) {
		case *ast.FalseExpr, *ast.NilExpr, *ast.TrueExpr, *ast.NumberExpr, *ast.StringExpr, *ast.RelationalOpExpr:
			return false // loaded into the local, or a comparison's boolean
		case *ast.LogicalOpExpr:
			if v.Operator == "and" {
				return aux(v.Lhs, next, els, false) || aux(v.Rhs, then, els, hasNext)
			}
			return aux(v.Lhs, then, next, true) || aux(v.Rhs, then, els, hasNext)
		case *ast.IdentExpr:
			lastAnd := els == end && then != els
			lastOr := then == end && hasNext
			if (lastAnd || lastOr) && rw.isLocal(v.Value) {
				return false // TESTSET into the local
			}
		}
		if !hasNext && then == els {
			return false // the last operand: compiled into the local
		}
		return !hasNext && els == end
	}
	if e.Operator == "and" {
		return aux(e.Lhs, next, end, false) || aux(e.Rhs, end, end, false)
	}
	return aux(e.Lhs, end, next, true) || aux(e.Rhs, end, end, false)
}
