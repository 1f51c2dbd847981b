package scheme

import (
	"errors"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// checkLua makes sure gopher-lua accepts the lowered program, so that a
// program too big for Lua's limits (200 locals or registers in a function)
// fails here, with a position, rather than when the engine loads it.
func checkLua(file, out string) error {
	_, err := compileLua(file, out)
	return err
}

func compileLua(file, out string) (proto *lua.FunctionProto, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Pos: Pos{File: file, Line: 1, Col: 1}, Form: "lua", Msg: fmt.Sprint("gopher-lua failed: ", r), luaSyntax: true}
		}
	}()
	chunk, err := parse.Parse(strings.NewReader(out), file)
	if err != nil {
		var pe *parse.Error
		line := 1
		if errors.As(err, &pe) && pe.Pos.Line > 0 {
			line = pe.Pos.Line
		}
		return nil, &Error{Pos: Pos{File: file, Line: line, Col: 1}, Form: "lua",
			Msg: "the lowered Lua does not parse (a translator bug; please report it): " + strings.TrimSpace(err.Error()), luaSyntax: true}
	}
	proto, err = lua.Compile(chunk, file)
	if err != nil {
		var ce *lua.CompileError
		line := 1
		msg := err.Error()
		if errors.As(err, &ce) {
			line, msg = ce.Line, ce.Message
		}
		if line < 1 {
			line = 1
		}
		return nil, &Error{Pos: Pos{File: file, Line: line, Col: 1}, Form: "lua",
			Msg: msg + "; the function that starts here is too big for Lua: split it into smaller functions"}
	}
	return proto, nil
}
