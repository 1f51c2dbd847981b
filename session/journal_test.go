package session

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/attune-dev/attune/store"
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
// R3.10, R5.10: an entry with no JSON form (a host value: a NaN, a cycle)
// is not buffered; Add and AddBehind say which entry, which field and
// where, and the journal goes on: what came before and after it is written,
// and Flush reports nothing.
func TestJournalUnencodableEntry(t *testing.T) {
	ctx := context.Background()
	j := OpenJournal(store.NewMemory(), "s", "i")
	if err := j.Add(Entry{Type: Tool, Path: "0"}); err != nil {
		t.Fatal(err)
	}
	if n, err := j.AddBehind(Entry{Type: Tool, Path: "1"}); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	n, err := j.AddBehind(Entry{Type: Floor, Path: "2"}, Entry{Type: Core, Path: "2", Value: map[string]any{"a": []any{1.0, math.NaN()}}}, Entry{Type: Tool, Path: "2"})
	var ee *EncodeError
	if n != 1 || !errors.As(err, &ee) || ee.Type != Core || ee.Field != "value" || ee.Path != "a[2]" || ee.What != "NaN" {
		t.Fatalf("AddBehind of a NaN: added %d, %#v", n, err)
	}
	if got, want := err.Error(), `journal journal/s/i: entry "core": NaN at value.a[2] has no JSON form`; got != want {
		t.Errorf("error text\n got %s\nwant %s", got, want)
	}
	cyc := map[string]any{}
	cyc["self"] = cyc
	if err := j.Add(Entry{Type: TurnBegin, Input: cyc}); !errors.As(err, &ee) || ee.Field != "input" || !strings.Contains(ee.What, "cycle") || !strings.HasPrefix(ee.Path, "self.self") {
		t.Fatalf("Add of a cycle: %#v", err)
	}
	if err := j.Add(Entry{Type: Tool, Path: "3"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := j.Flush(ctx); err != nil {
			t.Fatalf("Flush after an unencodable entry: %v", err)
		}
	}
	got, err := j.Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, e := range got {
		have = append(have, e.Type+" "+e.Path)
	}
	if want := []string{"tool 0", "tool 1", "floor 2", "tool 3"}; !slices.Equal(have, want) {
		t.Fatalf("the store holds %q, want %q", have, want)
	}
}

// Encodable says where a host value has no JSON form and what is there,
// through Go types too (structs by their JSON names, typed maps, pointers).
func TestEncodable(t *testing.T) {
	type inner struct {
		Score float64 `json:"score"`
	}
	type outer struct {
		Items []inner `json:"items"`
		Skip  func()  `json:"-"`
	}
	cyc := map[string]any{"x": 1.0}
	cyc["self"] = cyc
	for _, c := range []struct {
		v          any
		path, what string
	}{
		{math.NaN(), "", "NaN"},
		{math.Inf(-1), "", "-Inf"},
		{float32(math.Inf(1)), "", "+Inf"},
		{map[string]any{"b": 1.0, "a b": []any{"x", math.Inf(1)}}, `"a b"[2]`, "+Inf"},
		{&outer{Items: []inner{{1}, {math.NaN()}}}, "items[2].score", "NaN"},
		{map[string]chan int{"c": nil}, "c", "a value of type chan int"},
		{[]any{func() {}}, "[1]", "a value of type func()"},
		{map[[2]int]string{{1, 2}: "x"}, "", "a map with keys of type [2]int"},
		{cyc, "self.self.self.self...", "a cycle (or nesting deeper than 100 levels)"},
		{json.RawMessage(`{"a":`), "", "json: error calling MarshalJSON for type json.RawMessage: unexpected end of JSON input"},
	} {
		err := Encodable(c.v)
		var ee *EncodeError
		if !errors.As(err, &ee) || ee.Path != c.path || ee.What != c.what {
			t.Errorf("Encodable(%T): %#v, want %q at %q", c.v, err, c.what, c.path)
		}
	}
	for _, v := range []any{nil, "x", 1.0, 3, map[string]any{"a": []any{1.0, "b", nil, true}}, outer{Items: []inner{{2}}, Skip: func() {}}, []byte("x"), json.RawMessage(`{"a":[1]}`)} {
		if err := Encodable(v); err != nil {
			t.Errorf("Encodable(%#v): %v", v, err)
		}
	}
}
