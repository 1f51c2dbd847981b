package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/attune-dev/attune/store"
)

// doubtStore answers the next `left` command appends with
// store.ErrOutcomeUnknown, having made the append first when commit is set
// (the commit happened, its answer was lost) or not (it did not happen).
type doubtStore struct {
	store.Store
	mu     sync.Mutex
	left   int
	commit bool
	once   bool // commit only the first doubted append
}

func (s *doubtStore) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *store.CallRecord) (int64, error) {
	s.mu.Lock()
	doubt := s.left > 0 && call != nil && len(entries) > 0
	commit := doubt && s.commit
	if doubt {
		s.left--
		if commit {
			s.commit = !s.once
		}
	}
	s.mu.Unlock()
	if !doubt {
		return s.Store.Append(ctx, log, expected, entries, call)
	}
	if commit {
		if _, err := s.Store.Append(ctx, log, expected, entries, call); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("store: postgres: append: %w", store.ErrOutcomeUnknown)
}

// R5.6: a command whose commit may or may not have happened is resolved
// by sending it again with the same call id, exactly once: committed or
// not, the log holds its action once. When the doubt lasts past the
// engine's retries the caller gets outcome-unknown (errors.Is), and its
// call again with the same call id resolves it.
func TestOutcomeUnknownResolvesOnce(t *testing.T) {
	for _, commit := range []bool{true, false} {
		ds := &doubtStore{Store: store.NewMemory(), left: 2, commit: commit}
		e := testEngine(t, "[engine]\nproject = \"p\"\n[bots.main]\nbehaviors = [\"counter\"]\n",
			map[string]string{"counter.lua": staleRetryLua}, func(o *Options) { o.Store = ds })
		i := start(t, e, "i", "main")
		ctx := context.Background()
		out := i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 1.0}, CallID: "c1"})
		if out.Status != StatusOK || out.Result != 1.0 {
			t.Fatalf("commit=%v: %+v", commit, out)
		}
		if n, _ := ds.Length(ctx, ownerLog(ScopeProject, "p", "counter")); n != 1 {
			t.Fatalf("commit=%v: log length %d, want 1", commit, n)
		}
		// past the engine's retries: the caller is told, and calls again
		ds.left, ds.once = unknownRetryCount+1, true
		out = i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 2.0}, CallID: "c2"})
		if out.Status != StatusFailed || CodeOf(out.Err) != CodeOutcomeUnknown || !errors.Is(out.Err, store.ErrOutcomeUnknown) || out.CallID != "c2" {
			t.Fatalf("commit=%v: %+v", commit, out)
		}
		out = i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 2.0}, CallID: "c2"})
		if out.Status != StatusOK || out.Result != 3.0 {
			t.Fatalf("commit=%v: the call again: %+v", commit, out)
		}
		if n, _ := ds.Length(ctx, ownerLog(ScopeProject, "p", "counter")); n != 2 {
			t.Fatalf("commit=%v: log length %d, want 2", commit, n)
		}
	}
}
