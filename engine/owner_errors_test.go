package engine

import (
	"context"
	"testing"
)

// State and ResetOwner of an owner the pin does not declare (or with a
// scope it is not declared with) fail with an *Error of code owner, so a
// host (and attune serve's error.data.code) can tell it from other errors.
func TestOwnerErrorsTyped(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, `
[bots.main]
behaviors = ["offload"]
`, map[string]string{"offload.lua": offloadLua})
	i := start(t, e, "a", "main")
	for _, owner := range []string{"nope", "offload@nowhere"} {
		if _, _, err := i.State(ctx, owner); CodeOf(err) != CodeOwner {
			t.Errorf("State(%q): %v (code %q), want code %q", owner, err, CodeOf(err), CodeOwner)
		}
		if err := i.ResetOwner(ctx, owner); CodeOf(err) != CodeOwner {
			t.Errorf("ResetOwner(%q): %v (code %q), want code %q", owner, err, CodeOf(err), CodeOwner)
		}
	}
}
