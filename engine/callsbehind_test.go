package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"attune/store"
)

// R5.4, R5.6: a query outside a turn records its result behind the call:
// its call id is recognised at once (same input: the recorded result, even
// after the owner moved on; other input: a call-id failure), and the record
// reaches the store. Inside a turn the record is in the store when the
// call returns (a replay of the journal needs it).
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
	e.calls.flush()
	if rec, err := e.Store().GetCall(ctx, log, "q1"); err != nil || string(rec.Result) != "0" {
		t.Fatalf("the record written behind: %+v %v", rec, err)
	}
	if out := mustOK(t, i.Method(ctx, get)); out.Result != 0.0 {
		t.Fatalf("the query retried from the store: %+v", out)
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
