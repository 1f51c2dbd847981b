package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/attune-dev/attune/store"
)

// An owner's command appends its actions at the revision its handler
// observed, with the call record that makes a retry harmless.
func Example() {
	ctx := context.Background()
	s, err := store.Open(ctx, "memory", "") // config.ParseStore reads engine.store into these
	if err != nil {
		panic(err)
	}
	defer s.Close()
	const log = "owner/session/s1/tasks"

	// The handler observed revision 0.
	call := &store.CallRecord{ID: "call-1", Input: []byte(`{"title":"tests"}`), Result: []byte(`"t1"`)}
	n, err := s.Append(ctx, log, 0, [][]byte{[]byte(`{"type":"create","id":"t1"}`)}, call)
	fmt.Println(n, err)

	// Another caller that also observed revision 0 is too late (R5.5).
	_, err = s.Append(ctx, log, 0, [][]byte{[]byte(`{"type":"create","id":"t2"}`)}, nil)
	fmt.Println(errors.Is(err, store.ErrStale))

	// The first call, retried, gets its recorded result back (R5.6).
	_, err = s.Append(ctx, log, 0, [][]byte{[]byte(`{"type":"create","id":"t1"}`)}, call)
	var done *store.CallExistsError
	if errors.As(err, &done) {
		fmt.Printf("already done at revision %d: %s\n", done.Record.Revision, done.Record.Result)
	}

	// Reusing its id for another input is an error.
	_, err = s.Append(ctx, log, store.Any, nil, &store.CallRecord{ID: "call-1", Input: []byte(`{"title":"other"}`)})
	fmt.Println(errors.Is(err, store.ErrCallConflict))

	es, _ := s.Read(ctx, log, 0, 0)
	for _, e := range es {
		fmt.Printf("%d %s\n", e.Seq, e.Data)
	}
	// Output:
	// 1 <nil>
	// true
	// already done at revision 1: "t1"
	// true
	// 1 {"type":"create","id":"t1"}
}
