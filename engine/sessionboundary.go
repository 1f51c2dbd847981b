package engine

import (
	"context"

	"github.com/attune-dev/attune/session"
)

// Session boundaries: hook/session "start" and "end" run when the harness
// starts (or resumes, clears, compacts) a session and when it ends one,
// outside any turn. Their record has kind "session", the phase, and
// source: why the session started (startup, resume, clear, compact; a
// subagent's child: subagent) or why it ended (the harness's reason).
// Notes their hooks emit go to the agent with the step itself
// (BoundaryResult.Notes, e.g. SessionStart's additionalContext) and are
// consumed there: they are not placed again into the next round.

// SessionBoundary runs the session hooks of phase ("start" or "end") with
// source on the record.
func (i *Instance) SessionBoundary(ctx context.Context, phase, source string) (BoundaryResult, error) {
	if err := ctx.Err(); err != nil {
		return BoundaryResult{}, cancelled(err)
	}
	if phase != "start" && phase != "end" {
		return BoundaryResult{}, errorf(CodeInvalid, "session boundary phase must be start or end, got %q", phase)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closed.Load() {
		return BoundaryResult{}, errorf(CodeNotRunning, "instance %s is not running", i.id)
	}
	set, err := i.live()
	if err != nil {
		return BoundaryResult{}, err
	}
	defer set.release()
	s := i.sess.Load()
	rec := s.boundaryRecord("session", phase)
	rec["source"] = source
	if h := harnessOf(ctx); h != nil {
		rec["harness"] = h
	}
	callID := s.boundaryID("session", phase)
	notes, failure := i.runHooks(ctx, set, "session", phase, rec, callID)
	s.emit(notes, callID)
	if s.rp == nil {
		for _, n := range notes { // said with the step: not placed again
			if s.book.Consume(n.ID) == nil {
				s.journal(session.Entry{Type: session.Consume, ID: n.ID})
			}
		}
	}
	res := BoundaryResult{Status: StatusOK, Turn: s.turn, Notes: notes, Halt: s.takeHalt()}
	res.failedWith(failure)
	return res, s.flush(ctx)
}

// TakeUserNotes returns the notes behaviors emitted for the user only
// ((notify TEXT "user")) since the last call, and forgets them: the host
// shows them to its user (Claude Code: systemMessage), never to the model.
func (i *Instance) TakeUserNotes() []Note {
	s := i.sess.Load()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.user
	s.user = nil
	return out
}

// PlaceNotes places every note of the turn not yet placed now, for a host
// that can give the model context in the middle of a round (Claude Code's
// PreToolUse and PostToolUse additionalContext): notes a guard, a tool hook
// or a :post-fail emitted reach the model with the next answer, not only
// at the next round (R3.7: each note is placed once).
func (i *Instance) PlaceNotes(ctx context.Context) ([]Note, error) {
	s := i.sess.Load()
	if s.rp != nil {
		return nil, nil
	}
	placed := s.book.Place()
	for _, n := range placed {
		s.journal(session.Entry{Type: session.Consume, ID: n.ID})
	}
	if len(placed) == 0 {
		return nil, nil
	}
	return placed, s.flush(ctx)
}
