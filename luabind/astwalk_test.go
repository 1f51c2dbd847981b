package luabind

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/attune-dev/attune/internal/lua/ast"
	"github.com/attune-dev/attune/internal/lua/parse"
)

// kindVisitor records the kinds of node the walk enters and the depth of
// each function body's scope.
type kindVisitor struct {
	noVisit
	kinds map[string]bool
	funcs []string
	open  int
}

func (v *kindVisitor) enter(n ast.PositionHolder, _ int) bool {
	v.kinds[strings.TrimPrefix(fmt.Sprintf("%T", n), "*ast.")] = true
	return true
}

func (v *kindVisitor) openFunc(_ *ast.FunctionExpr, params []string) {
	v.funcs = append(v.funcs, strings.Join(params, ","))
	v.open++
}

func (v *kindVisitor) closeFunc() { v.open-- }

// One walk serves every pass (nesting limit, shadowed call, generic-for
// and assignment rewrites): it reaches every kind of statement and
// expression, function bodies included, with each function's parameters.
func TestWalkReachesEveryNode(t *testing.T) {
	src := `
local a, b = 1, "s"
a, b = b, a
t = {x = -a, [1] = not b, #b}
f(a .. b, a + 1, a < 2, a and b)
do local c = 1 end
while a do break end
repeat local d = 1 until d
if a then elseif b then else end
for i = 1, 2, 1 do end
for k, v in pairs(t) do end
function t.m(p, ...) return p end
function t:n(q) return self end
local g = function(call) return call.tool end
return nil, true, false, ...
`
	chunk, err := parse.Parse(strings.NewReader(src), "all.lua")
	if err != nil {
		t.Fatal(err)
	}
	v := &kindVisitor{kinds: map[string]bool{}}
	walkChunk(v, chunk)
	for _, k := range []string{"LocalAssignStmt", "AssignStmt", "FuncCallStmt", "DoBlockStmt", "WhileStmt", "BreakStmt",
		"RepeatStmt", "IfStmt", "NumberForStmt", "GenericForStmt", "FuncDefStmt", "ReturnStmt",
		"NumberExpr", "StringExpr", "IdentExpr", "TableExpr", "UnaryMinusOpExpr", "UnaryNotOpExpr", "UnaryLenOpExpr",
		"FuncCallExpr", "StringConcatOpExpr", "ArithmeticOpExpr", "RelationalOpExpr", "LogicalOpExpr",
		"FunctionExpr", "AttrGetExpr", "NilExpr", "TrueExpr", "FalseExpr", "Comma3Expr"} {
		if !v.kinds[k] {
			t.Errorf("the walk never entered a %s", k)
		}
	}
	if want := []string{"p,arg", "self,q", "call"}; !slices.Equal(v.funcs, want) || v.open != 0 {
		t.Errorf("functions opened with %q (%d left open), want %q", v.funcs, v.open, want)
	}
}
