package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/attune-dev/attune/store"
)

// racingStore lets another writer get to an owner's log first: before each
// of the next `left` command appends to log it appends an action of its own.
type racingStore struct {
	store.Store
	log      string
	mu       sync.Mutex
	left     int
	injected int
}

func (s *racingStore) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *store.CallRecord) (int64, error) {
	if log == s.log && call != nil && len(entries) > 0 {
		s.mu.Lock()
		race := s.left > 0
		if race {
			s.left--
			s.injected++
		}
		s.mu.Unlock()
		if race {
			e, _ := encodeEntry(1, map[string]any{"type": "add", "by": 10.0}, nil)
			if _, err := s.Store.Append(ctx, log, store.Any, [][]byte{e}, nil); err != nil {
				return 0, err
			}
		}
	}
	return s.Store.Append(ctx, log, expected, entries, call)
}

const staleRetryLua = `
define.reducer("counter", function(s, a) s.n = s.n + a.by return s end, {scope = "project", init = {n = 0}})
define.method("counter", "add", function(ctx, s, x)
  propose({type = "add", by = x.by})
  return s.n + x.by
end, {kind = "command", input = {by = "number"}})
define.method("counter", "add_noting", function(ctx, s, x)
  notify("adding " .. x.by)
  propose({type = "add", by = x.by})
  return s.n + x.by
end, {kind = "command"})
define.method("counter", "add_nested", function(ctx, s, x)
  local n = call.method("counter", "get", {})
  propose({type = "add", by = x.by})
  return n + x.by
end, {kind = "command"})
define.method("counter", "get", function(ctx, s) return s.n end)
`

// R5.5: a command whose append finds the owner moved on runs again on the
// newer state when its handler did nothing but read the state and propose,
// at most maxCommandAttempts times in all; a handler that did anything
// else (a note, a nested call) fails stale-revision at once.
func TestStaleCommandRunsAgain(t *testing.T) {
	log := ownerLog(ScopeProject, "default", "counter")
	setup := func(t *testing.T, left int) (*Instance, *racingStore) {
		rs := &racingStore{Store: store.NewMemory(), log: log, left: left}
		e := testEngine(t, "[bots.main]\nbehaviors = [\"c\"]\n", map[string]string{"c.lua": staleRetryLua},
			func(o *Options) { o.Store = rs })
		return start(t, e, "a", "main"), rs
	}
	ctx := context.Background()
	length := func(t *testing.T, rs *racingStore) int64 {
		n, err := rs.Store.Length(ctx, log)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("pure handler runs again", func(t *testing.T) {
		i, rs := setup(t, 2)
		out := i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 1.0}})
		if out.Status != StatusOK || out.Result != 21.0 || out.Revision != 3 {
			t.Fatalf("got %+v; want ok, 21 (run on the state after the two other actions), revision 3", out)
		}
		if rs.injected != 2 || length(t, rs) != 3 {
			t.Fatalf("%d raced, log length %d", rs.injected, length(t, rs))
		}
	})

	t.Run("bounded", func(t *testing.T) {
		i, rs := setup(t, 100)
		out := i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 1.0}})
		if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "stale-revision: ") || !errors.Is(out.Err, ErrStaleRevision) {
			t.Fatalf("got %+v", out)
		}
		if rs.injected != maxCommandAttempts || length(t, rs) != int64(maxCommandAttempts) {
			t.Fatalf("%d attempts, log length %d; want %d and nothing of the command's", rs.injected, length(t, rs), maxCommandAttempts)
		}
	})

	for _, method := range []string{"add_noting", "add_nested"} {
		t.Run(method+" does not run again", func(t *testing.T) {
			i, rs := setup(t, 1)
			out := i.Method(ctx, MethodCall{Owner: "counter", Method: method, Input: map[string]any{"by": 1.0}})
			if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "stale-revision: owner counter@project moved from revision 0 to 1") {
				t.Fatalf("got %+v", out)
			}
			if rs.injected != 1 || length(t, rs) != 1 {
				t.Fatalf("%d raced, log length %d", rs.injected, length(t, rs))
			}
		})
	}
}
