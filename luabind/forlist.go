package luabind

import (
	"github.com/yuin/gopher-lua/ast"
)

// A miscompile in gopher-lua v1.1.2, and its work-around.
//
// compileGenericForStmt registers the loop's three hidden locals
// ("(for generator)", "(for state)", "(for control)") before it compiles
// the expression list into those same registers. A function call compiled
// into the generator's register then sees a register top above its own
// result and reports that it used no register (compileFuncCallExpr's
// `context.RegTop() > funcreg+2+varargopt` case), so the next operand of
// the same expression is compiled into the same register and overwrites
// the call's result. `for l in (f(x) .. s):gmatch(p) do ... end` thus
// concatenates the wrong values and ends in a Go nil-pointer panic inside
// the VM; with the string in a local first, it works.
//
// hoistForLists rewrites such a loop before code generation into what
// Lua's manual says a generic for means:
//
//	do
//	  local (for list 1), (for list 2), (for list 3) = EXPLIST
//	  for NAMES in (for list 1), (for list 2), (for list 3) do BODY end
//	end
//
// A local statement compiles its expressions before it registers its
// names, so the calls are compiled correctly, and the loop's own list is
// three locals, which no register top confuses. The hidden names cannot be
// written in Lua source, so they shadow nothing. Loops whose list needs no
// help (`pairs(t)`, `ipairs(t)`, `next, t`) are left as they are.

// hoistForLists applies the rewrite to every generic for in a chunk,
// nested functions included.
func hoistForLists(stmts []ast.Stmt) []ast.Stmt {
	w := forWalker{}
	return w.stmts(stmts)
}

type forWalker struct{}

func (w forWalker) stmts(list []ast.Stmt) []ast.Stmt {
	for k, s := range list {
		list[k] = w.stmt(s)
	}
	return list
}

func (w forWalker) stmt(s ast.Stmt) ast.Stmt {
	switch x := s.(type) {
	case *ast.AssignStmt:
		w.exprs(x.Lhs)
		w.exprs(x.Rhs)
	case *ast.LocalAssignStmt:
		w.exprs(x.Exprs)
	case *ast.FuncCallStmt:
		w.expr(x.Expr)
	case *ast.DoBlockStmt:
		w.stmts(x.Stmts)
	case *ast.WhileStmt:
		w.expr(x.Condition)
		w.stmts(x.Stmts)
	case *ast.RepeatStmt:
		w.stmts(x.Stmts)
		w.expr(x.Condition)
	case *ast.IfStmt:
		w.expr(x.Condition)
		w.stmts(x.Then)
		w.stmts(x.Else)
	case *ast.NumberForStmt:
		w.expr(x.Init)
		w.expr(x.Limit)
		w.expr(x.Step)
		w.stmts(x.Stmts)
	case *ast.GenericForStmt:
		w.exprs(x.Exprs)
		w.stmts(x.Stmts)
		if needsHoist(x.Exprs) {
			return hoist(x)
		}
	case *ast.FuncDefStmt:
		w.expr(x.Func)
	case *ast.ReturnStmt:
		w.exprs(x.Exprs)
	}
	return s
}

func (w forWalker) exprs(list []ast.Expr) {
	for _, e := range list {
		w.expr(e)
	}
}

// expr walks an expression for the function bodies inside it.
func (w forWalker) expr(e ast.Expr) {
	switch x := e.(type) {
	case *ast.AttrGetExpr:
		w.expr(x.Object)
		w.expr(x.Key)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			w.expr(f.Key)
			w.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		w.expr(x.Func)
		w.expr(x.Receiver)
		w.exprs(x.Args)
	case *ast.LogicalOpExpr:
		w.expr(x.Lhs)
		w.expr(x.Rhs)
	case *ast.RelationalOpExpr:
		w.expr(x.Lhs)
		w.expr(x.Rhs)
	case *ast.StringConcatOpExpr:
		w.expr(x.Lhs)
		w.expr(x.Rhs)
	case *ast.ArithmeticOpExpr:
		w.expr(x.Lhs)
		w.expr(x.Rhs)
	case *ast.UnaryMinusOpExpr:
		w.expr(x.Expr)
	case *ast.UnaryNotOpExpr:
		w.expr(x.Expr)
	case *ast.UnaryLenOpExpr:
		w.expr(x.Expr)
	case *ast.FunctionExpr:
		x.Stmts = w.stmts(x.Stmts)
	}
}

// needsHoist reports whether a loop's list calls a function anywhere but
// as the outermost node of one of its expressions (the shape the compiler
// gets wrong).
func needsHoist(list []ast.Expr) bool {
	for _, e := range list {
		if c, ok := e.(*ast.FuncCallExpr); ok {
			if hasCall(c.Func) || hasCall(c.Receiver) || anyCall(c.Args) {
				return true
			}
			continue
		}
		if hasCall(e) {
			return true
		}
	}
	return false
}

func anyCall(list []ast.Expr) bool {
	for _, e := range list {
		if hasCall(e) {
			return true
		}
	}
	return false
}

// hasCall reports whether evaluating e calls a function (function bodies
// inside e are not evaluated, so they do not count).
func hasCall(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.FuncCallExpr:
		return true
	case *ast.AttrGetExpr:
		return hasCall(x.Object) || hasCall(x.Key)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			if (f.Key != nil && hasCall(f.Key)) || hasCall(f.Value) {
				return true
			}
		}
	case *ast.LogicalOpExpr:
		return hasCall(x.Lhs) || hasCall(x.Rhs)
	case *ast.RelationalOpExpr:
		return hasCall(x.Lhs) || hasCall(x.Rhs)
	case *ast.StringConcatOpExpr:
		return hasCall(x.Lhs) || hasCall(x.Rhs)
	case *ast.ArithmeticOpExpr:
		return hasCall(x.Lhs) || hasCall(x.Rhs)
	case *ast.UnaryMinusOpExpr:
		return hasCall(x.Expr)
	case *ast.UnaryNotOpExpr:
		return hasCall(x.Expr)
	case *ast.UnaryLenOpExpr:
		return hasCall(x.Expr)
	}
	return false
}

var forListNames = []string{"(for list 1)", "(for list 2)", "(for list 3)"}

func hoist(f *ast.GenericForStmt) ast.Stmt {
	line, last := f.Line(), f.LastLine()
	local := &ast.LocalAssignStmt{Names: append([]string(nil), forListNames...), Exprs: f.Exprs}
	local.SetLine(line)
	local.SetLastLine(line)
	refs := make([]ast.Expr, len(forListNames))
	for k, name := range forListNames {
		id := &ast.IdentExpr{Value: name}
		id.SetLine(line)
		id.SetLastLine(line)
		refs[k] = id
	}
	f.Exprs = refs
	block := &ast.DoBlockStmt{Stmts: []ast.Stmt{local, f}}
	block.SetLine(line)
	block.SetLastLine(last)
	return block
}
