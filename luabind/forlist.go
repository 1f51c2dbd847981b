package luabind

import (
	"github.com/attune-dev/attune/internal/lua/ast"
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
	walkChunk(forWalker{}, stmts)
	return stmts
}

// forWalker replaces each generic for that needs it, after its body.
type forWalker struct{ noVisit }

func (forWalker) replace(s ast.Stmt) ast.Stmt {
	if x, ok := s.(*ast.GenericForStmt); ok && needsHoist(x.Exprs) {
		return hoist(x)
	}
	return nil
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
