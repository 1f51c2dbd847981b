package engine

import (
	"errors"

	"github.com/attune-dev/attune/session"
)

// Status is what a call or step the engine ran came to, one type for every
// outcome: a tool call's (Outcome, and the outcome a guard's invoke
// returns), a method call's (MethodOutcome), a boundary's
// (BoundaryResult), a pack command's (CommandResult). Its text, and its
// JSON form over `attune serve` and in the journal, is the word it always
// was ("ok", "refused", "failed", "pending").
//
// The error behind a refused or failed outcome (its Err) is an *Error
// that carries the outcome's Status as a field, so a host branches on it
// with errors.Is against ErrRefused or ErrFailed, or with errors.As into
// *Error, as on its Code:
//
//	if errors.Is(out.Err, engine.ErrRefused) { ... }
//	var ee *engine.Error
//	if errors.As(out.Err, &ee) && ee.Status == engine.StatusFailed && ee.Code == engine.CodeHostTimeout { ... }
//
// It is the journal's type (session.Status): a step's entry records its
// outcome's status as it is.
type Status = session.Status

// Statuses of outcomes (R4.11).
const (
	StatusOK      Status = "ok"
	StatusRefused Status = "refused"
	StatusFailed  Status = "failed"
	// StatusPending is the outcome of invoke (and of ToolBegin) when the
	// core runs outside the process and has not run yet (external.go).
	StatusPending Status = "pending"
)

// Sentinels of the statuses behind an error, for errors.Is: ErrRefused
// matches the Err of every refused outcome, ErrFailed that of every
// failed one, whatever their code.
var (
	ErrRefused = &Error{Status: StatusRefused}
	ErrFailed  = &Error{Status: StatusFailed}
)

// StatusOf returns the status of the outcome err stands behind: refused or
// failed, "" when err is nil or not an outcome's error.
func StatusOf(err error) Status {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return ""
}
