package luabind

import "github.com/attune-dev/attune/internal/lua/ast"

// One walk over gopher-lua's syntax tree, for every pass that reads or
// rewrites a chunk before it is compiled: the nesting limit (limits.go),
// the shadowed-call warning (shadow.go) and the undefined-call check. The walk knows
// the shape of the tree; a visitor says what a pass does at a node.
//
// Children are visited in the order Lua evaluates them, with repeat's
// condition after its body. Function bodies are walked where they stand.

// visitor is one pass over a syntax tree. Embed noVisit for the hooks a
// pass does not need.
type visitor interface {
	// enter is called before a node's children, with its depth (a chunk's
	// statements are at 0, each node's children one deeper); false skips
	// the node's children.
	enter(n ast.PositionHolder, depth int) bool
	// replace is called after a statement's children: a statement to put
	// in its place, or nil to keep it.
	replace(s ast.Stmt) ast.Stmt
	// openFunc and closeFunc bracket a function's body: params are its
	// parameter names (with self for a method, arg for a vararg one).
	openFunc(f *ast.FunctionExpr, params []string)
	closeFunc()
	// openBlock and closeBlock bracket a block: names are the locals it
	// declares before its first statement (loop variables).
	openBlock(names []string)
	closeBlock()
	// declare is called after a local statement's expressions: its names
	// are in scope from the next statement on.
	declare(names []string)
}

// noVisit is a visitor that does nothing.
type noVisit struct{}

func (noVisit) enter(ast.PositionHolder, int) bool   { return true }
func (noVisit) replace(ast.Stmt) ast.Stmt            { return nil }
func (noVisit) openFunc(*ast.FunctionExpr, []string) {}
func (noVisit) closeFunc()                           {}
func (noVisit) openBlock([]string)                   {}
func (noVisit) closeBlock()                          {}
func (noVisit) declare([]string)                     {}

// walkChunk walks a chunk's statements with v, replacing statements in
// place where v says so.
func walkChunk(v visitor, chunk []ast.Stmt) {
	w := walker{v}
	w.stmts(chunk, 0)
}

type walker struct{ v visitor }

func (w walker) stmts(list []ast.Stmt, d int) {
	for k, s := range list {
		if r := w.stmt(s, d); r != nil {
			list[k] = r
		}
	}
}

func (w walker) block(list []ast.Stmt, d int, names []string) {
	w.v.openBlock(names)
	w.stmts(list, d)
	w.v.closeBlock()
}

func (w walker) exprs(list []ast.Expr, d int) {
	for _, e := range list {
		w.expr(e, d)
	}
}

func (w walker) stmt(s ast.Stmt, d int) ast.Stmt {
	if s == nil || !w.v.enter(s, d) {
		return nil
	}
	d++
	switch x := s.(type) {
	case *ast.AssignStmt:
		w.exprs(x.Lhs, d)
		w.exprs(x.Rhs, d)
	case *ast.LocalAssignStmt:
		w.exprs(x.Exprs, d)
		w.v.declare(x.Names)
	case *ast.FuncCallStmt:
		w.expr(x.Expr, d)
	case *ast.DoBlockStmt:
		w.block(x.Stmts, d, nil)
	case *ast.WhileStmt:
		w.expr(x.Condition, d)
		w.block(x.Stmts, d, nil)
	case *ast.RepeatStmt:
		// the condition sees the body's locals
		w.v.openBlock(nil)
		w.stmts(x.Stmts, d)
		w.expr(x.Condition, d)
		w.v.closeBlock()
	case *ast.IfStmt:
		w.expr(x.Condition, d)
		w.block(x.Then, d, nil)
		w.block(x.Else, d, nil)
	case *ast.NumberForStmt:
		w.expr(x.Init, d)
		w.expr(x.Limit, d)
		w.expr(x.Step, d)
		w.block(x.Stmts, d, []string{x.Name})
	case *ast.GenericForStmt:
		w.exprs(x.Exprs, d)
		w.block(x.Stmts, d, append([]string(nil), x.Names...))
	case *ast.FuncDefStmt:
		// the name (a.b.c or a.b:c) holds no function body and no
		// assignment: only the function is walked
		w.function(x.Func, d, x.Name != nil && x.Name.Func == nil)
	case *ast.ReturnStmt:
		w.exprs(x.Exprs, d)
	}
	return w.v.replace(s)
}

// function walks a function expression; method adds the parameter self.
func (w walker) function(f *ast.FunctionExpr, d int, method bool) {
	if f == nil || !w.v.enter(f, d) {
		return
	}
	var params []string
	if method {
		params = append(params, "self")
	}
	if f.ParList != nil {
		params = append(params, f.ParList.Names...)
		if f.ParList.HasVargs {
			params = append(params, "arg")
		}
	}
	w.v.openFunc(f, params)
	w.stmts(f.Stmts, d+1)
	w.v.closeFunc()
}

func (w walker) expr(e ast.Expr, d int) {
	if e == nil {
		return
	}
	if f, ok := e.(*ast.FunctionExpr); ok {
		w.function(f, d, false)
		return
	}
	if !w.v.enter(e, d) {
		return
	}
	d++
	switch x := e.(type) {
	case *ast.AttrGetExpr:
		w.expr(x.Object, d)
		w.expr(x.Key, d)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			w.expr(f.Key, d)
			w.expr(f.Value, d)
		}
	case *ast.FuncCallExpr:
		w.expr(x.Func, d)
		w.expr(x.Receiver, d)
		w.exprs(x.Args, d)
	case *ast.LogicalOpExpr:
		w.expr(x.Lhs, d)
		w.expr(x.Rhs, d)
	case *ast.RelationalOpExpr:
		w.expr(x.Lhs, d)
		w.expr(x.Rhs, d)
	case *ast.StringConcatOpExpr:
		w.expr(x.Lhs, d)
		w.expr(x.Rhs, d)
	case *ast.ArithmeticOpExpr:
		w.expr(x.Lhs, d)
		w.expr(x.Rhs, d)
	case *ast.UnaryMinusOpExpr:
		w.expr(x.Expr, d)
	case *ast.UnaryNotOpExpr:
		w.expr(x.Expr, d)
	case *ast.UnaryLenOpExpr:
		w.expr(x.Expr, d)
	}
}
