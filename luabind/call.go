package luabind

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"
)

// ScriptError is a failure raised by script (or by an engine function on
// its behalf). Msg carries Lua's position prefix ("file.lua:12: ...").
type ScriptError struct {
	Msg string
	// Value is the raised value when it was not a string (error({...})).
	Value lua.LValue
	// Traceback is Lua's stack traceback, when gopher-lua gave one.
	Traceback string
	// Cancelled is set when the time budget (or the memory watchdog)
	// cancelled the callback.
	Cancelled bool
	// Cause is what cancelled it: ErrBudget, ErrMemoryLimit, or a
	// *CancelError wrapping the host context's error.
	Cause error
	// Undefined is set when the script called something that is no
	// function (a misspelled form, a nil global): what it called and the
	// nearest defined name.
	Undefined *UndefinedCall
	// Position is where the error was raised ("file.lua:12"), as the state
	// recorded it when it raised the error (never read back from Msg); ""
	// when unknown.
	Position string
	// Code is the code the function that raised the error gave it
	// (RaiseCoded: "grant", "memory", "stale-revision" ...), "" for an
	// error a script raised itself.
	Code string
	// Inner is the host's error the function that raised the error gave
	// (RaiseCause: a nested call's failure, as the host built it), nil
	// otherwise. Unwrap does not reach it: the failure is the script's.
	Inner error
}

func (e *ScriptError) Error() string { return e.Msg }

// Unwrap lets errors.Is(err, ErrBudget) (or ErrMemory, or
// context.Canceled) see a cancellation.
func (e *ScriptError) Unwrap() error {
	if e.Cancelled {
		if e.Cause != nil {
			return e.Cause
		}
		return ErrBudget
	}
	return nil
}

// Call runs fn in ambient a under the time budget, leaving nret results on
// the stack for the caller to read (Get(-nret)...) and pop. On error the
// stack is as before the call.
func (s *State) Call(a Ambient, fn lua.LValue, nret int, args ...lua.LValue) error {
	_, err := s.CallWithin(a, NoCap, fn, nret, args...)
	return err
}

// CallContext is Call under the host's context as well: when ctx ends
// while fn runs, fn is cancelled as if its budget ran out, and fails with
// a *CancelError. A ctx that has ended already runs nothing.
func (s *State) CallContext(ctx context.Context, a Ambient, fn lua.LValue, nret int, args ...lua.LValue) error {
	_, err := s.CallContextWithin(ctx, NoCap, a, fn, nret, args...)
	return err
}

// CallContextWithin is CallContext with the budget capped at within, as
// CallWithin.
func (s *State) CallContextWithin(ctx context.Context, within time.Duration, a Ambient, fn lua.LValue, nret int, args ...lua.LValue) (time.Duration, error) {
	if ctx == nil || ctx.Done() == nil {
		return s.CallWithin(a, within, fn, nret, args...)
	}
	if err := ctx.Err(); err != nil {
		ce := &CancelError{Cause: err}
		return 0, &ScriptError{Msg: ce.Error(), Cancelled: true, Cause: ce}
	}
	stop := context.AfterFunc(ctx, func() { s.budget.cancelHost(ctx.Err()) })
	defer stop()
	return s.CallWithin(a, within, fn, nret, args...)
}

// CallWithin is Call with the budget capped at within (the time its
// caller in another state has left; NoCap for none). It returns the
// script time the call used, for the caller to Spend.
func (s *State) CallWithin(a Ambient, within time.Duration, fn lua.LValue, nret int, args ...lua.LValue) (time.Duration, error) {
	if s.pending != nil {
		// an argument converted for this call went over the data limits
		// (ToLua): the callback fails without running
		return 0, s.pendingError()
	}
	L := s.L
	old := s.ambient
	s.ambient = a
	if s.budget.enter(within) {
		L.SetContext(s.budget)
	}
	called := s.called
	s.called = L.CallStackDepth() // the index of fn's frame
	err := L.CallByParam(lua.P{Fn: fn, NRet: nret, Protect: true}, args...)
	s.called = called
	outer, used, cause := s.budget.exit()
	cancelled := cause != nil
	if err == nil && (cancelled || s.pending != nil) {
		// past its budget the callback fails, even when the script caught
		// the cancellation (pcall, xpcall) and returned normally; so does
		// one during which a conversion went over the data limits
		if nret > 0 {
			L.Pop(nret)
		}
		err = cause
		if !cancelled {
			err = s.pendingError()
		}
	}
	s.pending = nil // taken, or the callback failed already
	if outer {
		L.RemoveContext()
	}
	s.ambient = old
	if err != nil {
		return used, s.scriptError(err, cause)
	}
	return used, nil
}

// Remaining is what the running callback has left of its budget (NoCap
// when none is running).
func (s *State) Remaining() time.Duration { return s.budget.remaining() }

// Spend charges d of script time (a nested callback in another state) to
// the running callback, whose clock is stopped while it waits.
func (s *State) Spend(d time.Duration) { s.budget.spend(d) }

