package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// commitBatch runs batch as one group, as the committer does.
func commitBatch(s *SQLite, batch ...*appendReq) {
	s.wal.mu.Lock()
	defer s.wal.mu.Unlock()
	if _, wrote := s.commitGroup(context.Background(), batch, nil); wrote {
		s.wal.committed.Add(1)
	}
}

// One group holding every kind of append (R5.5, R5.6): each is answered
// as if it ran alone, in queue order, with the lengths taken from the read
// cache where it holds the log and from SQLite where it does not.
func TestSQLiteGroupMixed(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t)
	e := func(v string) [][]byte { return [][]byte{[]byte(v)} }
	if _, err := s.Append(ctx, "b", 0, e("b1"), &CallRecord{ID: "cb", Input: []byte("in")}); err != nil {
		t.Fatal(err)
	}
	for _, cold := range []bool{false, true} {
		t.Run(fmt.Sprintf("cold=%v", cold), func(t *testing.T) {
			a, c := "a"+fmt.Sprint(cold), "c"+fmt.Sprint(cold)
			if cold {
				s.cache.invalidate() // every length read from SQLite
			}
			batch := []*appendReq{
				{log: a, expected: 0, entries: e("a1"), call: &CallRecord{ID: "c1", Input: []byte("x"), Result: []byte("r1")}},
				{log: a, expected: 1, entries: [][]byte{[]byte("a2"), []byte("a3")}, call: &CallRecord{ID: "c2", Input: []byte("x")}},
				{log: a, expected: 1, entries: e("late")},                                                      // stale: sees the one before
				{log: "b", expected: 0, entries: e("again"), call: &CallRecord{ID: "cb", Input: []byte("in")}}, // stale, known call: the call first
				{log: "b", expected: 0, entries: e("again"), call: &CallRecord{ID: "cb", Input: []byte("other")}},
				{log: "b", expected: 5, entries: e("x")},
				{log: c, expected: Any, call: &CallRecord{ID: "q", Input: []byte("in")}}, // a call record alone
				{log: a, expected: Any, entries: e("a4")},
			}
			commitBatch(s, batch...)
			want := []struct {
				n   int64
				err error
			}{{1, nil}, {3, nil}, {3, ErrStale}, {1, ErrCallExists}, {1, ErrCallConflict}, {1, ErrStale}, {0, nil}, {4, nil}}
			for k, q := range batch {
				if q.n != want[k].n || !errors.Is(q.err, want[k].err) || (want[k].err == nil) != (q.err == nil) {
					t.Errorf("append %d: %d, %v; want %d, %v", k, q.n, q.err, want[k].n, want[k].err)
				}
			}
			var ce *CallExistsError
			if !errors.As(batch[3].err, &ce) || ce.Record.Revision != 1 || string(ce.Record.Input) != "in" {
				t.Errorf("known call: %v", batch[3].err)
			}
			wantLog(t, s, a, "a1", "a2", "a3", "a4")
			wantLog(t, s, "b", "b1")
			if got, err := s.GetCall(ctx, a, "c2"); err != nil || got.Revision != 3 {
				t.Errorf("call c2 = %+v, %v; want revision 3", got, err)
			}
			if got, err := s.GetCall(ctx, c, "q"); err != nil || got.Revision != 0 {
				t.Errorf("call q = %+v, %v; want revision 0", got, err)
			}
		})
	}
}

// A call id already recorded, met by the insert of a group's call records
// (not stale, so not read first): the group runs again append by append,
// and the others are not disturbed.
func TestSQLiteGroupKnownCall(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t)
	if _, err := s.Append(ctx, "l", 0, [][]byte{[]byte("one")}, &CallRecord{ID: "c", Input: []byte("in")}); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 3, 40} { // 40: more than one insert statement
		var batch []*appendReq
		for k := range size - 1 {
			log := fmt.Sprintf("w%d-%d", size, k)
			batch = append(batch, &appendReq{log: log, expected: 0, entries: [][]byte{[]byte(log)}, call: &CallRecord{ID: "c", Input: []byte("in")}})
		}
		known := &appendReq{log: "l", expected: Any, entries: [][]byte{[]byte("twice")}, call: &CallRecord{ID: "c", Input: []byte("in")}}
		batch = append(batch, known)
		commitBatch(s, batch...)
		if !errors.Is(known.err, ErrCallExists) || known.n != 1 {
			t.Fatalf("group of %d: the known call: %d, %v", size, known.n, known.err)
		}
		for _, q := range batch[:size-1] {
			if q.err != nil || q.n != 1 {
				t.Fatalf("group of %d: %s: %d, %v", size, q.log, q.n, q.err)
			}
			wantLog(t, s, q.log, q.log)
		}
		wantLog(t, s, "l", "one")
	}
}

