// Package storetest is the conformance suite every store.Store passes: the
// same tests run against Memory, SQLite and PostgreSQL (R5.10).
//
// A store's own tests call Run with a function that opens a new, empty store;
// Run closes every store it opens.
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

// Run runs the conformance suite, one subtest per part of the contract.
// open must return a new, empty store each time it is called; it may call
// t.Fatal.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Blobs", testBlobs},
		{"Records", testRecords},
		{"ListRecords", testListRecords},
		{"PutRecordIfAbsentRace", testPutRecordIfAbsentRace},
		{"AppendRead", testAppendRead},
		{"ReadAfterLimit", testReadAfterLimit},
		{"AppendStale", testAppendStale},
		{"AppendRace", testAppendRace},
		{"AppendAnyRace", testAppendAnyRace},
		{"CallRecords", testCallRecords},
		{"CallRecordWithoutEntries", testCallRecordWithoutEntries},
		{"CallRace", testCallRace},
		{"Truncate", testTruncate},
		{"DeleteLog", testDeleteLog},
		{"BadArguments", testBadArguments},
		{"Cancelled", testCancelled},
		{"NoAliasing", testNoAliasing},
		{"Bytes", testBytes},
		{"Watch", testWatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// result carries a value and an error to must: res(s.Length(ctx, log)).must(t).
type result[T any] struct {
	v   T
	err error
}

func res[T any](v T, err error) result[T] { return result[T]{v, err} }

// must fails the test at once on an error.
func (r result[T]) must(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want one that is %q", what, err, target)
	}
}

func wantLength(t *testing.T, s store.Store, log string, want int64) {
	t.Helper()
	if n := res(s.Length(t.Context(), log)).must(t); n != want {
		t.Fatalf("Length(%q) = %d, want %d", log, n, want)
	}
}

// wantEntries checks that the whole log holds exactly want, numbered from 1.
func wantEntries(t *testing.T, s store.Store, log string, want ...string) {
	t.Helper()
	got := res(s.Read(t.Context(), log, 0, 0)).must(t)
	if len(got) != len(want) {
		t.Fatalf("Read(%q) gave %d entries %q, want %q", log, len(got), datas(got), want)
	}
	for i, e := range got {
		if e.Seq != int64(i+1) || string(e.Data) != want[i] {
			t.Fatalf("Read(%q)[%d] = {%d %q}, want {%d %q}", log, i, e.Seq, e.Data, i+1, want[i])
		}
	}
	wantLength(t, s, log, int64(len(want)))
}

func datas(es []store.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e.Data)
	}
	return out
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func testBlobs(t *testing.T, s store.Store) {
	ctx := t.Context()
	data := []byte("(define/tool \"tree/read\" ...)")
	h := res(s.PutBlob(ctx, data)).must(t)
	if h != sha(data) {
		t.Fatalf("PutBlob = %q, want the lower-case hex sha256 %q", h, sha(data))
	}
	if got := res(s.GetBlob(ctx, h)).must(t); !bytes.Equal(got, data) {
		t.Fatalf("GetBlob = %q, want %q", got, data)
	}
	if h2 := res(s.PutBlob(ctx, data)).must(t); h2 != h {
		t.Fatalf("PutBlob again = %q, want %q", h2, h)
	}
	empty := res(s.PutBlob(ctx, nil)).must(t)
	if empty != sha(nil) {
		t.Fatalf("PutBlob(nil) = %q, want %q", empty, sha(nil))
	}
	if got := res(s.GetBlob(ctx, empty)).must(t); got == nil || len(got) != 0 {
		t.Fatalf("GetBlob(empty) = %#v, want an empty, non-nil slice", got)
	}
	_, err := s.GetBlob(ctx, sha([]byte("never stored")))
	wantIs(t, "GetBlob of a missing blob", err, store.ErrNotFound)
	_, err = s.GetBlob(ctx, "not a hash")
	wantIs(t, "GetBlob of a malformed hash", err, store.ErrNotFound)

	ok(t, s.DeleteBlob(ctx, h))
	_, err = s.GetBlob(ctx, h)
	wantIs(t, "GetBlob after DeleteBlob", err, store.ErrNotFound)
	ok(t, s.DeleteBlob(ctx, h)) // a missing blob is not an error
	if got := res(s.GetBlob(ctx, empty)).must(t); len(got) != 0 {
		t.Fatalf("GetBlob(empty) after deleting another = %q", got)
	}
}

