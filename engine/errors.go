package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/attune-dev/attune/luabind"
)

// Code names the kind of an engine error. Hosts branch on it: with
// errors.Is against the sentinels below, or with errors.As into *Error and
// a switch on Code. Over `attune serve` it is error.data.code (and the
// "code" of a failed or refused outcome).
type Code string

// Codes of engine errors. The refusers of the tool chain and of methods
// (ByCeiling, ByGrant, ...) are codes too: a refused outcome's Err carries
// its refused_by word.
const (
	// A command's owner moved on between the fold its handler observed and
	// the append: call again (R5.5).
	CodeStaleRevision Code = "stale-revision"
	// A call id reused with a different input (R5.6).
	CodeCallID Code = "call-id"
	// A method call from a program without the grant the method requires (R5.2).
	CodeGrant Code = "grant"
	// An input or output that does not satisfy its schema (R5.3).
	CodeSchema Code = "schema"
	// A recorded turn's pin is not in the store.
	CodePinMissing Code = "pin-missing"
	// The host's ctx was cancelled or expired: the call stopped (or never ran).
	CodeCancelled Code = "cancelled"
	// A callback ran past its time budget ([engine] callback_budget).
	CodeBudget Code = "budget"
	// A callback went over a memory bound: a value over the data limits, a
	// built-in's result too large, or the host's heap over [engine]
	// memory_limit while it ran (it was cancelled).
	CodeMemory Code = "memory"
	// A host callback (admit/read, the floor, a host core) did not answer
	// within [engine] host_timeout.
	CodeHostTimeout Code = "host-timeout"
	// A host core returned an error or panicked.
	CodeCore Code = "core"
	// The instance is not live (never started, stopped, or closed).
	CodeNotRunning Code = "not-running"
	// The instance is already live (Start of a running id).
	CodeAlreadyRunning Code = "already-running"
	// A round or turn-end step without an open turn.
	CodeNoOpenTurn Code = "no-open-turn"
	// A round-end step without an open round.
	CodeNoOpenRound Code = "no-open-round"
	// A turn (or round) begins while the previous one is still open.
	CodeStillOpen Code = "still-open"
	// The configuration has no bot of that name.
	CodeUnknownBot Code = "unknown-bot"
	// No tool of that path (neither a host tool nor a define/tool of the pin).
	CodeUnknownTool Code = "unknown-tool"
	// An argument of the host's call is missing or wrong.
	CodeInvalid Code = "invalid"
	// A script threw: Program and Position say where.
	CodeScript Code = "script"
	// A program does not load (compile, register or validate/configuration).
	CodeProgram Code = "program"
	// Method admission and handling (R5.2-R5.8): the method is unknown, its
	// handler threw, its reducer failed, the owner cannot be read.
	CodeMethod  Code = "method"
	CodeHandler Code = "handler"
	CodeReducer Code = "reducer"
	CodeOwner   Code = "owner"
	// Revision errors of an owner's log (a snapshot or an entry out of place).
	CodeRevision Code = "revision"
	// A replay met something the journal cannot answer.
	CodeReplay Code = "replay"
	// A note cannot be consumed (unknown, consumed or expired, R3.7).
	CodeNote Code = "note"
	// The store failed.
	CodeStore Code = "store"
	// A command's commit may or may not have happened (the store's
	// connection was lost during COMMIT, the server restarted): call again
	// with the same call id, which resolves it exactly once (R5.6), never
	// with a fresh one.
	CodeOutcomeUnknown Code = "outcome-unknown"
	// A value the host handed the engine inside a turn (a core's result, a
	// tool's arguments, an admit/read answer, a host library's result, a
	// turn's input) has no JSON form (a NaN or infinity, a cycle, a channel
	// or function): the journal cannot record it, so the one call that
	// brought it fails with this code, the failure is journaled, and the
	// session goes on (R3.10). Hand the engine plain JSON data.
	CodeNotPlain Code = "not-plain"
)

// Error is an engine error a host may act on. Error() is the message text
// the engine has always given (the spec's texts, such as
// "stale-revision: owner ... moved from revision 3 to 4"); Code classifies
// it; Program and Position say where a script was when it applies; Err is
// the cause (a store error, context.Canceled, luabind.ErrBudget ...), so
// errors.Is(err, context.DeadlineExceeded) works through it.
//
//	var ee *engine.Error
//	if errors.As(out.Err, &ee) && ee.Code == engine.CodeStaleRevision { retry() }
//	if errors.Is(err, engine.ErrNotRunning) { restart() }
type Error struct {
	Code Code
	// Status is the status of the outcome the error stands behind
	// (refused or failed; "" for an error a call returned by itself).
	Status   Status
	Program  string // the program a script failure belongs to, if any
	Position string // "file:line" where a script threw, if known
	// Frames is the call stack of a script failure, innermost first: the
	// callback that threw, then the callbacks whose calls (call/tool,
	// call/method) led to it, up to the one the host's call entered (the
	// lineage of R4.9).
	Frames  []Frame
	Message string
	Err     error
}