func wantLog(t *testing.T, s *SQLite, log string, want ...string) {
	t.Helper()
	es, err := s.read(t.Context(), log, 0, 0) // SQLite's, not the cache's
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, string(e.Data))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("log %s = %q, want %q", log, got, want)
	}
}

// Appends joining an open transaction (committer.more, while a flush runs)
// are planned with the lengths the ones before them left; a known call id
// among several joining at once runs the whole group again, each append
// in a transaction of its own; alone, it runs append by append in the
// same transaction. Either way each is answered as if it ran alone.
func TestSQLiteGroupJoined(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t)
	e := func(v string) [][]byte { return [][]byte{[]byte(v)} }
	if _, err := s.Append(ctx, "k", 0, e("k1"), &CallRecord{ID: "known", Input: []byte("in")}); err != nil {
		t.Fatal(err)
	}
	for _, joinKnownAlone := range []bool{false, true} {
		t.Run(fmt.Sprintf("alone=%v", joinKnownAlone), func(t *testing.T) {
			l := fmt.Sprintf("l-%v", joinKnownAlone)
			first := []*appendReq{{log: l, expected: 0, entries: e("1"), call: &CallRecord{ID: "a", Input: []byte("x")}}}
			second := []*appendReq{
				{log: l, expected: 1, entries: e("2"), call: &CallRecord{ID: "b", Input: []byte("x")}},
				{log: l, expected: 1, entries: e("stale")},
			}
			known := &appendReq{log: "k", expected: Any, entries: e("again"), call: &CallRecord{ID: "known", Input: []byte("in")}}
			third := []*appendReq{known}
			if !joinKnownAlone {
				third = append(third, &appendReq{log: l, expected: 2, entries: e("3")})
			}
			joins := [][]*appendReq{second, third}
			rooms := []int{}
			s.wal.mu.Lock()
			group, wrote := s.commitGroup(ctx, first, func(room int) []*appendReq {
				rooms = append(rooms, room)
				if len(joins) == 0 {
					return nil
				}
				b := joins[0]
				joins = joins[1:]
				return b
			})
			if wrote {
				s.wal.committed.Add(1)
			}
			s.wal.mu.Unlock()
			if len(group) != 1+len(second)+len(third) {
				t.Fatalf("group of %d", len(group))
			}
			if fmt.Sprint(rooms[:2]) != fmt.Sprint([]int{maxGroup - 1, maxGroup - 3}) {
				t.Errorf("room offered: %v", rooms)
			}
			want := []struct {
				n   int64
				err error
			}{{1, nil}, {2, nil}, {2, ErrStale}, {1, ErrCallExists}, {3, nil}}
			for k, q := range group {
				if q.n != want[k].n || !errors.Is(q.err, want[k].err) || (want[k].err == nil) != (q.err == nil) {
					t.Errorf("append %d: %d, %v; want %d, %v", k, q.n, q.err, want[k].n, want[k].err)
				}
			}
			if joinKnownAlone {
				wantLog(t, s, l, "1", "2")
			} else {
				wantLog(t, s, l, "1", "2", "3")
			}
			wantLog(t, s, "k", "k1")
			if n, err := s.Length(ctx, l); err != nil || n != int64(len(group)-2) {
				t.Errorf("Length (from the cache) = %d, %v", n, err)
			}
		})
	}
}

// The leader keeps its transaction open while a flush runs and takes in
// the appends that queue meanwhile; with no flush running it commits at
// once.
func TestSQLiteGroupWaitsForFlush(t *testing.T) {
	var c committer
	c.wake = make(chan struct{}, 1)
	var w walSync
	if got := c.more(&w, maxGroup); got != nil {
		t.Fatalf("no flush running: more = %v, want nil (commit now)", got)
	}
	w.flushing.Store(true)
	got := make(chan []*appendReq)
	go func() { got <- c.more(&w, maxGroup) }()
	q := &appendReq{log: "l"}
	for { // queue an append once the leader waits
		c.mu.Lock()
		if c.waiting {
			c.queue = append(c.queue, q)
			c.nudge()
			c.mu.Unlock()
			break
		}
		c.mu.Unlock()
		runtime.Gosched()
	}
	if b := <-got; len(b) != 1 || b[0] != q {
		t.Fatalf("more during a flush = %v, want the queued append", b)
	}
	go func() { got <- c.more(&w, maxGroup) }()
	for {
		c.mu.Lock()
		waiting := c.waiting
		c.mu.Unlock()
		if waiting {
			break
		}
		runtime.Gosched()
	}
	w.flushing.Store(false)
	c.nudge() // as syncThrough does when a flush ends
	if b := <-got; b != nil {
		t.Fatalf("more after the flush = %v, want nil", b)
	}
}
