package engine

import "encoding/json"

// The JSON form of the engine's results is the one `attune serve` sends:
// snake_case names, and fields that do not apply absent (never empty
// strings or zero values, R4.11). "code" is the Code of Err.

func errCode(err error) string { return string(CodeOf(err)) }

func putString(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

// Record is the outcome as plain data, the shape a handler sees it in
// (docs/forms.md, Records; the pooled Lua record is checked against it):
// {status, result?, diagnostics (ok only, [] when none), reason?,
// refused_by?, error?}. Fields that do not apply are absent (R4.11).
func (o Outcome) Record() map[string]any {
	m := make(map[string]any, 4)
	m["status"] = string(o.Status)
	if o.Result != nil {
		m["result"] = o.Result
	}
	if o.Status == StatusOK {
		d := make([]any, len(o.Diagnostics))
		for k, s := range o.Diagnostics {
			d[k] = s
		}
		m["diagnostics"] = d
	}
	putString(m, "reason", o.Reason)
	putString(m, "refused_by", o.RefusedBy)
	putString(m, "error", o.Error)
	putString(m, "code", string(outcomeCode(o)))
	return m
}

// MarshalJSON: Record, with result only when ok, diagnostics when not ok
// and there are some, and code?, hidden?, call_id?.
func (o Outcome) MarshalJSON() ([]byte, error) {
	m := o.Record()
	if o.Status != StatusOK {
		delete(m, "result")
		if len(o.Diagnostics) > 0 {
			m["diagnostics"] = o.Diagnostics
		}
	}
	delete(m, "code") // over the wire, the code of the settled Err, as always
	putString(m, "code", errCode(o.Err))
	if o.Hidden {
		m["hidden"] = true
	}
	putString(m, "call_id", o.CallID)
	putString(m, "verdict", o.Verdict)
	putString(m, "verdict_reason", o.VerdictReason)
	if o.Halt != nil {
		m["halt"] = haltJSON(o.Halt)
	}
	if o.Replaced {
		m["replaced"] = true
	}
	return json.Marshal(m)
}

func haltJSON(h *Halt) map[string]any {
	m := map[string]any{"reason": h.Reason}
	putString(m, "at", h.At)
	return m
}

// MarshalJSON: {status, result?, reason?, refused_by?, error?, code?,
// revision, call_id?, diagnostics?}.
func (o MethodOutcome) MarshalJSON() ([]byte, error) {
	m := map[string]any{"status": string(o.Status), "revision": o.Revision}
	if o.Status == StatusOK && o.Result != nil {
		m["result"] = o.Result
	}
	putString(m, "reason", o.Reason)
	putString(m, "refused_by", o.RefusedBy)
	putString(m, "error", o.Error)
	putString(m, "code", errCode(o.Err))
	putString(m, "call_id", o.CallID)
	if len(o.Diagnostics) > 0 {
		m["diagnostics"] = o.Diagnostics
	}
	return json.Marshal(m)
}

func notesJSON(ns []Note) []Note {
	if ns == nil {
		return []Note{}
	}
	return ns
}

// MarshalJSON: {status, reason?, refused_by?, error?, code?, turn?,
// round?, notes, continue, loop_end?}.
func (r BoundaryResult) MarshalJSON() ([]byte, error) {
	m := map[string]any{"status": string(r.Status), "notes": notesJSON(r.Notes), "continue": r.Continue}
	putString(m, "reason", r.Reason)
	putString(m, "refused_by", r.RefusedBy)
	putString(m, "error", r.Error)
	putString(m, "code", errCode(r.Err))
	if r.Turn != 0 {
		m["turn"] = r.Turn
	}
	if r.Round != 0 {
		m["round"] = r.Round
	}
	if r.Halt != nil {
		m["halt"] = haltJSON(r.Halt)
	}
	if r.LoopEnd != nil {
		le := *r.LoopEnd
		if le.Addenda == nil {
			le.Addenda = []string{}
		}
		le.Notes = notesJSON(le.Notes)
		m["loop_end"] = le
	}
	return json.Marshal(m)
}

// MarshalJSON: {status, error?, code?, notes}.
func (r CommandResult) MarshalJSON() ([]byte, error) {
	m := map[string]any{"status": string(r.Status), "notes": notesJSON(r.Notes)}
	putString(m, "error", r.Error)
	putString(m, "code", errCode(r.Err))
	return json.Marshal(m)
}

// MarshalJSON: {notes, steps, diverged}.
func (r ReplayResult) MarshalJSON() ([]byte, error) {
	d := r.Diverged
	if d == nil {
		d = []Divergence{}
	}
	return json.Marshal(map[string]any{"notes": notesJSON(r.Notes), "steps": r.Steps, "diverged": d})
}