// Frame is one callback on the call stack of a script failure
// (Error.Frames).
type Frame struct {
	Program string `json:"program"`
	// Form is the registration's form ("guard/tool", "hook/tool",
	// "define/method", "subscribe", ...), Pos where it was declared
	// ("g.lua:3").
	Form string `json:"form,omitempty"`
	Pos  string `json:"pos,omitempty"`
	// CallID is the call the callback ran for.
	CallID string `json:"call_id,omitempty"`
}

// framedErr is a callback's failure with the frames of the lineage it
// failed on (registry.run), until scriptErr makes it an *Error.
type framedErr struct {
	err    error
	frames []Frame
}

func (f *framedErr) Error() string { return f.err.Error() }
func (f *framedErr) Unwrap() error { return f.err }

// withFrames is err, the failure of the callback of frame fr, with the
// frames of fr's lineage.
func withFrames(fr *frame, err error) error {
	if _, ok := err.(*framedErr); ok {
		return err
	}
	n := 0
	for x := fr; x != nil; x = x.parent {
		n++
	}
	frames := make([]Frame, 0, n)
	for x := fr; x != nil; x = x.parent {
		f := Frame{CallID: x.callID}
		if x.reg != nil {
			f.Program = x.reg.program
		}
		if x.decl != nil {
			f.Form, f.Pos = x.decl.form, x.decl.pos
		}
		frames = append(frames, f)
	}
	return &framedErr{err: err, frames: frames}
}

func (e *Error) Error() string {
	switch {
	case e.Message != "":
		return e.Message
	case e.Err != nil:
		return e.Err.Error()
	}
	return string(e.Code)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is a sentinel (an *Error carrying no message
// of its own) that e matches: one of the same code, so errors.Is(err,
// engine.ErrNotRunning) matches every not-running error, or one of no code
// and the same status (ErrRefused, ErrFailed).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Message != "" || t.Err != nil {
		return false
	}
	if t.Code == "" {
		return t.Status != "" && t.Status == e.Status
	}
	return t.Code == e.Code && (t.Status == "" || t.Status == e.Status)
}

// Sentinels for errors.Is; each matches every *Error of its code.
var (
	ErrStaleRevision  = &Error{Code: CodeStaleRevision}
	ErrCallID         = &Error{Code: CodeCallID}
	ErrGrant          = &Error{Code: CodeGrant}
	ErrSchema         = &Error{Code: CodeSchema}
	ErrPinMissing     = &Error{Code: CodePinMissing}
	ErrCancelled      = &Error{Code: CodeCancelled}
	ErrBudget         = &Error{Code: CodeBudget}
	ErrMemory         = &Error{Code: CodeMemory}
	ErrHostTimeout    = &Error{Code: CodeHostTimeout}
	ErrCore           = &Error{Code: CodeCore}
	ErrNotRunning     = &Error{Code: CodeNotRunning}
	ErrAlreadyRunning = &Error{Code: CodeAlreadyRunning}
	ErrNoOpenTurn     = &Error{Code: CodeNoOpenTurn}
	ErrNoOpenRound    = &Error{Code: CodeNoOpenRound}
	ErrStillOpen      = &Error{Code: CodeStillOpen}
	ErrUnknownBot     = &Error{Code: CodeUnknownBot}
	ErrUnknownTool    = &Error{Code: CodeUnknownTool}
	ErrInvalid        = &Error{Code: CodeInvalid}
	ErrScript         = &Error{Code: CodeScript}
	ErrProgram        = &Error{Code: CodeProgram}
	ErrNotPlain       = &Error{Code: CodeNotPlain}
)

// CodeOf returns the code of an engine error ("" when err is not one).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// errorf builds an *Error; a %w verb in format becomes its cause.
func errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// wrapErr gives err the code of its cause when it has one, else code,
// and prefix in front of its text ("start a: ...").
func wrapErr(code Code, err error, prefix string) *Error {
	if c := CodeOf(err); c != "" {
		code = c
	} else if c := ctxCode(err); c != "" {
		code = c
	}
	msg := err.Error()
	if prefix != "" {
		msg = prefix + ": " + msg
	}
	return &Error{Code: code, Message: msg, Err: err}
}

func ctxCode(err error) Code {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return CodeCancelled
	}
	if errors.Is(err, luabind.ErrBudget) {
		return CodeBudget
	}
	if errors.Is(err, luabind.ErrMemory) {
		return CodeMemory
	}
	return ""
}

