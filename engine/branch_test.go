package engine

import (
	"context"
	"reflect"
	"testing"
)

// R3.9: the engine's own pack ships branch: it announces a branch that
// differs from the last one it announced in this session, or any branch
// when the context is fresh; otherwise it is quiet.
func TestBranchProgram(t *testing.T) {
	ctx := context.Background()
	branch := "main"
	e := testEngine(t, "[bots.main]\nbehaviors = [\"branch\"]\n", nil, func(o *Options) {
		o.Read = func(_ context.Context, key string) (any, error) {
			if key != "vcs/branch" {
				t.Errorf("read %q", key)
			}
			return branch, nil
		}
	})
	i := start(t, e, "x", "main")
	turn := func(fresh bool) []string {
		r := ok(t)(i.BeginTurn(ctx, TurnInput{ContextFresh: fresh}))
		ok(t)(i.EndTurn(ctx))
		return texts(r.Notes)
	}
	if got := turn(false); !reflect.DeepEqual(got, []string{"ambient:Current branch: main"}) {
		t.Fatalf("first turn: %v", got)
	}
	if got := turn(false); len(got) != 0 {
		t.Fatalf("same branch, same context: %v", got)
	}
	if got := turn(true); !reflect.DeepEqual(got, []string{"ambient:Current branch: main"}) {
		t.Fatalf("fresh context: %v", got)
	}
	branch = "feature"
	if got := turn(false); !reflect.DeepEqual(got, []string{"ambient:Current branch: feature"}) {
		t.Fatalf("new branch: %v", got)
	}
	// a restart keeps what was announced in this session
	i2, err := e.Restart(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	i = i2
	if got := turn(false); len(got) != 0 {
		t.Fatalf("after restart, same branch: %v", got)
	}
}
