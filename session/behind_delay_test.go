package session

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

// countingStore counts the appends that reach the store.
type countingStore struct {
	store.Store
	appends atomic.Int64
}

func (c *countingStore) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *store.CallRecord) (int64, error) {
	c.appends.Add(1)
	return c.Store.Append(ctx, log, expected, entries, call)
}

// With a delay, the entries added behind within it share one append, made
// after the delay; Flush does not wait for it.
func TestBehindDelayGroupsWrites(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{Store: store.NewMemory()}
	j := OpenJournal(st, "s", "i")
	j.SetBehindDelay(150 * time.Millisecond)
	start := time.Now()
	for k := 0; k < 5; k++ {
		j.AddBehind(Entry{Type: Tool, Path: "x/y"})
	}
	if n := st.appends.Load(); n != 0 {
		t.Fatalf("%d appends before the delay ended", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for st.appends.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if took := time.Since(start); st.appends.Load() != 1 || took < 150*time.Millisecond {
		t.Fatalf("%d appends after %s, want one after the delay", st.appends.Load(), took)
	}
	if n, _ := st.Length(ctx, LogName("s", "i")); n != 5 {
		t.Fatalf("the store holds %d entries, want 5", n)
	}
	// Flush writes what waits at once
	j.AddBehind(Entry{Type: Tool, Path: "x/z"})
	start = time.Now()
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.Length(ctx, LogName("s", "i")); n != 6 || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("after Flush (%s): %d entries, want 6 at once", time.Since(start), n)
	}
}
