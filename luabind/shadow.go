package luabind

import (
	"bytes"
	"fmt"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// ShadowedCall finds handlers whose parameter named `call` hides the
// engine's call namespace: inside such a function, call.method and
// call.tool read fields of the parameter (a call record has neither), not
// the call/method and call/tool functions. It returns one warning per use,
// "FILE:LINE: warning: ...", in source order. src is Lua (lowered Lua for a
// .scm program: the lines are the source's). A program that does not parse
// gives no warnings; loading it reports the syntax error.
func ShadowedCall(file string, src []byte) []string {
	if checkSize(file, src) != nil {
		return nil // loading it reports the compile limit
	}
	chunk, err := parse.Parse(bytes.NewReader(src), file)
	if err != nil || checkNesting(file, chunk) != nil {
		return nil
	}
	w := &shadowWalker{file: file}
	w.stmts(chunk, 0)
	return w.out
}

type shadowWalker struct {
	file string
	out  []string
}

// shadow is the line of the innermost enclosing function whose parameter
// named call is in scope (0: none).
func (w *shadowWalker) stmts(list []ast.Stmt, shadow int) {
	for _, s := range list {
		w.stmt(s, shadow)
	}
}

func (w *shadowWalker) stmt(s ast.Stmt, shadow int) {
	switch x := s.(type) {
	case *ast.AssignStmt:
		w.exprs(x.Lhs, shadow)
		w.exprs(x.Rhs, shadow)
	case *ast.LocalAssignStmt:
		w.exprs(x.Exprs, shadow)
	case *ast.FuncCallStmt:
		w.expr(x.Expr, shadow)
	case *ast.DoBlockStmt:
		w.stmts(x.Stmts, shadow)
	case *ast.WhileStmt:
		w.expr(x.Condition, shadow)
		w.stmts(x.Stmts, shadow)
	case *ast.RepeatStmt:
		w.stmts(x.Stmts, shadow)
		w.expr(x.Condition, shadow)
	case *ast.IfStmt:
		w.expr(x.Condition, shadow)
		w.stmts(x.Then, shadow)
		w.stmts(x.Else, shadow)
	case *ast.NumberForStmt:
		w.expr(x.Init, shadow)
		w.expr(x.Limit, shadow)
		w.expr(x.Step, shadow)
		w.stmts(x.Stmts, shadow)
	case *ast.GenericForStmt:
		w.exprs(x.Exprs, shadow)
		w.stmts(x.Stmts, shadow)
	case *ast.FuncDefStmt:
		w.expr(x.Func, shadow)
	case *ast.ReturnStmt:
		w.exprs(x.Exprs, shadow)
	}
}

func (w *shadowWalker) exprs(list []ast.Expr, shadow int) {
	for _, e := range list {
		w.expr(e, shadow)
	}
}

func (w *shadowWalker) expr(e ast.Expr, shadow int) {
	switch x := e.(type) {
	case *ast.AttrGetExpr:
		if id, ok := x.Object.(*ast.IdentExpr); ok && id.Value == "call" && shadow > 0 {
			if k, ok := x.Key.(*ast.StringExpr); ok && (k.Value == "method" || k.Value == "tool") {
				w.out = append(w.out, fmt.Sprintf("%s:%d: warning: call.%s reads a field of the parameter `call` of the function at line %d, not the call/%s function: the parameter hides the call namespace; name the record parameter c, as in function(c, invoke)",
					w.file, x.Line(), k.Value, shadow, k.Value))
			}
		}
		w.expr(x.Object, shadow)
		w.expr(x.Key, shadow)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			w.expr(f.Key, shadow)
			w.expr(f.Value, shadow)
		}
	case *ast.FuncCallExpr:
		w.expr(x.Func, shadow)
		w.expr(x.Receiver, shadow)
		w.exprs(x.Args, shadow)
	case *ast.LogicalOpExpr:
		w.expr(x.Lhs, shadow)
		w.expr(x.Rhs, shadow)
	case *ast.RelationalOpExpr:
		w.expr(x.Lhs, shadow)
		w.expr(x.Rhs, shadow)
	case *ast.StringConcatOpExpr:
		w.expr(x.Lhs, shadow)
		w.expr(x.Rhs, shadow)
	case *ast.ArithmeticOpExpr:
		w.expr(x.Lhs, shadow)
		w.expr(x.Rhs, shadow)
	case *ast.UnaryMinusOpExpr:
		w.expr(x.Expr, shadow)
	case *ast.UnaryNotOpExpr:
		w.expr(x.Expr, shadow)
	case *ast.UnaryLenOpExpr:
		w.expr(x.Expr, shadow)
	case *ast.FunctionExpr:
		inner := shadow
		if x.ParList != nil {
			for _, name := range x.ParList.Names {
				if name == "call" {
					inner = x.Line()
				}
			}
		}
		w.stmts(x.Stmts, inner)
	}
}
