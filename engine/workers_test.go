package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// R3.2: hooks of different registries run in parallel: two round-end hooks
// whose host reads each wait for the other's (a barrier in the host) both
// finish, which they could not one after the other. The engine runs them
// on the caller's goroutine and pooled workers, not a goroutine each.
func TestBoundaryHooksBlockInParallel(t *testing.T) {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	read := func(ctx context.Context, key string) (any, error) {
		mu.Lock()
		arrived++
		ch := all
		if arrived == 2 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-ch:
			return "met", nil
		case <-time.After(10 * time.Second):
			return nil, fmt.Errorf("%s waited alone: the hooks ran one after the other", key)
		}
	}
	hook := func(name string) string {
		return fmt.Sprintf(`hook.round("end", function(b) notify(tostring(admit.read("%s"))) end)`, name)
	}
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p1\", \"p2\"]\n", map[string]string{"p1.lua": hook("p1"), "p2.lua": hook("p2")},
		func(o *Options) { o.Read = read })
	i := start(t, e, "x", "main")
	ctx := context.Background()
	for round := range 3 {
		if round == 0 {
			if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := i.BeginRound(ctx); err != nil {
			t.Fatal(err)
		}
		r, err := i.EndRound(ctx, RoundEnd{})
		if err != nil || r.Status != StatusOK {
			t.Fatalf("round %d: %+v %v", round, r, err)
		}
		if got := texts(r.Notes); len(got) != 2 || got[0] != "ambient:met" || got[1] != "ambient:met" {
			t.Fatalf("round %d: notes %v", round, got)
		}
		mu.Lock()
		arrived, all = 0, make(chan struct{})
		mu.Unlock()
	}
}
