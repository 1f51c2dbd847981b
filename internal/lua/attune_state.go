package lua

import (
	"errors"
	"fmt"
	"strings"
)

// attune: what a Go function may ask about how it was called.

// CallStackDepth is the number of frames on the call stack: the frame a
// call pushes next gets this index.
func (ls *LState) CallStackDepth() int { return ls.stack.Sp() }

// TailCalledFrom reports whether the running Go function was called by a
// Lua "return f(...)" (a tail call), and the call-stack index of the Lua
// frame that made it: the Go function's results are that frame's results.
func (ls *LState) TailCalledFrom() (int, bool) {
	cf := ls.currentFrame
	if cf == nil || !cf.Fn.IsG || cf.Parent == nil || cf.Parent.Fn.IsG {
		return 0, false
	}
	// A call puts its results in its caller's registers, above the
	// caller's own return base; a tail call puts them where the caller's
	// results go (OP_TAILCALL).
	if cf.ReturnBase != cf.Parent.ReturnBase {
		return 0, false
	}
	return cf.Parent.Idx, true
}

// NumberValue is n as an LValue, boxed in the state's blocks of numbers as
// the VM boxes its results (no allocation of its own).
func (ls *LState) NumberValue(n LNumber) LValue { return ls.alloc.LNumber2I(n) }

// maxBlockString is the longest string StringValue boxes in a block: a
// block keeps the strings of all its values alive while one lives.
const maxBlockString = 64

// StringValue is s as an LValue: a short string is boxed in one of the
// state's blocks of strings (no allocation of its own), a longer one on its
// own.
func (ls *LState) StringValue(s string) LValue {
	if len(s) == 0 || len(s) > maxBlockString {
		return LString(s)
	}
	return ls.alloc.LString2I(s)
}

// CallFault describes a call that found no function to call: what the
// source called, as it spells it, and what it found there. The VM records
// it when it raises "attempt to call ...", so a host can name the mistake
// (and suggest a name) from fields instead of reading the message.
type CallFault struct {
	Callee string // "refuze", "hook.tol", "repo:branch"
	Kind   string // "global", "local", "upvalue" (of the first name) or "method"
	Type   string // the type of the value called: "nil", "number", ...
	// Where is the position of the call ("file.lua:12:"), Source the
	// chunk's name ("file.lua").
	Where, Source string
	// Message is the error raised, position included: the fault belongs to
	// an error whose value is this string.
	Message string
}

// TakeCallFault returns the last call fault this state raised and forgets
// it; nil when there is none. Match its Message against the error value: a
// fault a script caught with pcall stays until taken.
func (ls *LState) TakeCallFault() *CallFault {
	f := ls.callFault
	ls.callFault = nil
	return f
}

// callError raises the error of calling lv, which is no function, from the
// running Lua frame's current call: Lua 5.1's wording when the compiler
// spelled the callee ("attempt to call global 'refuze' (a nil value)"),
// else gopher-lua's own.
func (ls *LState) callError(lv LValue) {
	cf := ls.currentFrame
	if cf != nil && cf.Fn != nil && !cf.Fn.IsG {
		pc := cf.Pc - 1
		for _, c := range cf.Fn.Proto.DbgCalls {
			if c.Pc != pc || c.Callee == "" {
				continue
			}
			what := c.CalleeKind
			if c.CalleeKind != "method" && strings.Contains(c.Callee, ".") {
				what = "field"
			}
			msg := fmt.Sprintf("attempt to call %s '%s' (a %s value)", what, c.Callee, lv.Type().String())
			where := ls.where(0, true)
			ls.callFault = &CallFault{Callee: c.Callee, Kind: c.CalleeKind, Type: lv.Type().String(),
				Where: where, Source: cf.Fn.Proto.SourceName, Message: fmt.Sprintf("%v %v", where, msg)}
			ls.RaiseError("%s", msg)
		}
	}
	ls.RaiseError("attempt to call a non-function object")
}

// Raise is an error the state raised with a position (RaiseError, ArgError,
// error("...") with a level above 0): Where is the position as the message
// begins with it ("file.lua:12:", "" when no script frame was found),
// Message the whole error string. A host reads where a script failed from
// it instead of from the message.
type Raise struct {
	Where, Message string
	// Code is the code a host gave the error when it raised it
	// (RaiseCoded), "" otherwise.
	Code string
	// Value is the raised value when it is not a string (error({...})),
	// whose message has no position: Where still says where it was raised.
	Value LValue
	// Cause is the host's error a host function raised the error for
	// (RaiseCause), nil otherwise.
	Cause error
}

// Position is Where without its trailing colon ("file.lua:12").
func (r *Raise) Position() string { return strings.TrimSuffix(r.Where, ":") }

// TakeRaise returns the last error this state raised with a position and
// forgets it; nil when there is none. Match its Message against the error
// value: an error a script caught with pcall stays until taken.
func (ls *LState) TakeRaise() *Raise {
	r := ls.raised
	ls.raised = nil
	return r
}

// RaiseCoded is RaiseError for a host function whose failure has a code a
// host may act on ("grant", "memory"): the Raise it records carries it.
func (ls *LState) RaiseCoded(code, format string, args ...interface{}) {
	ls.raiseCode = code
	ls.raiseError(1, format, args...)
}

// RaiseCause is RaiseCoded for a host function that fails because of a
// host error of its own (a nested call that failed): the Raise it records
// carries cause as data, beside the code.
func (ls *LState) RaiseCause(cause error, code, format string, args ...interface{}) {
	message := format
	if len(args) > 0 {
		message = fmt.Sprintf(format, args...)
	}
	where := ls.where(0, true)
	message = fmt.Sprintf("%v %v", where, message)
	ls.raised = &Raise{Where: where, Message: message, Code: code, Cause: cause}
	ls.raiseError(0, "%s", message) // level 0: the position is in message already
}

// recoveredWhere is "file:line:" of the innermost script frame that ran
// an instruction, "" when there is none: where an error being recovered
// happened (ApiError.Where), taken where its traceback is.
func (ls *LState) recoveredWhere() string {
	for level := 0; ; level++ {
		dbg, ok := ls.GetStack(level)
		if !ok {
			return ""
		}
		cf := dbg.frame
		proto := cf.Fn.Proto
		if cf.Fn.IsG || proto == nil || cf.Pc < 1 || cf.Pc > len(proto.DbgSourcePositions) {
			continue
		}
		return fmt.Sprintf("%v:%v:", proto.SourceName, proto.DbgSourcePositions[cf.Pc-1])
	}
}

// ErrCallStackOverflow is the panic of a call that found the call stack
// full (attune: a value, where upstream panics with a string); PCall
// recovers it as an ApiErrorPanic whose Cause it is.
var ErrCallStackOverflow = errors.New("lua callstack overflow")
