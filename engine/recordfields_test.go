package engine

import "testing"

// The call and outcome records are filled by the places of their fields
// (luabind.SetFieldAt): each place names the field the list has there.
func TestRecordFieldPlaces(t *testing.T) {
	for _, c := range []struct {
		fields []string
		at     int
		name   string
	}{
		{callFields, callArgs, "args"}, {callFields, callAttempt, "attempt"}, {callFields, callCallID, "call_id"},
		{callFields, callInstance, "instance"}, {callFields, callMarks, "marks"}, {callFields, callPath, "path"},
		{outcomeFields, outDiagnostics, "diagnostics"}, {outcomeFields, outError, "error"}, {outcomeFields, outReason, "reason"},
		{outcomeFields, outRefusedBy, "refused_by"}, {outcomeFields, outResult, "result"}, {outcomeFields, outStatus, "status"},
	} {
		if c.fields[c.at] != c.name {
			t.Errorf("place %d of %v is %q, not %q", c.at, c.fields, c.fields[c.at], c.name)
		}
	}
}
