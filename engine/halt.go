package engine

import (
	"github.com/attune-dev/attune/luabind"
)

// Halt is a behavior's (halt REASON): the agent's turn is to end now. A
// guard that halts also refuses what it guards; a hook's halt lets its
// step finish. The step during which a halt was called reports it
// (Outcome.Halt, BoundaryResult.Halt) and the host ends the turn: a round
// end that halts does not continue, whatever its notes ask.
type Halt struct {
	// Reason is the behavior's reason (the harness's stopReason).
	Reason string
	// At is where halt was called (file:line).
	At string
}

// fHalt is (halt REASON) in any callback: it records the halt on the
// session, for the step that runs to report, and returns a marker a guard
// returns to refuse.
func fHalt(s *luabind.State) int {
	r := regOf(s)
	fr := r.top()
	at := r.position()
	reason := s.L.OptString(1, "")
	if reason == "" {
		reason = "halted by the behavior at " + at
	}
	fr.inst.sess.Load().halt.CompareAndSwap(nil, &Halt{Reason: reason, At: at})
	return pushVerdict(s, r.haltMT)
}

// takeHalt returns and clears the halt recorded since the last step
// reported one (nil: none).
func (s *sessionState) takeHalt() *Halt { return s.halt.Swap(nil) }
