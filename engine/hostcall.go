package engine

import (
	"context"
	"fmt"
	"time"
)

// Host callbacks (admit/read, the floor, host cores) run under a ctx that
// ends with the caller's or after the engine's host_timeout, and a panic in
// one becomes a failure of its call.

// hostCtx derives the ctx of one host callback: a deadline host_timeout
// away, whose timer is made only if the callback waits on it (lazyctx.go).
// The caller defers its cancel.
func (e *Engine) hostCtx(ctx context.Context) *lazyDeadline {
	return e.hostCtxIn(ctx, nil, time.Time{})
}

// hostTimedOut turns the error of a callback whose ctx ran out into a
// host-timeout error (the caller's ctx is still live), or a cancelled one
// (the caller's ctx ended).
func (e *Engine) hostTimedOut(ctx, hctx context.Context, what string, err error) error {
	if hctx.Err() == nil {
		return err
	}
	if ctx.Err() != nil {
		return &Error{Code: CodeCancelled, Message: fmt.Sprintf("cancelled: %s: %v", what, ctx.Err()), Err: ctx.Err()}
	}
	if err == nil {
		err = context.DeadlineExceeded
	}
	return &Error{Code: CodeHostTimeout, Message: fmt.Sprintf("host-timeout: %s did not answer within %v", what, e.hostWait), Err: err}
}

// callCore is the one function of the engine that calls a host core
// (docs/architecture.md, the tool-call pipeline): every entry into a tool
// call that reaches a host tool's core (the quick path, the quick path in a
// turn, the chain's core step, hence host calls, call/tool and harness-opened
// calls) ends here. The call is built where the core receives it, so it is
// not copied twice; a panic becomes the call's failure (CodeCore).
func (i *Instance) callCore(ctx context.Context, core CoreFunc, callID, path string, args any, marks []string) (res any, err error) {
	defer corePanic(path, &err)
	return core(ctx, CoreCall{Instance: i.id, Session: i.rec.Session, CallID: callID, Path: path, Args: args, Marks: marks})
}

// commitKey is the key under which a core's ctx holds its chain (Commit).
type commitKey struct{}

// Commit, called by a host core with the ctx it was given, reports
// whether a successful return of the core (a nil error, and a result the
// journal can record: plain data) will be its call's outcome as it is,
// and if so makes it so: no step of the chain after the core can change a
// success (no result guard, no :post hook, every guard of the chain ends
// in "return invoke(...)", the call is the host's own, not a behavior's,
// and no trace is taken), and once Commit returned true a guard's callback
// cancelled while it waited for the core (its host context ending, the
// memory watchdog) no longer fails the call. A host may then act on the
// core's result before the core returns, as if the call had returned it:
// attune mcp answers its client, and the engine's work after the core
// (the journal entries, the guards' unwinding) runs behind that answer. A
// core may call Commit only once it holds the result it will return;
// false (outside a chain, on the fast path, in a replay): nothing is
// committed.
func Commit(ctx context.Context) bool {
	ch, _ := ctx.Value(commitKey{}).(*chain)
	if ch == nil || ch.committed || !ch.final() {
		return ch != nil && ch.committed
	}
	ch.committed = true
	return true
}

// corePanic, deferred, turns a panicking core into its call's failure.
func corePanic(path string, err *error) {
	if p := recover(); p != nil {
		*err = &Error{Code: CodeCore, Message: fmt.Sprintf("core: host tool %s panicked: %v", path, p)}
	}
}

// timedCore is callCore under the host timeout, the core's ctx made in a
// struct of the caller's that no callback used yet (nil: a new one), its
// deadline host_timeout after at (zero: now); see hostCtxIn. ch is the
// chain whose core this is (Commit).
func (i *Instance) timedCore(ctx context.Context, in *lazyDeadline, at time.Time, te *toolEntry, callID string, args any, marks []string, ch *chain) (any, error) {
	hctx := i.e.hostCtxIn(ctx, in, at)
	if ch != nil {
		hctx.commit.Store(ch)
		defer hctx.commit.Store(nil) // a chain goes back to its pool after its call: none commits it later
	}
	defer hctx.cancel()
	res, err := i.callCore(hctx, te.core, callID, te.path, args, marks)
	if err != nil {
		return nil, i.e.hostTimedOut(ctx, hctx, "host tool "+te.path, err)
	}
	return res, nil
}

// runFloor asks the floor under the host timeout; a floor that panics or
// does not answer in time refuses (the floor fails closed).
func (e *Engine) runFloor(ctx context.Context, c FloorCall) (reason string, refused bool, err error) {
	if e.markFloor { // the default floor runs no host code
		reason, refused = e.floor(ctx, c)
		return reason, refused, nil
	}
	hctx := e.hostCtx(ctx)
	defer hctx.cancel()
	func() {
		defer func() {
			if p := recover(); p != nil {
				reason, refused = fmt.Sprintf("the floor panicked: %v", p), true
				err = &Error{Code: CodeCore, Message: reason}
			}
		}()
		reason, refused = e.floor(hctx, c)
	}()
	if hctx.Err() != nil {
		err = e.hostTimedOut(ctx, hctx, "the floor", nil)
		return err.Error(), true, err
	}
	return reason, refused, err
}

// runRead asks the host's ReadFunc under the host timeout.
func (e *Engine) runRead(ctx context.Context, key string) (v any, err error) {
	if e.read == nil {
		return nil, nil
	}
	hctx := e.hostCtx(ctx)
	defer hctx.cancel()
	func() {
		defer func() {
			if p := recover(); p != nil {
				v, err = nil, fmt.Errorf("the host's read panicked: %v", p)
			}
		}()
		v, err = e.read(hctx, key)
	}()
	if err != nil || hctx.Err() != nil {
		return nil, e.hostTimedOut(ctx, hctx, "admit/read "+key, err)
	}
	return v, nil
}

// ReadCall says which call an admit/read serves; ReadFunc finds it in its
// ctx with ReadCallOf.
type ReadCall struct {
	Instance string
	Session  string
	CallID   string
	Key      string
	// Arg is the read's argument, plain data (admit/read KEY ARG); HasArg
	// is false when none was given.
	Arg    any
	HasArg bool
}

type readKey struct{}

// ReadCallOf returns the call an admit/read serves, from the ctx the
// engine gives a ReadFunc.
func ReadCallOf(ctx context.Context) (ReadCall, bool) {
	c, ok := ctx.Value(readKey{}).(ReadCall)
	return c, ok
}
