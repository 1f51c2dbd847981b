package session

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"attune/store"
)

// flakyStore fails appends while failing is set.
type flakyStore struct {
	store.Store
	failing atomic.Bool
}

var errDown = errors.New("store down")

func (f *flakyStore) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *store.CallRecord) (int64, error) {
	if f.failing.Load() {
		return 0, errDown
	}
	return f.Store.Append(ctx, log, expected, entries, call)
}

func paths(t *testing.T, j *Journal) []string {
	t.Helper()
	es, err := j.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

func wantPaths(t *testing.T, got []string, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%d entries %v, want %d", len(got), got, n)
	}
	for k, p := range got {
		if p != strconv.Itoa(k) {
			t.Fatalf("entry %d is %q: %v", k, p, got)
		}
	}
}

// A failed write keeps its entries, in order, in front of those added
// since; the next Flush writes them all and the store holds the journal in
// the order of Add.
func TestJournalWriteFailureKeepsOrder(t *testing.T) {
	ctx := context.Background()
	st := &flakyStore{Store: store.NewMemory()}
	j := OpenJournal(st, "s", "i")
	n := 0
	add := func(behind bool) {
		e := Entry{Type: Tool, Path: strconv.Itoa(n), Value: "v"}
		n++
		if behind {
			j.AddBehind(e)
		} else {
			j.Add(e)
		}
	}
	add(false)
	add(true)
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st.failing.Store(true)
	for k := range 50 {
		add(k%3 != 0)
	}
	if err := j.Flush(ctx); !errors.Is(err, errDown) {
		t.Fatalf("Flush with the store down: %v", err)
	}
	for k := range 50 {
		add(k%2 == 0)
	}
	st.failing.Store(false)
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wantPaths(t, paths(t, j), n)
}

// Entries added behind from many goroutines at once all reach the store,
// each goroutine's in its order.
func TestJournalBehindConcurrent(t *testing.T) {
	ctx := context.Background()
	j := OpenJournal(store.NewMemory(), "s", "i")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 3000 {
				j.AddBehind(Entry{Type: Core, Path: strconv.Itoa(g), Value: float64(k)})
			}
		})
	}
	wg.Wait()
	es, err := j.Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]float64{}
	for _, e := range es {
		if v := e.Value.(float64); v != next[e.Path] {
			t.Fatalf("goroutine %s: entry %v after %v", e.Path, v, next[e.Path]-1)
		}
		next[e.Path]++
	}
	if len(es) != 4*3000 {
		t.Fatalf("%d entries, want %d", len(es), 4*3000)
	}
}

// An entry encoding/json cannot encode (a NaN) is not written, nor is any
// entry after it, so the store keeps a prefix of the journal; every later
// Flush reports it.
func TestJournalUnencodableEntry(t *testing.T) {
	ctx := context.Background()
	j := OpenJournal(store.NewMemory(), "s", "i")
	j.Add(Entry{Type: Tool, Path: "0"})
	j.AddBehind(Entry{Type: Tool, Path: "1"})
	j.AddBehind(Entry{Type: Tool, Path: "2", Value: math.NaN()})
	j.Add(Entry{Type: Tool, Path: "3"})
	for range 2 {
		if err := j.Flush(ctx); err == nil {
			t.Fatal("Flush after an unencodable entry: no error")
		}
	}
	got, err := j.st.Read(ctx, j.log, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("the store holds %d entries, want the 2 before the bad one", len(got))
	}
}
