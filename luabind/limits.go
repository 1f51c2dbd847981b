package luabind

import (
	"errors"
	"fmt"
	"io"

	lua "github.com/attune-dev/attune/internal/lua"
	"github.com/attune-dev/attune/internal/lua/ast"
)

// Compile limits. gopher-lua's parser keeps its own stack, but its compiler
// walks the syntax tree recursively: `not not ... 1`, `{{{...}}}`,
// `f()()()...`, `x.a.a.a...` or a long `..` chain two million deep end the
// process with a Go stack overflow, and a big source takes seconds to
// parse. So every source is checked before it is parsed (its size), while it
// is parsed (the time budget, when a callback is compiling it) and before it
// is compiled (the nesting depth of its syntax tree).
const (
	// MaxSource is the size of the largest program, or chunk given to load.
	MaxSource = 1 << 20
	// MaxNesting is how deeply expressions, statements and blocks may nest.
	MaxNesting = 200
)

// ErrCompileLimit is what a source over a compile limit fails with
// (errors.Is on the SyntaxError).
var ErrCompileLimit = errors.New("compile limit")

// limitError is a SyntaxError for a compile limit.
type limitError struct{ SyntaxError }

func (e *limitError) Unwrap() error { return ErrCompileLimit }

func checkSize(file string, src []byte) error {
	if len(src) > MaxSource {
		return &limitError{SyntaxError{File: file, Msg: fmt.Sprintf(
			"compile limit: the source is %d bytes, over the limit of %d; split it into smaller programs", len(src), MaxSource)}}
	}
	return nil
}

// budgetReader stops the parser when done is closed (the callback that
// compiles ran out of time).
type budgetReader struct {
	src  []byte
	done <-chan struct{}
}

func (r *budgetReader) Read(p []byte) (int, error) {
	if r.done != nil {
		select {
		case <-r.done:
			return 0, io.EOF // the source ends here; the caller reports the budget
		default:
		}
	}
	if len(r.src) == 0 {
		return 0, io.EOF
	}
	if len(p) > 4096 {
		p = p[:4096]
	}
	n := copy(p, r.src)
	r.src = r.src[n:]
	return n, nil
}

// checkNesting refuses a syntax tree nested deeper than MaxNesting. It
// recurses at most MaxNesting deep itself.
func checkNesting(file string, chunk []ast.Stmt) error {
	w := &nestWalker{}
	walkChunk(w, chunk)
	if w.at == nil {
		return nil
	}
	return &limitError{SyntaxError{File: file, Line: w.at.Line(), Msg: fmt.Sprintf(
		"compile limit: expressions or blocks nest deeper than %d here; split the expression or use local variables", MaxNesting)}}
}

// nestWalker finds the first node deeper than MaxNesting and walks no
// deeper than that.
type nestWalker struct {
	noVisit
	at ast.PositionHolder
}

func (w *nestWalker) enter(n ast.PositionHolder, d int) bool {
	if w.at != nil {
		return false
	}
	if d > MaxNesting {
		w.at = n
		return false
	}
	return true
}

// loadChunk is the sandbox's load and loadstring: Lua text only, under the
// compile limits and the running callback's budget. Like Lua's, it returns
// the function, or nil and the message.
func loadChunk(L *lua.LState) int {
	src, ok := L.Get(1).(lua.LString)
	if !ok {
		L.RaiseError("load takes a string of Lua text here")
	}
	if len(src) > 0 && src[0] == 0x1b {
		L.RaiseError("binary chunks are not allowed")
	}
	name := L.OptString(2, "<string>")
	var done <-chan struct{}
	if ctx := L.Context(); ctx != nil {
		done = ctx.Done()
	}
	proto, err := compile(name, []byte(src), done)
	if err != nil {
		if done != nil {
			select {
			case <-done:
				// out of time: the callback fails, whatever the script does
				L.RaiseError("%s", L.Context().Err())
			default:
			}
		}
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(L.NewFunctionFromProto(proto))
	return 1
}