func testRecords(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, err := s.GetRecord(ctx, "pin", "i1")
	wantIs(t, "GetRecord of a missing record", err, store.ErrNotFound)

	ok(t, s.PutRecord(ctx, "pin", "i1", []byte("v1")))
	if got := res(s.GetRecord(ctx, "pin", "i1")).must(t); string(got) != "v1" {
		t.Fatalf("GetRecord = %q, want v1", got)
	}
	ok(t, s.PutRecord(ctx, "pin", "i1", []byte("v2"))) // replaces
	if got := res(s.GetRecord(ctx, "pin", "i1")).must(t); string(got) != "v2" {
		t.Fatalf("GetRecord after replacing = %q, want v2", got)
	}
	// Kinds are separate spaces.
	_, err = s.GetRecord(ctx, "instance", "i1")
	wantIs(t, "GetRecord of another kind", err, store.ErrNotFound)

	stored, created, err := s.PutRecordIfAbsent(ctx, "pin", "i1", []byte("v3"))
	ok(t, err)
	if created || string(stored) != "v2" {
		t.Fatalf("PutRecordIfAbsent on an existing record = %q, %v; want v2, false", stored, created)
	}
	stored, created, err = s.PutRecordIfAbsent(ctx, "pin", "i2", []byte("w"))
	ok(t, err)
	if !created || string(stored) != "w" {
		t.Fatalf("PutRecordIfAbsent on a new record = %q, %v; want w, true", stored, created)
	}
	if got := res(s.GetRecord(ctx, "pin", "i2")).must(t); string(got) != "w" {
		t.Fatalf("GetRecord after PutRecordIfAbsent = %q, want w", got)
	}

	ok(t, s.PutRecord(ctx, "pin", "empty", nil))
	if got := res(s.GetRecord(ctx, "pin", "empty")).must(t); got == nil || len(got) != 0 {
		t.Fatalf("GetRecord of an empty value = %#v, want an empty, non-nil slice", got)
	}

	ok(t, s.DeleteRecord(ctx, "pin", "i1"))
	_, err = s.GetRecord(ctx, "pin", "i1")
	wantIs(t, "GetRecord after DeleteRecord", err, store.ErrNotFound)
	ok(t, s.DeleteRecord(ctx, "pin", "i1")) // a missing record is not an error
	if got := res(s.GetRecord(ctx, "pin", "i2")).must(t); string(got) != "w" {
		t.Fatalf("DeleteRecord removed another record: %q", got)
	}
}

func testListRecords(t *testing.T, s store.Store) {
	ctx := t.Context()
	if keys := res(s.ListRecords(ctx, "owner", "")).must(t); len(keys) != 0 {
		t.Fatalf("ListRecords on an empty store = %q", keys)
	}
	for _, k := range []string{"p/b", "p/a", "p/é", "p/z", "p", "q/a", "p%", "p_x", "P/a", "p/a/b"} {
		ok(t, s.PutRecord(ctx, "owner", k, []byte(k)))
	}
	ok(t, s.PutRecord(ctx, "other", "p/c", nil))
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		// Byte order: "P" < "p", "/" < "%"? no: "%" (0x25) < "/" (0x2f) < "_" (0x5f), "z" < "é".
		{"", []string{"P/a", "p", "p%", "p/a", "p/a/b", "p/b", "p/z", "p/é", "p_x", "q/a"}},
		{"p/", []string{"p/a", "p/a/b", "p/b", "p/z", "p/é"}},
		{"p/a", []string{"p/a", "p/a/b"}},
		{"p%", []string{"p%"}}, // no pattern characters
		{"p_", []string{"p_x"}},
		{"P", []string{"P/a"}}, // case matters
		{"r", nil},
		{"p/é", []string{"p/é"}},
	} {
		got := res(s.ListRecords(ctx, "owner", tc.prefix)).must(t)
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListRecords(owner, %q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

// PutRecordIfAbsent is atomic: of many racing creators exactly one creates,
// and every one of them gets the winner's value back.
func testPutRecordIfAbsentRace(t *testing.T, s store.Store) {
	const n = 16
	for round := range 3 {
		key := fmt.Sprintf("race-%d", round)
		var wg sync.WaitGroup
		values := make([][]byte, n)
		created := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				values[i], created[i], errs[i] = s.PutRecordIfAbsent(t.Context(), "owner", key, fmt.Appendf(nil, "v%d", i))
			})
		}
		wg.Wait()
		winner := -1
		for i := range n {
			ok(t, errs[i])
			if created[i] {
				if winner >= 0 {
					t.Fatalf("round %d: both %d and %d created the record", round, winner, i)
				}
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no caller created the record", round)
		}
		want := fmt.Sprintf("v%d", winner)
		for i := range n {
			if string(values[i]) != want {
				t.Fatalf("round %d: caller %d got %q, want the winner's %q", round, i, values[i], want)
			}
		}
		if got := res(s.GetRecord(t.Context(), "owner", key)).must(t); string(got) != want {
			t.Fatalf("round %d: stored %q, want %q", round, got, want)
		}
	}
}

