package luabind

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	lua "github.com/attune-dev/attune/internal/lua"
	"github.com/attune-dev/attune/internal/lua/parse"
)

// SyntaxError is a compile failure with its position in the source.
type SyntaxError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	if e.Line <= 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	if e.Col <= 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Compile parses and compiles Lua source once. The proto is read-only and
// may be instantiated in any number of states (NewFunctionFromProto). Its
// slices are trimmed to their length: gopher-lua's compiler leaves them at
// a capacity of 1024, which a cached proto would keep alive.
func Compile(file string, src []byte) (*lua.FunctionProto, error) {
	return compile(file, src, nil)
}

// compile is Compile under the compile limits (limits.go); done, when set,
// stops the parser (the time budget of the callback that compiles).
func compile(file string, src []byte, done <-chan struct{}) (*lua.FunctionProto, error) {
	if err := checkSize(file, src); err != nil {
		return nil, err
	}
	chunk, err := parse.Parse(&budgetReader{src: src, done: done}, file)
	if err != nil {
		var pe *parse.Error
		if errors.As(err, &pe) {
			msg := strings.TrimSpace(pe.Message)
			if pe.Token != "" {
				msg = fmt.Sprintf("%s near '%s'", msg, pe.Token)
			}
			line := pe.Pos.Line
			if line == parse.EOF {
				line = lastLine(src)
				msg += " at the end of the file"
			}
			return nil, &SyntaxError{File: file, Line: line, Col: pe.Pos.Column, Msg: msg}
		}
		return nil, &SyntaxError{File: file, Msg: strings.TrimSpace(err.Error())}
	}
	if err := checkNesting(file, chunk); err != nil { // before any pass walks the tree
		return nil, err
	}
	proto, err := lua.Compile(chunk, file)
	if err != nil {
		var ce *lua.CompileError
		if errors.As(err, &ce) {
			// a function over one of Lua's limits (locals, registers,
			// constants, jumps): the line is where the function starts
			msg := strings.TrimSpace(ce.Message)
			if ce.Limit {
				where := "the function that starts here"
				if ce.Line <= 0 {
					where = "a function of this file"
				}
				msg += "; " + where + " is too big for Lua: split it into smaller functions"
			}
			return nil, &SyntaxError{File: file, Line: max(ce.Line, 0), Msg: msg}
		}
		return nil, &SyntaxError{File: file, Msg: strings.TrimSpace(err.Error())}
	}
	trim(proto)
	return proto, nil
}

// lastLine is the number of the last line of src, where the parser
// reached the end of the file.
func lastLine(src []byte) int {
	n := bytes.Count(src, []byte("\n")) + 1
	if len(src) > 0 && src[len(src)-1] == '\n' {
		n--
	}
	return max(n, 1)
}

func trim(p *lua.FunctionProto) {
	p.Code = append([]uint32(nil), p.Code...)
	p.Constants = append([]lua.LValue(nil), p.Constants...)
	p.DbgSourcePositions = append([]int(nil), p.DbgSourcePositions...)
	p.DbgLocals = append([]*lua.DbgLocalInfo(nil), p.DbgLocals...)
	p.DbgCalls = append([]lua.DbgCall(nil), p.DbgCalls...)
	p.DbgUpvalues = append([]string(nil), p.DbgUpvalues...)
	p.FunctionPrototypes = append([]*lua.FunctionProto(nil), p.FunctionPrototypes...)
	for _, c := range p.FunctionPrototypes {
		trim(c)
	}
}

// Load instantiates a compiled proto as a function of this state.
func (s *State) Load(p *lua.FunctionProto) *lua.LFunction {
	return s.L.NewFunctionFromProto(p)
}
