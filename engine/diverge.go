package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/attune-dev/attune/session"
)

// Divergence is one way a replayed step differs from what the session
// recorded (R3.10): its outcome (status, refusal, error, result,
// diagnostics, continuation), the notes it emitted, or an answer of the
// host it needed that the journal lacks.
type Divergence struct {
	// Entry is the index of the step's entry in the journal (from 0).
	Entry int `json:"entry"`
	// Step names the step: "turn-begin", "tool fs/read", "method tasks.create"...
	Step   string `json:"step"`
	Turn   int    `json:"turn,omitempty"`
	Round  int    `json:"round,omitempty"`
	CallID string `json:"call_id,omitempty"`
	// Field is what differs: status, reason, refused_by, error, result,
	// diagnostics, continue, notes, delivery (an answer the journal lacks)
	// or replayed (the step could not be re-run).
	Field    string `json:"field"`
	Recorded string `json:"recorded"`
	Replayed string `json:"replayed"`
}

func (d Divergence) String() string {
	where := fmt.Sprintf("journal entry %d", d.Entry)
	if d.Turn > 0 {
		where += ", turn " + strconv.Itoa(d.Turn)
		if d.Round > 0 {
			where += " round " + strconv.Itoa(d.Round)
		}
	}
	return fmt.Sprintf("%s (%s): %s: recorded %s, replayed %s", d.Step, where, d.Field, d.Recorded, d.Replayed)
}

// stepOutcome is what a step came to, recorded or replayed, in the terms
// the two are compared in.
type stepOutcome struct {
	Status                   Status
	Reason, RefusedBy, Error string
	// Code is the code of the step's error (Entry.Code).
	Code        string
	Result      any
	Diagnostics []string
	Continue    bool
}

// isStep reports whether a journal entry is a step a replay re-runs.
func isStep(en session.Entry) bool {
	switch en.Type {
	case session.TurnBegin, session.RoundBegin, session.RoundEnd, session.TurnEnd,
		session.Tool, session.Method, session.Command:
		return true
	}
	return false
}

// stepName names a step for a divergence report.
func stepName(en session.Entry) string {
	switch en.Type {
	case session.Tool:
		return "tool " + en.Path
	case session.Method:
		return "method " + en.Owner + "." + en.Name
	case session.Command:
		return "command " + en.Name
	}
	return en.Type
}

// recorded is the outcome a step entry holds; ok is false for an entry
// written before outcomes were journaled (nothing to compare).
func recorded(en session.Entry) (stepOutcome, bool) {
	if en.Status == "" {
		return stepOutcome{}, false
	}
	o := stepOutcome{Status: en.Status, Reason: en.Reason, RefusedBy: en.RefusedBy, Error: en.Error, Code: en.Code,
		Result: en.Result, Diagnostics: en.Diagnostics, Continue: en.Continue}
	if (en.Type == session.TurnBegin || en.Type == session.RoundBegin) && en.Status == StatusOK && en.Error != "" {
		o.Status = StatusFailed // the boundary opened and one of its hooks threw
	}
	return o, true
}

func boundaryOutcome(r BoundaryResult) stepOutcome {
	return stepOutcome{Status: r.Status, Reason: r.Reason, Error: r.Error, Code: errCode(r.Err), Continue: r.Continue}
}

// compareStep lists how a replayed step differs from its entry. notes are
// the notes the journal recorded for it, got those the replay emitted.
func compareStep(k int, en session.Entry, got stepOutcome, rec []session.Note, notes []session.Note, missing []string, withNotes bool) []Divergence {
	var out []Divergence
	add := func(field, want, have string) {
		out = append(out, Divergence{Entry: k, Step: stepName(en), Turn: en.Turn, Round: en.Round, CallID: en.CallID,
			Field: field, Recorded: want, Replayed: have})
	}
	for _, m := range missing {
		add("delivery", "no answer", "asked for "+m)
	}
	want, ok := recorded(en)
	if ok {
		if want.Status != got.Status {
			add("status", string(want.Status), string(got.Status))
		}
		// a script's text as the journal holds it: JSON, where a byte that
		// is not UTF-8 became U+FFFD
		got.Reason, got.Error = journalText(got.Reason), journalText(got.Error)
		if got.Diagnostics != nil {
			got.Diagnostics = slices.Clone(got.Diagnostics)
			for k, d := range got.Diagnostics {
				got.Diagnostics[k] = journalText(d)
			}
		}
		if want.Reason != got.Reason {
			add("reason", quoteOrNone(want.Reason), quoteOrNone(got.Reason))
		}
		if (en.Type == session.Tool || en.Type == session.Method) && want.RefusedBy != got.RefusedBy {
			add("refused_by", quoteOrNone(want.RefusedBy), quoteOrNone(got.RefusedBy))
		}
		if want.Error != got.Error && !(hostCancelled(want.Code) && stopped(got.Code)) {
			add("error", quoteOrNone(want.Error), quoteOrNone(got.Error))
		}
		if en.Type == session.Tool || en.Type == session.Method {
			if a, b := plainJSON(want.Result), plainJSON(got.Result); a != b {
				add("result", a, b)
			}
		}
		if en.Type == session.Tool && !slices.Equal(want.Diagnostics, got.Diagnostics) {
			add("diagnostics", plainJSON(want.Diagnostics), plainJSON(got.Diagnostics))
		}
		if en.Type == session.RoundEnd && want.Continue != got.Continue {
			add("continue", strconv.FormatBool(want.Continue), strconv.FormatBool(got.Continue))
		}
	}
	if withNotes {
		if a, b := noteList(rec), noteList(notes); a != b {
			add("notes", a, b)
		}
	}
	return out
}

// stepNotes are the notes the journal recorded for the step entry at k,
// whose window (the entries since the previous step) is win: those
// emitted under the step's call id or a call nested in it.
func stepNotes(win []session.Entry, en session.Entry) []session.Note {
	var out []session.Note
	for _, w := range win {
		if w.Type == session.Emit && w.Note != nil && under(w.CallID, en.CallID) {
			out = append(out, *w.Note)
		}
	}
	return out
}

// under reports whether call id id is step or a call nested in it.
func under(id, step string) bool {
	if id == "" || step == "" {
		return id == step
	}
	if !strings.HasPrefix(id, step) {
		return false
	}
	return len(id) == len(step) || id[len(step)] == ':' || id[len(step)] == '/'
}

func noteList(ns []session.Note) string {
	if len(ns) == 0 {
		return "no notes"
	}
	parts := make([]string, len(ns))
	for k, n := range ns {
		parts[k] = fmt.Sprintf("%s %q (%s)", n.Kind, journalText(n.Text), n.Program)
	}
	return strings.Join(parts, ", ")
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return strconv.Quote(s)
}

// plainJSON is the comparable text of plain data (map keys sorted).
func plainJSON(v any) string {
	if v == nil {
		return "nothing"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// hostCancelled reports whether a recorded step's error code is that of a
// step the host's ctx ended (cancelled, or past its deadline) while it
// ran. When the host gave up is not a value the journal holds, so its
// replay, which is ended by whatever ends it first (its budget, most
// often), matches it when it was stopped too (stopped), whatever the cause
// and wherever it stopped.
func hostCancelled(code string) bool { return Code(code) == CodeCancelled }

// stopped reports whether a replayed step's error code says it was
// stopped rather than failed: its ctx ended, or its time budget did.
func stopped(code string) bool { return Code(code) == CodeCancelled || Code(code) == CodeBudget }

// journalText is s as the journal gives it back: encoding/json writes
// each byte that is not UTF-8 as U+FFFD, as ranging over s reads it.
func journalText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}
