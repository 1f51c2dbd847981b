package luabind

import (
	"bytes"
	"fmt"

	"github.com/attune-dev/attune/internal/lua/ast"
	"github.com/attune-dev/attune/internal/lua/parse"
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
	walkChunk(w, chunk)
	return w.out
}

// shadowWalker keeps, for each function it is in, the line of the
// innermost enclosing function whose parameter named call is in scope (0:
// none).
type shadowWalker struct {
	noVisit
	file   string
	out    []string
	shadow []int
}

func (w *shadowWalker) current() int {
	if n := len(w.shadow); n > 0 {
		return w.shadow[n-1]
	}
	return 0
}

func (w *shadowWalker) openFunc(f *ast.FunctionExpr, _ []string) {
	inner := w.current()
	if f.ParList != nil {
		for _, name := range f.ParList.Names {
			if name == "call" {
				inner = f.Line()
			}
		}
	}
	w.shadow = append(w.shadow, inner)
}

func (w *shadowWalker) closeFunc() { w.shadow = w.shadow[:len(w.shadow)-1] }

func (w *shadowWalker) enter(n ast.PositionHolder, _ int) bool {
	x, ok := n.(*ast.AttrGetExpr)
	if !ok {
		return true
	}
	if id, ok := x.Object.(*ast.IdentExpr); ok && id.Value == "call" {
		if k, ok := x.Key.(*ast.StringExpr); ok && (k.Value == "method" || k.Value == "tool") {
			if shadow := w.current(); shadow > 0 {
				w.out = append(w.out, fmt.Sprintf("%s:%d: warning: call.%s reads a field of the parameter `call` of the function at line %d, not the call/%s function: the parameter hides the call namespace; name the record parameter c, as in function(c, invoke)",
					w.file, x.Line(), k.Value, shadow, k.Value))
			}
		}
	}
	return true
}