func testAppendRead(t *testing.T, s store.Store) {
	ctx := t.Context()
	const log = "owner/project/default/tasks"
	wantLength(t, s, log, 0)
	if es := res(s.Read(ctx, log, 0, 0)).must(t); len(es) != 0 {
		t.Fatalf("Read of a log never written = %v", es)
	}
	if n := res(s.Append(ctx, log, 0, bs("a"), nil)).must(t); n != 1 {
		t.Fatalf("Append = %d, want 1", n)
	}
	if n := res(s.Append(ctx, log, 1, bs("b", "c"), nil)).must(t); n != 3 {
		t.Fatalf("Append of two = %d, want 3", n)
	}
	if n := res(s.Append(ctx, log, store.Any, bs("d"), nil)).must(t); n != 4 {
		t.Fatalf("Append at Any = %d, want 4", n)
	}
	// Nothing to append and no call: the length, under the same check.
	if n := res(s.Append(ctx, log, 4, nil, nil)).must(t); n != 4 {
		t.Fatalf("Append of nothing = %d, want 4", n)
	}
	wantEntries(t, s, log, "a", "b", "c", "d")
	// Logs are separate.
	wantLength(t, s, log+"/other", 0)
	res(s.Append(ctx, log+"/other", 0, bs("x"), nil)).must(t)
	wantEntries(t, s, log, "a", "b", "c", "d")
	wantEntries(t, s, log+"/other", "x")
}

func testReadAfterLimit(t *testing.T, s store.Store) {
	ctx := t.Context()
	res(s.Append(ctx, "l", 0, bs("1", "2", "3", "4", "5"), nil)).must(t)
	for _, tc := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 0, []int64{1, 2, 3, 4, 5}},
		{-3, 0, []int64{1, 2, 3, 4, 5}},
		{2, 0, []int64{3, 4, 5}},
		{2, 2, []int64{3, 4}},
		{0, 1, []int64{1}},
		{4, 10, []int64{5}},
		{5, 0, nil},
		{9, 3, nil},
		{1, -1, []int64{2, 3, 4, 5}},
	} {
		es := res(s.Read(ctx, "l", tc.after, tc.limit)).must(t)
		var seqs []int64
		for _, e := range es {
			seqs = append(seqs, e.Seq)
			if string(e.Data) != fmt.Sprint(e.Seq) {
				t.Errorf("Read(after %d, limit %d): entry %d holds %q", tc.after, tc.limit, e.Seq, e.Data)
			}
		}
		if !slices.Equal(seqs, tc.want) {
			t.Errorf("Read(after %d, limit %d) = seqs %v, want %v", tc.after, tc.limit, seqs, tc.want)
		}
	}
}