// scriptErr classifies the failure of a callback of registry r from its
// fields: the cause of a cancellation, else the code and position the
// script state recorded when the error was raised (luabind.ScriptError's
// Code and Position). Its text is never read: a script that throws a
// string of its own beginning "stale-revision: " fails with CodeScript.
func scriptErr(r *registry, err error) *Error {
	var frames []Frame
	if f, ok := err.(*framedErr); ok {
		frames, err = f.frames, f.err
	}
	if e, ok := err.(*Error); ok {
		if frames != nil && e.Frames == nil {
			c := *e
			c.Frames = frames
			return &c
		}
		return e
	}
	code := ctxCode(err)
	var se *luabind.ScriptError
	isScript := errors.As(err, &se)
	if code == "" && isScript && se.Code != "" {
		code = Code(se.Code)
	}
	if code == "" {
		code = CodeOf(err)
	}
	if code == "" {
		code = CodeScript
	}
	e := &Error{Code: code, Message: errText(err), Err: err}
	if r != nil {
		e.Program = r.program
	}
	if isScript {
		e.Position = se.Position
		// a nested call's failure the callback raised: its frames are the
		// deeper stack (the callback's own lineage is their tail)
		var inner *Error
		if errors.As(se.Inner, &inner) && len(inner.Frames) > len(frames) {
			frames = inner.Frames
		}
	}
	e.Frames = frames
	return e
}

// raiseCode is the code a failure caused by err raises into script with:
// memory when err went over a memory bound, else err's own code, else code.
func raiseCode(code Code, err error) Code {
	if errors.Is(err, luabind.ErrMemory) {
		return CodeMemory
	}
	if c := CodeOf(err); c != "" {
		return c
	}
	if c := ctxCode(err); c != "" {
		return c
	}
	return code
}

// failedOut is the outcome of a callback of r that failed with err.
func failedOut(r *registry, err error) Outcome {
	return Outcome{Status: StatusFailed, Error: errText(err), Err: scriptErr(r, err)}
}

// settle gives a refused or failed outcome its Err, with the outcome's
// status: a refusal's code is its refused_by word; a failure the engine
// built without one is CodeScript. Every failure that has a code of its
// own is built with its Err.
func (o *Outcome) settle() {
	if o.Status == StatusOK {
		return
	}
	o.Err = settled(o.Status, o.Err, o.RefusedBy, o.Reason, o.Error)
}

func (o *MethodOutcome) settle() {
	if o.Status == StatusOK {
		return
	}
	o.Err = settled(o.Status, o.Err, o.RefusedBy, o.Reason, o.Error)
}

func (r *BoundaryResult) settle() {
	if r.Status == StatusOK {
		return
	}
	by := r.RefusedBy
	if by == "" {
		by = ByGuard
	}
	r.Err = settled(r.Status, r.Err, by, r.Reason, r.Error)
}

// outcomeCode is the code of a refused or failed outcome as data for
// script (the code field of its records), without building its Err: the
// code of its Err, else what settle would give it; "" when it succeeded
// or is pending.
func outcomeCode(o Outcome) Code {
	switch {
	case o.Status != StatusRefused && o.Status != StatusFailed:
		return ""
	case o.Err != nil:
		if c := CodeOf(o.Err); c != "" {
			return c
		}
		if c := ctxCode(o.Err); c != "" {
			return c
		}
		return CodeScript
	case o.Status == StatusRefused:
		return Code(o.RefusedBy)
	}
	return CodeScript
}

// settled is the Err of an outcome of status status (refused or failed)
// whose error is err (nil: none yet): an *Error carrying status; a copy
// when err is an *Error of another status, which may be shared.
func settled(status Status, err error, by, reason, text string) error {
	if status != StatusRefused && status != StatusFailed {
		return err
	}
	if err == nil {
		if status == StatusRefused {
			return &Error{Code: Code(by), Status: status, Message: reason}
		}
		return &Error{Code: CodeScript, Status: status, Message: text}
	}
	return withStatus(status, err)
}

// withStatus is err as the error behind an outcome of status status.
func withStatus(status Status, err error) *Error {
	if e, ok := err.(*Error); ok {
		if e.Status == status {
			return e
		}
		c := *e
		c.Status = status
		return &c
	}
	code := CodeOf(err)
	if code == "" {
		code = ctxCode(err)
	}
	if code == "" {
		code = CodeScript
	}
	return &Error{Code: code, Status: status, Message: err.Error(), Err: err}
}

// handlerErr is the failure of a method handler: "handler: TEXT", coded
// budget or cancelled when that is what stopped it, and not-plain when the
// host handed it a value with no JSON form.
func handlerErr(r *registry, err error) *Error {
	e := scriptErr(r, err)
	c := *e
	c.Message = "handler: " + e.Message
	if c.Code != CodeBudget && c.Code != CodeCancelled && c.Code != CodeNotPlain {
		c.Code = CodeHandler
	}
	return &c
}

// schemaRefused is a method refused by its schema; errors.As(out.Err,
// **SchemaError) finds the path of the violation.
func schemaRefused(err error) MethodOutcome {
	out := refused(BySchema, err.Error())
	out.Err = &Error{Code: CodeSchema, Message: err.Error(), Err: err}
	return out
}

// cancelled is the error of a call whose ctx ended before it ran.
func cancelled(err error) *Error {
	return &Error{Code: CodeCancelled, Message: "cancelled: " + err.Error(), Err: err}
}