func (s *State) scriptError(err error, cause error) error {
	cancelled := cause != nil
	var api *lua.ApiError
	if !errors.As(err, &api) {
		return &ScriptError{Msg: err.Error(), Cancelled: cancelled, Cause: cause}
	}
	se := &ScriptError{Traceback: api.StackTrace, Cancelled: cancelled, Cause: cause}
	raised := s.L.TakeRaise()
	switch v := api.Object.(type) {
	case lua.LString:
		se.Msg = string(v)
		if raised != nil && raised.Value == nil && raised.Message == se.Msg {
			se.Position, se.Code, se.Inner = raised.Position(), raised.Code, raised.Cause
		}
		if api.Type == lua.ApiErrorPanic {
			se.Position = strings.TrimSuffix(api.Where, ":")
			se.Msg = panicMessage(se.Msg, se.Position, errors.Is(api.Cause, lua.ErrCallStackOverflow))
		} else if f := s.L.TakeCallFault(); f != nil && f.Message == se.Msg {
			se.Undefined = s.undefined(f)
			se.Msg = se.Undefined.message(f)
		}
	case nil:
		se.Msg = api.Error()
	default:
		se.Value = v
		// No metamethod runs here: the callback is over and its budget with
		// it, so a __tostring could run forever.
		se.Msg = "error object: " + describe(v) + " (give error a string, or a table with a string field message)"
		if t, ok := v.(*lua.LTable); ok {
			if m, ok := t.RawGetString("message").(lua.LString); ok {
				se.Msg = string(m)
			}
		}
		// error adds no position to a value that is not a string; the
		// traceback still has where it was raised (R4.11)
		where := strings.TrimSuffix(api.Where, ":")
		if raised != nil && raised.Value == v {
			where = raised.Position()
		}
		if where != "" {
			se.Msg = where + ": " + se.Msg
			se.Position = where
		}
	}
	if cancelled && !strings.Contains(se.Msg, cause.Error()) {
		se.Msg = fmt.Sprintf("%s (%s)", cause.Error(), se.Msg)
		se.Position = "" // the message no longer begins with it
	}
	return se
}

// ReturnsToCaller reports, inside a library function declared with
// Leaves and before it calls back into the state, that the callback the
// innermost Call of this state runs called it with "return f(...)",
// directly or through further such calls: what the function returns is
// what the callback returns to Call's caller, and no script sees it. The
// choke point found it out before the function ran (sharedFunc).
func (s *State) ReturnsToCaller() bool { return s.tail }

// returnsToCaller is ReturnsToCaller, found out from the call stack.
func (s *State) returnsToCaller() bool {
	at, ok := s.L.TailCalledFrom()
	return ok && at == s.called
}

// HostSince is, inside a function declared with Leaves, when the script's
// clock stopped for it: the time the host work it does began, as a time
// with a monotonic reading. A caller about to start host work can take it
// for the start instead of reading the clock again.
func (s *State) HostSince() time.Time { return s.budget.base.Add(s.budget.suspended) }

// Suspend stops the budget's clock while Go code does host work on the
// script's behalf; Resume restarts it. Funcs declared with Leaves do this
// automatically.
func (s *State) Suspend() { s.budget.suspend() }

// Resume restarts the budget's clock after Suspend.
func (s *State) Resume() { s.budget.resume() }

// RaiseCoded raises, from a library function, an error with code code a
// host may act on: the ScriptError of the callback it fails carries Code
// (and Position) as fields, whatever its text says.
func (s *State) RaiseCoded(code, format string, args ...any) {
	s.L.RaiseCoded(code, format, args...)
}

// RaiseCause is RaiseCoded for a library function that fails because of
// a host error of its own, cause (a nested call's failure): the
// ScriptError of the callback it fails carries it as Inner.
func (s *State) RaiseCause(cause error, code, format string, args ...any) {
	s.L.RaiseCause(cause, code, format, args...)
}

// Where returns "file:line:" of the script frame that called the current
// Go function, or "".
func (s *State) Where() string {
	return s.L.Where(1)
}

// describe describes a raised non-string value without running script.
func describe(v lua.LValue) string {
	switch x := v.(type) {
	case lua.LNumber, lua.LBool:
		return x.String()
	}
	return TypeName(v)
}

// panicMessage turns a Go panic that gopher-lua recovered while running
// script (a runtime error inside the VM or in a Go function the script
// called) into a script error at where ("file:line", the innermost script
// frame when the error was recovered, lua.ApiError.Where). Without one, the
// message says so plainly. overflow: the panic was a full call stack
// (lua.ErrCallStackOverflow, the panic's Cause).
func panicMessage(msg, where string, overflow bool) string {
	if overflow {
		// gopher-lua's call stack is full: Lua's "stack overflow"
		msg = "stack overflow: calls nest too deep (a recursion that never ends?); end the recursion or use a loop"
	} else {
		msg += " (a Go panic inside the Lua runtime)"
	}
	if where == "" {
		return msg
	}
	return where + ": " + msg
}
