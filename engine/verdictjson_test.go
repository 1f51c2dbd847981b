package engine

import (
	"encoding/json"
	"testing"
)

// The JSON of an outcome and a boundary result carries the verdict, the
// halt and a replaced result (attune serve's protocol).
func TestVerdictHaltJSON(t *testing.T) {
	o := Outcome{Status: StatusOK, Result: "r", Verdict: VerdictAsk, VerdictReason: "why", Halt: &Halt{Reason: "stop", At: "p.lua:3"}, Replaced: true}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"diagnostics":[],"halt":{"at":"p.lua:3","reason":"stop"},"replaced":true,"result":"r","status":"ok","verdict":"ask","verdict_reason":"why"}`
	if string(b) != want {
		t.Errorf("outcome:\n got %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(BoundaryResult{Status: StatusOK, Halt: &Halt{Reason: "stop"}})
	if want := `{"continue":false,"halt":{"reason":"stop"},"notes":[],"status":"ok"}`; string(b) != want {
		t.Errorf("boundary:\n got %s\nwant %s", b, want)
	}
}
