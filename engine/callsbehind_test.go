package engine

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/attune-dev/attune/store"
)

// R5.4, R5.6: a query outside a turn records its result under its call id
// in memory and writes nothing to the store: its call id is recognised at
// once (same input: the recorded result, even after the owner moved on;
// other input: a call-id failure). Inside a turn the record is in the
// store when the call returns (a replay of the journal needs it).
func TestQueryRecordBehind(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"counter\"]\n", map[string]string{"counter.lua": benchOwnerLua})
	i := start(t, e, "a", "main")
	log := ownerLog(ScopeProject, "default", "counter")
	get := MethodCall{Owner: "counter", Method: "get", CallID: "q1"}
	if out := mustOK(t, i.Method(ctx, get)); out.Result != 0.0 {
		t.Fatalf("first query: %+v", out)
	}
	mustOK(t, i.Method(ctx, MethodCall{Owner: "counter", Method: "add", Input: map[string]any{"by": 2.0}}))
	if out := mustOK(t, i.Method(ctx, get)); out.Result != 0.0 {
		t.Fatalf("the query retried under its call id read a newer fold: %+v", out)
	}
	other := get
	other.Input = map[string]any{"x": 1.0}
	if out := i.Method(ctx, other); out.Status != StatusFailed || !strings.Contains(out.Error, "reused with a different input") {
		t.Fatalf("another input under the same call id: %+v", out)
	}
	if _, err := e.Store().GetCall(ctx, log, "q1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a query outside a turn wrote its record: %v", err)
	}
	if rec, ok := e.calls.get(log, "q1"); !ok || string(rec.Result) != "0" || rec.Revision != 0 {
		t.Fatalf("the record kept: %+v %v", rec, ok)
	}

	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	mustOK(t, i.Method(ctx, MethodCall{Owner: "counter", Method: "get", CallID: "q2"}))
	if _, err := e.Store().GetCall(ctx, log, "q2"); err != nil {
		t.Fatalf("a query in a turn is not recorded when it returns: %v", err)
	}
	if _, err := e.Store().GetCall(ctx, log, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
}

// The records kept are bounded: the oldest go first.
func TestQueryRecordsBounded(t *testing.T) {
	c := newQueryRecords()
	for k := range maxQueryRecords + 10 {
		if err := c.add("l", store.CallRecord{ID: strconv.Itoa(k), Input: []byte("i")}); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.recs) != maxQueryRecords {
		t.Fatalf("%d records kept", len(c.recs))
	}
	if _, ok := c.get("l", "9"); ok {
		t.Fatal("an old record is still kept")
	}
	if _, ok := c.get("l", "10"); !ok {
		t.Fatal("a newer record was dropped")
	}
	if _, ok := c.get("l", strconv.Itoa(maxQueryRecords+9)); !ok {
		t.Fatal("the newest record was dropped")
	}
}
