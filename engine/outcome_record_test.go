package engine

import (
	"reflect"
	"testing"
)

// R4.11: the pooled Lua outcome record a handler sees is Outcome.Record,
// field for field, fresh or recycled (no field left over from the
// outcome it held before).
func TestOutcomeRecordShape(t *testing.T) {
	e := testEngine(t, counterCfg, map[string]string{"counter.lua": counterLua})
	i := start(t, e, "a", "main")
	r := i.cur.Load().regs[0]
	for _, o := range []Outcome{
		{Status: StatusOK, Result: map[string]any{"n": 1.0, "l": []any{"x"}}, Diagnostics: []string{"slow"}},
		{Status: StatusRefused, Reason: "no", RefusedBy: "guard", Hidden: true, CallID: "c1"},
		{Status: StatusOK},
		{Status: StatusFailed, Error: "boom", Result: "partial", Diagnostics: []string{"d"}},
		{Status: StatusOK, Result: []any{}},
	} {
		t.Run(string(o.Status), func(t *testing.T) {
			rec := outcomeRecord(r, o)
			got, err := r.st.FromLua(rec)
			r.outs.Put(rec) // the next outcome reuses it
			if err != nil {
				t.Fatal(err)
			}
			if want := o.Record(); !reflect.DeepEqual(got, want) {
				t.Fatalf("Lua record\n got %#v\nwant %#v", got, want)
			}
		})
	}
}
