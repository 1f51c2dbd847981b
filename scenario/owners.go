package scenario

import (
	"context"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/luabind"
)

// method runs call/method on behalf of the host (not subject to grants).
// The revision is the owner revision after the call; the state, when the
// step expects one, is read after the call.
func (r *runner) method(ctx context.Context, inst *engine.Instance, s *Step) *Got {
	out := inst.Method(ctx, engine.MethodCall{Owner: s.Owner, Method: s.Method, Input: luabind.CopyPlain(s.Input),
		CallID: s.CallID, HostAuthority: s.HostAuthority})
	g := &Got{Status: string(out.Status), Result: out.Result, Reason: out.Reason, RefusedBy: out.RefusedBy,
		Error: out.Error, Diagnostics: out.Diagnostics, Revision: out.Revision, HasRevision: true}
	if s.Expect != nil && s.Expect.HasState {
		r.readState(ctx, inst, s.Owner, g)
	}
	return g
}

// state reads an owner's folded state and revision.
func (r *runner) state(ctx context.Context, inst *engine.Instance, owner string) *Got {
	st, rev, err := inst.State(ctx, owner)
	if err != nil {
		return failedErr(err)
	}
	return &Got{Status: "ok", Result: st, State: st, HasState: true, Revision: rev, HasRevision: true}
}

// reset resets an owner to its initial state on the host's behalf, then
// reads the state and revision after it.
func (r *runner) reset(ctx context.Context, inst *engine.Instance, owner string) *Got {
	if err := inst.ResetOwner(ctx, owner); err != nil {
		return failedErr(err)
	}
	g := &Got{Status: "ok"}
	r.readState(ctx, inst, owner, g)
	return g
}

// readState fills the state and revision of g; a failure to read them
// leaves them absent (the expectation then says "no state").
func (r *runner) readState(ctx context.Context, inst *engine.Instance, owner string, g *Got) {
	st, rev, err := inst.State(ctx, owner)
	if err != nil {
		return
	}
	g.State, g.HasState = st, true
	g.Revision, g.HasRevision = rev, true
}
