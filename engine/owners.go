package engine

import (
	"context"

	lua "github.com/yuin/gopher-lua"

	"attune/luabind"
)

// reducerDecl is one define/reducer (R5.1).
type reducerDecl struct {
	decl
	name      string
	apply     *lua.LFunction
	scopes    []string
	revision  int
	abi       string
	init      any
	protected map[string]bool
	migrate   map[int]*lua.LFunction
}

// methodDecl is one define/method (R5.1, R5.2).
type methodDecl struct {
	decl
	owner  string
	scope  string // "" or the one scope of OWNER@SCOPE
	name   string
	fn     *lua.LFunction
	kind   string // "query" or "command"
	input  schema
	output schema
	grant  string
}

// methodRun is the state of a running method handler.
type methodRun struct {
	decl      *methodDecl
	proposals []any
}

type ownerCache struct{}

func newOwnerCache() *ownerCache { return &ownerCache{} }

func fDefineReducer(s *luabind.State) int { s.L.RaiseError("define/reducer: not yet"); return 0 }
func fDefineMethod(s *luabind.State) int  { s.L.RaiseError("define/method: not yet"); return 0 }
func fCallMethod(s *luabind.State) int    { s.L.RaiseError("call/method: not yet"); return 0 }
func fPropose(s *luabind.State) int       { s.L.RaiseError("propose: not yet"); return 0 }

// sessionRevs returns the revisions of this session's owners.
func (i *Instance) sessionRevs(ctx context.Context) (map[string]int64, error) { return nil, nil }
