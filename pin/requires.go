package pin

import (
	"bytes"
	"strings"

	"github.com/attune-dev/attune/internal/lua/ast"
	"github.com/attune-dev/attune/internal/lua/parse"

	"github.com/attune-dev/attune/scheme"
)

// A pack command belongs to the programs it requires: a command file that
// says (require "goal") at its top level (require("goal") in Lua) is
// offered only to bots that select goal, since its method calls need the
// program's owners. A command file that requires nothing is offered to
// every bot. The requires are read from the source without running it.

// commandRequires lists the programs a command file requires at its top
// level. A file that does not read yields none: loading it reports why.
func commandRequires(file string, src []byte) []string {
	var out []string
	if strings.HasSuffix(file, ".scm") {
		forms, err := scheme.Read(file, src)
		if err != nil {
			return nil
		}
		for _, f := range forms {
			if f.Head() == "require" && len(f.Items) == 2 && f.Items[1].Kind == scheme.String {
				out = append(out, f.Items[1].Text)
			}
		}
		return out
	}
	chunk, err := parse.Parse(bytes.NewReader(src), file)
	if err != nil {
		return nil
	}
	for _, st := range chunk {
		cs, ok := st.(*ast.FuncCallStmt)
		if !ok {
			continue
		}
		call, ok := cs.Expr.(*ast.FuncCallExpr)
		if !ok || len(call.Args) != 1 {
			continue
		}
		if id, ok := call.Func.(*ast.IdentExpr); ok && id.Value == "require" {
			if s, ok := call.Args[0].(*ast.StringExpr); ok {
				out = append(out, s.Value)
			}
		}
	}
	return out
}

// offered reports whether a command that requires needs is offered to a
// selection.
func offered(needs, selected []string) bool {
	for _, n := range needs {
		found := false
		for _, s := range selected {
			if s == n {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
