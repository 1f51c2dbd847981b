package session

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

// lazyStore is a memory store that says which appends were lazy and how
// often it was synced.
type lazyStore struct {
	*store.Memory
	mu          sync.Mutex
	lazy, syncs int
	durable     int
}

func (s *lazyStore) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *store.CallRecord) (int64, error) {
	s.mu.Lock()
	s.durable++
	s.mu.Unlock()
	return s.Memory.Append(ctx, log, expected, entries, call)
}

func (s *lazyStore) AppendLazy(ctx context.Context, log string, expected int64, entries [][]byte, call *store.CallRecord) (int64, error) {
	s.mu.Lock()
	s.lazy++
	s.mu.Unlock()
	return s.Memory.Append(ctx, log, expected, entries, call)
}

func (s *lazyStore) Sync(context.Context) error {
	s.mu.Lock()
	s.syncs++
	s.mu.Unlock()
	return nil
}

// Entries written behind the caller use the store's lazy append; the next
// Flush makes them durable with a Sync (the journal is durable at every
// boundary), and a Flush with nothing written lazily since does not sync.
func TestJournalBehindIsLazyUntilFlush(t *testing.T) {
	ctx := context.Background()
	st := &lazyStore{Memory: store.NewMemory()}
	j := OpenJournal(st, "s", "i")
	j.AddBehind(Entry{Type: Method, CallID: "a"})
	j.AddBehind(Entry{Type: Method, CallID: "b"})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) { // the background write
		if n, _ := st.Length(ctx, LogName("s", "i")); n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the entries written behind never reached the store")
		}
	}
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st.lazy == 0 || st.syncs != 1 {
		t.Fatalf("%d lazy appends, %d syncs; want some, and one sync at the flush", st.lazy, st.syncs)
	}
	es, err := j.Entries(ctx)
	if err != nil || len(es) != 2 {
		t.Fatalf("%v %v", es, err)
	}
	j.Add(Entry{Type: Method, CallID: "c"})
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st.syncs != 1 || st.durable == 0 {
		t.Fatalf("%d syncs, %d durable appends after a plain flush", st.syncs, st.durable)
	}
}