// R5.5: an append at a length that is not the log's appends nothing.
func testAppendStale(t *testing.T, s store.Store) {
	ctx := t.Context()
	res(s.Append(ctx, "l", 0, bs("a", "b"), nil)).must(t)
	for _, expected := range []int64{0, 1, 3, 10} {
		n, err := s.Append(ctx, "l", expected, bs("x", "y"), nil)
		wantIs(t, fmt.Sprintf("Append at %d to a log of 2", expected), err, store.ErrStale)
		if errors.Is(err, store.ErrCallConflict) || errors.Is(err, store.ErrCallExists) || errors.Is(err, store.ErrNotFound) {
			t.Fatalf("stale error %v also matches another sentinel", err)
		}
		if n != 2 {
			t.Errorf("stale Append returned length %d, want the current 2", n)
		}
	}
	// Stale with a call record: neither the entries nor the record.
	_, err := s.Append(ctx, "l", 1, bs("x"), &store.CallRecord{ID: "c1", Input: []byte("in")})
	wantIs(t, "stale Append with a call", err, store.ErrStale)
	_, err = s.GetCall(ctx, "l", "c1")
	wantIs(t, "GetCall after a stale Append", err, store.ErrNotFound)
	wantEntries(t, s, "l", "a", "b")
	// Stale on a log never written.
	_, err = s.Append(ctx, "new", 1, bs("x"), nil)
	wantIs(t, "Append at 1 to a new log", err, store.ErrStale)
	wantLength(t, s, "new", 0)
}

