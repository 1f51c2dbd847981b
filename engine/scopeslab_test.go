package engine

import (
	"sync"
	"testing"
)

// A call scope is handed out once, whichever goroutines ask: a host may
// keep a core's ctx, and another thread may look at a finished thread.
func TestScopeSlabHandsOutOnce(t *testing.T) {
	var sl scopeSlab
	const workers, each = 8, 1000
	got := make([][]*callScope, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], sl.get())
			}
		})
	}
	wg.Wait()
	seen := map[*callScope]bool{}
	for _, l := range got {
		for _, s := range l {
			if seen[s] {
				t.Fatalf("scope %p handed out twice", s)
			}
			if s.used || s.thread.waiting.Load() != nil {
				t.Fatalf("scope %p handed out used", s)
			}
			seen[s] = true
			s.used = true
		}
	}
	if len(seen) != workers*each {
		t.Fatalf("%d scopes, want %d", len(seen), workers*each)
	}
}