// R5.5: appenders racing at the same expected length: exactly one wins, the
// others get ErrStale (never a lock or constraint error) and append nothing.
func testAppendRace(t *testing.T, s store.Store) {
	const racers = 16
	const log = "owner/project/default/race"
	for round := range 5 {
		expected := int64(round * 2)
		var wg sync.WaitGroup
		errs := make([]error, racers)
		for i := range racers {
			wg.Go(func() {
				_, errs[i] = s.Append(t.Context(), log, expected, bs(fmt.Sprintf("r%d-%d", round, i), "second"), nil)
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: racers %d and %d both appended at %d", round, winner, i, expected)
				}
				winner = i
			case !errors.Is(err, store.ErrStale):
				t.Fatalf("round %d: racer %d: %v, want success or ErrStale", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no racer appended", round)
		}
		es := res(s.Read(t.Context(), log, expected, 0)).must(t)
		if len(es) != 2 || string(es[0].Data) != fmt.Sprintf("r%d-%d", round, winner) || string(es[1].Data) != "second" {
			t.Fatalf("round %d: appended %q, want the winner's two entries", round, datas(es))
		}
	}
	wantLength(t, s, log, 10)
}

// Appends at Any never conflict; each one's entries stay together.
func testAppendAnyRace(t *testing.T, s store.Store) {
	const racers, each, batch = 8, 5, 3
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Go(func() {
			for j := range each {
				var entries [][]byte
				for k := range batch {
					entries = append(entries, fmt.Appendf(nil, "%d/%d/%d", i, j, k))
				}
				if _, err := s.Append(t.Context(), "any", store.Any, entries, nil); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	ok(t, errors.Join(errs...))
	es := res(s.Read(t.Context(), "any", 0, 0)).must(t)
	if len(es) != racers*each*batch {
		t.Fatalf("%d entries, want %d", len(es), racers*each*batch)
	}
	next := make([]int, racers)
	for b := 0; b < len(es); b += batch {
		var i, j, k int
		fmt.Sscanf(string(es[b].Data), "%d/%d/%d", &i, &j, &k)
		if j != next[i] {
			t.Fatalf("entry %d: racer %d's batch %d, want its batch %d", b+1, i, j, next[i])
		}
		next[i]++
		for k := range batch {
			e := es[b+k]
			if e.Seq != int64(b+k+1) || string(e.Data) != fmt.Sprintf("%d/%d/%d", i, j, k) {
				t.Fatalf("entry %d = {%d %q}: a batch was split", b+k+1, e.Seq, e.Data)
			}
		}
	}
}

// R5.6: call records make a retried call recognisable.
func testCallRecords(t *testing.T, s store.Store) {
	ctx := t.Context()
	const log = "session/s1/tasks"
	_, err := s.GetCall(ctx, log, "c1")
	wantIs(t, "GetCall on a log never written", err, store.ErrNotFound)

	call := &store.CallRecord{ID: "c1", Input: []byte(`{"title":"x"}`), Result: []byte(`"ok"`), Revision: 99}
	n := res(s.Append(ctx, log, 0, bs("create x", "start x"), call)).must(t)
	if n != 2 {
		t.Fatalf("Append with a call = %d, want 2", n)
	}
	if call.Revision != 99 {
		t.Fatalf("Append changed the caller's CallRecord (Revision %d)", call.Revision)
	}
	want := store.CallRecord{ID: "c1", Input: []byte(`{"title":"x"}`), Result: []byte(`"ok"`), Revision: 2}
	wantCall(t, s, log, want)

	// The same id and input: the stored record, nothing appended — also
	// when the expected length is now stale, or Any, or right.
	for _, expected := range []int64{0, 2, store.Any} {
		retry := &store.CallRecord{ID: "c1", Input: []byte(`{"title":"x"}`), Result: []byte(`"other"`)}
		_, err := s.Append(ctx, log, expected, bs("create x again"), retry)
		wantIs(t, fmt.Sprintf("retried call at %d", expected), err, store.ErrCallExists)
		var exists *store.CallExistsError
		if !errors.As(err, &exists) {
			t.Fatalf("retried call: %T %v, want a *CallExistsError", err, err)
		}
		if !sameCall(exists.Record, want) {
			t.Fatalf("CallExistsError.Record = %+v, want %+v", exists.Record, want)
		}
		if errors.Is(err, store.ErrStale) || errors.Is(err, store.ErrCallConflict) {
			t.Fatalf("call-exists error %v also matches another sentinel", err)
		}
	}
	// The same id, another input: a conflict, nothing appended.
	_, err = s.Append(ctx, log, 2, bs("create y"), &store.CallRecord{ID: "c1", Input: []byte(`{"title":"y"}`)})
	wantIs(t, "call id reused with another input", err, store.ErrCallConflict)
	if errors.Is(err, store.ErrCallExists) || errors.Is(err, store.ErrStale) {
		t.Fatalf("conflict error %v also matches another sentinel", err)
	}
	wantEntries(t, s, log, "create x", "start x")
	wantCall(t, s, log, want)

	// Call ids are per log.
	res(s.Append(ctx, "session/s2/tasks", 0, bs("elsewhere"), &store.CallRecord{ID: "c1", Input: []byte("other")})).must(t)
	wantCall(t, s, "session/s2/tasks", store.CallRecord{ID: "c1", Input: []byte("other"), Result: []byte{}, Revision: 1})
	wantCall(t, s, log, want)

	// A new id goes on.
	res(s.Append(ctx, log, 2, bs("stamp x"), &store.CallRecord{ID: "c2", Input: nil, Result: nil})).must(t)
	wantCall(t, s, log, store.CallRecord{ID: "c2", Input: []byte{}, Result: []byte{}, Revision: 3})
	// An empty input equals a nil one.
	_, err = s.Append(ctx, log, 3, bs("again"), &store.CallRecord{ID: "c2", Input: []byte{}})
	wantIs(t, "retry with an empty input", err, store.ErrCallExists)
	wantLength(t, s, log, 3)
}

// R5.6: a query records its result and appends nothing.
func testCallRecordWithoutEntries(t *testing.T, s store.Store) {
	ctx := t.Context()
	res(s.Append(ctx, "l", 0, bs("a", "b"), nil)).must(t)
	n := res(s.Append(ctx, "l", 2, nil, &store.CallRecord{ID: "q1", Input: []byte("in"), Result: []byte("out")})).must(t)
	if n != 2 {
		t.Fatalf("Append of a call record alone = %d, want 2", n)
	}
	wantCall(t, s, "l", store.CallRecord{ID: "q1", Input: []byte("in"), Result: []byte("out"), Revision: 2})
	wantEntries(t, s, "l", "a", "b")
	// Under the same checks.
	_, err := s.Append(ctx, "l", 1, nil, &store.CallRecord{ID: "q2", Input: []byte("in")})
	wantIs(t, "stale call record alone", err, store.ErrStale)
	_, err = s.GetCall(ctx, "l", "q2")
	wantIs(t, "GetCall after a stale call record", err, store.ErrNotFound)
	_, err = s.Append(ctx, "l", store.Any, nil, &store.CallRecord{ID: "q1", Input: []byte("in")})
	wantIs(t, "the same query again", err, store.ErrCallExists)
	_, err = s.Append(ctx, "l", store.Any, nil, &store.CallRecord{ID: "q1", Input: []byte("other")})
	wantIs(t, "the same query id, another input", err, store.ErrCallConflict)
	// A call record on a log never written.
	n = res(s.Append(ctx, "fresh", 0, nil, &store.CallRecord{ID: "q", Input: []byte("in")})).must(t)
	if n != 0 {
		t.Fatalf("call record alone on a new log = %d, want 0", n)
	}
	wantCall(t, s, "fresh", store.CallRecord{ID: "q", Input: []byte("in"), Result: []byte{}, Revision: 0})
}

// R5.6: racing callers with one call id: one appends, the others see the
// stored call (or a stale length), and the log holds one copy.
func testCallRace(t *testing.T, s store.Store) {
	const racers = 16
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Go(func() {
			_, errs[i] = s.Append(t.Context(), "l", store.Any, bs("once"), &store.CallRecord{ID: "c", Input: []byte("in"), Result: fmt.Appendf(nil, "%d", i)})
		})
	}
	wg.Wait()
	winners := 0
	for i, err := range errs {
		switch {
		case err == nil:
			winners++
		case !errors.Is(err, store.ErrCallExists):
			t.Fatalf("racer %d: %v", i, err)
		}
	}
	if winners != 1 {
		t.Fatalf("%d racers appended, want 1", winners)
	}
	wantEntries(t, s, "l", "once")
}

func sameCall(a, b store.CallRecord) bool {
	return a.ID == b.ID && bytes.Equal(a.Input, b.Input) && bytes.Equal(a.Result, b.Result) && a.Revision == b.Revision
}

func wantCall(t *testing.T, s store.Store, log string, want store.CallRecord) {
	t.Helper()
	got := res(s.GetCall(t.Context(), log, want.ID)).must(t)
	if !sameCall(got, want) {
		t.Fatalf("GetCall(%q, %q) = %+v, want %+v", log, want.ID, got, want)
	}
	if got.Input == nil || got.Result == nil {
		t.Fatalf("GetCall(%q, %q) = %#v: nil slices", log, want.ID, got)
	}
}

// R5.9: a rollback keeps the first n entries and the call records that saw
// no more than n.
func testTruncate(t *testing.T, s store.Store) {
	ctx := t.Context()
	const log = "session/s1/goal"
	for i := range 5 {
		res(s.Append(ctx, log, int64(i), bs(fmt.Sprint(i+1)), &store.CallRecord{ID: fmt.Sprintf("c%d", i+1), Input: []byte("in")})).must(t)
	}
	res(s.Append(ctx, log, 5, nil, &store.CallRecord{ID: "q5", Input: []byte("in")})).must(t) // a query at revision 5
	res(s.Append(ctx, "session/s1/other", 0, bs("x"), &store.CallRecord{ID: "c4", Input: []byte("in")})).must(t)

	ok(t, s.Truncate(ctx, log, 3))
	wantEntries(t, s, log, "1", "2", "3")
	for i := 1; i <= 3; i++ {
		wantCall(t, s, log, store.CallRecord{ID: fmt.Sprintf("c%d", i), Input: []byte("in"), Result: []byte{}, Revision: int64(i)})
	}
	for _, id := range []string{"c4", "c5", "q5"} {
		_, err := s.GetCall(ctx, log, id)
		wantIs(t, "GetCall of a call above the truncation", err, store.ErrNotFound)
	}
	// Other logs are untouched.
	wantEntries(t, s, "session/s1/other", "x")
	wantCall(t, s, "session/s1/other", store.CallRecord{ID: "c4", Input: []byte("in"), Result: []byte{}, Revision: 1})

	// The log goes on from n; a dropped call id is free again.
	n := res(s.Append(ctx, log, 3, bs("4b"), &store.CallRecord{ID: "c4", Input: []byte("another")})).must(t)
	if n != 4 {
		t.Fatalf("Append after Truncate = %d, want 4", n)
	}
	wantEntries(t, s, log, "1", "2", "3", "4b")

	ok(t, s.Truncate(ctx, log, 10)) // beyond the end: nothing dropped
	wantEntries(t, s, log, "1", "2", "3", "4b")
	ok(t, s.Truncate(ctx, log, 0))
	wantEntries(t, s, log)
	_, err := s.GetCall(ctx, log, "c1")
	wantIs(t, "GetCall after Truncate to 0", err, store.ErrNotFound)
	ok(t, s.Truncate(ctx, "never written", 0))
	if err := s.Truncate(ctx, log, -1); err == nil {
		t.Fatal("Truncate to -1 succeeded")
	}
}

func testDeleteLog(t *testing.T, s store.Store) {
	ctx := t.Context()
	res(s.Append(ctx, "a", 0, bs("1", "2"), &store.CallRecord{ID: "c", Input: []byte("in")})).must(t)
	res(s.Append(ctx, "b", 0, bs("x"), &store.CallRecord{ID: "c", Input: []byte("in")})).must(t)
	ok(t, s.DeleteLog(ctx, "a"))
	wantEntries(t, s, "a")
	_, err := s.GetCall(ctx, "a", "c")
	wantIs(t, "GetCall after DeleteLog", err, store.ErrNotFound)
	wantEntries(t, s, "b", "x")
	wantCall(t, s, "b", store.CallRecord{ID: "c", Input: []byte("in"), Result: []byte{}, Revision: 1})
	ok(t, s.DeleteLog(ctx, "a")) // a missing log is not an error
	// A deleted log starts again from nothing.
	if n := res(s.Append(ctx, "a", 0, bs("new"), &store.CallRecord{ID: "c", Input: []byte("other")})).must(t); n != 1 {
		t.Fatalf("Append after DeleteLog = %d, want 1", n)
	}
	wantEntries(t, s, "a", "new")
}

func testBadArguments(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.Append(ctx, "l", -2, bs("x"), nil); err == nil {
		t.Fatal("Append at expected -2 succeeded")
	}
	if _, err := s.Append(ctx, "l", 0, bs("x"), &store.CallRecord{Input: []byte("in")}); err == nil {
		t.Fatal("Append with a call record without an id succeeded")
	}
	wantLength(t, s, "l", 0)
}

// A cancelled context fails the call and changes nothing.
func testCancelled(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Append(ctx, "l", 0, bs("x"), &store.CallRecord{ID: "c", Input: []byte("in")})
	wantIs(t, "Append with a cancelled context", err, context.Canceled)
	_, err = s.PutBlob(ctx, []byte("x"))
	wantIs(t, "PutBlob with a cancelled context", err, context.Canceled)
	err = s.PutRecord(ctx, "k", "k", []byte("x"))
	wantIs(t, "PutRecord with a cancelled context", err, context.Canceled)
	_, err = s.Read(ctx, "l", 0, 0)
	wantIs(t, "Read with a cancelled context", err, context.Canceled)
	wantLength(t, s, "l", 0)
	_, err = s.GetCall(t.Context(), "l", "c")
	wantIs(t, "GetCall after a cancelled Append", err, store.ErrNotFound)
	_, err = s.GetRecord(t.Context(), "k", "k")
	wantIs(t, "GetRecord after a cancelled PutRecord", err, store.ErrNotFound)
}

// Slices are copied in and out: changing one afterwards changes nothing stored.
func testNoAliasing(t *testing.T, s store.Store) {
	ctx := t.Context()
	blob := []byte("blob")
	h := res(s.PutBlob(ctx, blob)).must(t)
	blob[0] = 'X'
	got := res(s.GetBlob(ctx, h)).must(t)
	if string(got) != "blob" {
		t.Fatalf("blob changed with the caller's slice: %q", got)
	}
	got[0] = 'Y'
	if got := res(s.GetBlob(ctx, h)).must(t); string(got) != "blob" {
		t.Fatalf("blob changed with a returned slice: %q", got)
	}

	rec := []byte("rec")
	ok(t, s.PutRecord(ctx, "k", "a", rec))
	rec[0] = 'X'
	stored, _, err := s.PutRecordIfAbsent(ctx, "k", "a", nil)
	ok(t, err)
	stored[0] = 'Y'
	fresh := []byte("new")
	created, _, err := s.PutRecordIfAbsent(ctx, "k", "b", fresh)
	ok(t, err)
	fresh[0] = 'X'
	created[0] = 'Y'
	got = res(s.GetRecord(ctx, "k", "a")).must(t)
	if string(got) != "rec" {
		t.Fatalf("record changed with a caller's slice: %q", got)
	}
	got[0] = 'Y'
	if got := res(s.GetRecord(ctx, "k", "a")).must(t); string(got) != "rec" {
		t.Fatalf("record changed with a returned slice: %q", got)
	}
	if got := res(s.GetRecord(ctx, "k", "b")).must(t); string(got) != "new" {
		t.Fatalf("PutRecordIfAbsent's record changed with a caller's slice: %q", got)
	}

	entries := bs("e1", "e2")
	call := &store.CallRecord{ID: "c", Input: []byte("in"), Result: []byte("out")}
	res(s.Append(ctx, "l", 0, entries, call)).must(t)
	entries[0][0] = 'X'
	entries[1] = []byte("replaced")
	call.Input[0], call.Result[0] = 'X', 'X'
	es := res(s.Read(ctx, "l", 0, 0)).must(t)
	es[0].Data[0] = 'Y'
	c := res(s.GetCall(ctx, "l", "c")).must(t)
	c.Input[0], c.Result[0] = 'Y', 'Y'
	_, err = s.Append(ctx, "l", store.Any, nil, &store.CallRecord{ID: "c", Input: []byte("in")})
	var exists *store.CallExistsError
	if !errors.As(err, &exists) {
		t.Fatalf("retry: %v, want a *CallExistsError", err)
	}
	exists.Record.Result[0] = 'Y'
	wantEntries(t, s, "l", "e1", "e2")
	wantCall(t, s, "l", store.CallRecord{ID: "c", Input: []byte("in"), Result: []byte("out"), Revision: 2})
}

// Any bytes, of any length, round-trip.
func testBytes(t *testing.T, s store.Store) {
	ctx := t.Context()
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	h := res(s.PutBlob(ctx, big)).must(t)
	if got := res(s.GetBlob(ctx, h)).must(t); !bytes.Equal(got, big) {
		t.Fatal("a 1 MiB blob did not round-trip")
	}
	ok(t, s.PutRecord(ctx, "k", "all", all))
	if got := res(s.GetRecord(ctx, "k", "all")).must(t); !bytes.Equal(got, all) {
		t.Fatalf("record bytes did not round-trip: %x", got)
	}
	res(s.Append(ctx, "l", 0, [][]byte{all, nil, {}, big}, &store.CallRecord{ID: "c", Input: all, Result: big})).must(t)
	es := res(s.Read(ctx, "l", 0, 0)).must(t)
	if len(es) != 4 || !bytes.Equal(es[0].Data, all) || es[1].Data == nil || len(es[1].Data) != 0 ||
		es[2].Data == nil || len(es[2].Data) != 0 || !bytes.Equal(es[3].Data, big) {
		t.Fatal("entry bytes did not round-trip (or an empty entry came back nil)")
	}
	c := res(s.GetCall(ctx, "l", "c")).must(t)
	if !bytes.Equal(c.Input, all) || !bytes.Equal(c.Result, big) {
		t.Fatal("call record bytes did not round-trip")
	}
}

// testWatch: a store that is a Watcher announces the appends to owner logs
// (or asks for a catch-up after them); a watcher that reads from its last
// position on every call sees every entry once, in order; appends to
// other logs are not announced by name. The feed stops with its context.
func testWatch(t *testing.T, s store.Store) {
	w, isW := s.(store.Watcher)
	if !isW {
		t.Logf("%T announces no appends: its subscriptions are only its process's", s)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const log = store.FeedPrefix + "project/p/watched"
	var mu sync.Mutex
	var seen []string
	var bad []string
	pos := int64(0)
	got := make(chan struct{}, 1)
	ok(t, w.Watch(ctx, func(name string, n int64) {
		if name != "" && name != log {
			bad = append(bad, name)
			return
		}
		es, err := s.Read(ctx, log, pos, 0)
		if err != nil {
			return
		}
		mu.Lock()
		for _, e := range es {
			seen = append(seen, string(e.Data))
			pos = e.Seq
		}
		mu.Unlock()
		select {
		case got <- struct{}{}:
		default:
		}
	}))
	// The feed may need a moment to start listening; a catch-up after it
	// has makes up for what it missed before.
	var want []string
	for k := range 20 {
		d := fmt.Sprintf("a%d", k)
		res(s.Append(ctx, log, store.Any, bs(d), nil)).must(t)
		want = append(want, d)
		res(s.Append(ctx, "session/elsewhere", store.Any, bs(d), nil)).must(t)
	}
	deadline := time.After(15 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n >= len(want) {
			break
		}
		select {
		case <-got:
		case <-deadline:
			t.Fatalf("watcher saw %d of %d entries", n, len(want))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, want) {
		t.Fatalf("watcher saw %q, want %q", seen, want)
	}
	if len(bad) > 0 {
		t.Fatalf("announced logs outside %s: %q", store.FeedPrefix, bad)
	}
}
