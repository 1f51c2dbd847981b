package scenario

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/attune-dev/attune/luabind"
)

// Match reports whether got matches want (docs/scenarios.md, result): a map
// matches as a subset (every key it lists is present in got and matches),
// a list element by element and of the same length, scalars are equal,
// numbers by value whatever their Go type (TOML 3 matches Lua 3.0), and an
// empty map and an empty list match each other.
func Match(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		if len(w) == 0 && isEmptyList(got) {
			return true
		}
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !Match(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		if len(w) == 0 && isEmptyMap(got) {
			return true
		}
		g, ok := asList(got)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !Match(w[i], g[i]) {
				return false
			}
		}
		return true
	case []string:
		l := make([]any, len(w))
		for i, s := range w {
			l[i] = s
		}
		return Match(l, got)
	case nil:
		return got == nil
	}
	if wn, ok := luabind.ToNumber(want); ok {
		gn, ok := luabind.ToNumber(got)
		return ok && (wn == gn || (math.IsNaN(wn) && math.IsNaN(gn)))
	}
	return want == got
}

func isEmptyList(v any) bool {
	l, ok := asList(v)
	return ok && len(l) == 0
}

func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

func asList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		l := make([]any, len(x))
		for i, s := range x {
			l[i] = s
		}
		return l, true
	}
	return nil, false
}

// Format renders plain data compactly for reports: maps with sorted keys
// as {k = v}, lists as [a, b], strings quoted, nil as nil.
func Format(v any) string {
	var b strings.Builder
	format(&b, v, 0)
	return b.String()
}

const maxFormatDepth = 20

func format(b *strings.Builder, v any, depth int) {
	if depth > maxFormatDepth {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("nil")
	case string:
		b.WriteString(strconv.Quote(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteString(" = ")
			format(b, x[k], depth+1)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			format(b, e, depth+1)
		}
		b.WriteByte(']')
	case []string:
		l, _ := asList(x)
		format(b, l, depth)
	default:
		if n, ok := luabind.ToNumber(v); ok {
			b.WriteString(strconv.FormatFloat(n, 'g', -1, 64))
			return
		}
		fmt.Fprintf(b, "%v", v)
	}
}

// Mismatch is one expectation that did not hold.
type Mismatch struct {
	Key  string // the expectation key: result, notes, floor ...
	Want string
	Got  string
	// Line is the line of the expect key in the scenario file (of the
	// step when the key is not written); set by Run.
	Line int
	// Expected and Observed are the plain data compared, for result and
	// state (nil otherwise).
	Expected, Observed any
	// Diff lists where composite data departs, one line per difference
	// (see Diff); empty for scalars.
	Diff []string
}

// maxShown bounds a want or got value in a mismatch line that has a diff
// below it.
const maxShown = 160

func (m Mismatch) String() string {
	want, got := m.Want, m.Got
	if len(m.Diff) > 0 {
		want, got = shorten(want), shorten(got)
	}
	return fmt.Sprintf("%s: want %s, got %s", m.Key, want, got)
}

func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	return s[:maxShown] + "..."
}

// dataMismatch is a mismatch of plain data, with its diff.
func dataMismatch(key string, want, got any) Mismatch {
	return Mismatch{Key: key, Want: Format(want), Got: Format(got), Expected: want, Observed: got, Diff: Diff(want, got)}
}

// Got is what one step returned, as the expectations read it.
type Got struct {
	Status      string
	Error       string
	Reason      string
	RefusedBy   string
	Hidden      bool
	Result      any
	Diagnostics []string
	Diverged    []string
	Notes       []NoteGot
	Continue    bool
	Rounds      int
	CoreCalls   int
	HostReads   int
	FloorRan    bool
	FloorArgs   any
	FloorMarks  []string
	Revision    int64
	HasRevision bool
	State       any
	HasState    bool
	Verdict     string
	Halted      bool
	HaltReason  string
}

// NoteGot is a note a step returned.
type NoteGot struct {
	ID   string
	Kind string
	Text string
}

// Check returns every expectation of e that g does not meet, in the order
// of the expectation table. The status is checked by the caller (a step
// without expect.status must be ok).
func (e *Expect) Check(g *Got) []Mismatch {
	var out []Mismatch
	add := func(key, want, got string) { out = append(out, Mismatch{Key: key, Want: want, Got: got}) }
	if e.Status != "" && e.Status != g.Status {
		add("status", e.Status, statusText(g))
	}
	if e.HasResult && !Match(e.Result, g.Result) {
		out = append(out, dataMismatch("result", e.Result, g.Result))
	}
	if e.HasError && !containsAll(g.Error, e.Error) {
		add("error", "an error containing "+quoteAll(e.Error), orNone(g.Error, "no error"))
	}
	if e.HasReason && !containsAll(g.Reason, e.Reason) {
		add("reason", "a reason containing "+quoteAll(e.Reason), orNone(g.Reason, "no reason"))
	}
	if e.RefusedBy != nil && *e.RefusedBy != g.RefusedBy {
		add("refused_by", *e.RefusedBy, orNone(g.RefusedBy, "none"))
	}
	if e.Hidden != nil && *e.Hidden != g.Hidden {
		add("hidden", strconv.FormatBool(*e.Hidden), strconv.FormatBool(g.Hidden))
	}
	if e.HasDiags && !diagsMatch(e.Diagnostics, g.Diagnostics) {
		add("diagnostics", Format(e.Diagnostics), Format(g.Diagnostics))
	}
	if e.HasDiverged && !diagsMatch(e.Diverged, g.Diverged) {
		add("diverged", Format(e.Diverged), Format(g.Diverged))
	}
	if e.HasNotes && !notesMatch(e.Notes, g.Notes) {
		out = append(out, Mismatch{Key: "notes", Want: formatNoteWants(e.Notes), Got: formatNotes(g.Notes), Diff: notesDiff(e.Notes, g.Notes)})
	}
	if gv := cmp.Or(g.Verdict, "none"); e.Verdict != nil && *e.Verdict != gv {
		add("verdict", *e.Verdict, gv)
	}
	if e.Halt != nil && (!g.Halted || !strings.Contains(g.HaltReason, *e.Halt)) {
		add("halt", "a halt with a reason containing "+strconv.Quote(*e.Halt), haltText(g))
	}
	if e.NoHalt && g.Halted {
		add("halt", "no halt", haltText(g))
	}
	if e.Continue != nil && *e.Continue != g.Continue {
		add("continue", strconv.FormatBool(*e.Continue), strconv.FormatBool(g.Continue))
	}
	if e.Rounds != nil && *e.Rounds != g.Rounds {
		add("rounds", strconv.Itoa(*e.Rounds), strconv.Itoa(g.Rounds))
	}
	if e.CoreCalls != nil && *e.CoreCalls != g.CoreCalls {
		add("core_calls", strconv.Itoa(*e.CoreCalls), strconv.Itoa(g.CoreCalls))
	}
	if e.HostReads != nil && *e.HostReads != g.HostReads {
		add("host_reads", strconv.Itoa(*e.HostReads), strconv.Itoa(g.HostReads))
	}
	if e.Floor != nil && !floorMatch(e.Floor, g) {
		add("floor", formatFloorWant(e.Floor), formatFloorGot(g))
	}
	if e.Revision != nil {
		switch {
		case !g.HasRevision:
			add("revision", strconv.FormatInt(*e.Revision, 10), "no revision")
		case *e.Revision != g.Revision:
			add("revision", strconv.FormatInt(*e.Revision, 10), strconv.FormatInt(g.Revision, 10))
		}
	}
	if e.HasState {
		switch {
		case !g.HasState:
			add("state", Format(e.State), "no state")
		case !Match(e.State, g.State):
			out = append(out, dataMismatch("state", e.State, g.State))
		}
	}
	return out
}

func haltText(g *Got) string {
	if !g.Halted {
		return "no halt"
	}
	return "a halt: " + strconv.Quote(g.HaltReason)
}

func statusText(g *Got) string {
	switch {
	case g.Error != "":
		return g.Status + " (" + g.Error + ")"
	case g.Reason != "":
		return g.Status + " (" + g.Reason + ")"
	}
	return g.Status
}

// containsAll reports whether s is not empty and contains every text.
func containsAll(s string, texts []string) bool {
	if s == "" {
		return false
	}
	for _, t := range texts {
		if !strings.Contains(s, t) {
			return false
		}
	}
	return true
}

func quoteAll(texts []string) string {
	q := make([]string, len(texts))
	for i, t := range texts {
		q[i] = strconv.Quote(t)
	}
	return strings.Join(q, " and ")
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return strconv.Quote(s)
}

func diagsMatch(want, got []string) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			return false
		}
	}
	return true
}

func notesMatch(want []NoteWant, got []NoteGot) bool {
	if len(want) != len(got) {
		return false
	}
	for i, w := range want {
		if w.Kind != "" && w.Kind != got[i].Kind {
			return false
		}
		if w.HasText && !strings.Contains(got[i].Text, w.Text) {
			return false
		}
	}
	return true
}

// notesDiff lists where notes depart from the wanted ones, by position
// (counted from 1).
func notesDiff(want []NoteWant, got []NoteGot) []string {
	var out []string
	if len(want) != len(got) {
		out = append(out, fmt.Sprintf(": want %d notes, got %d", len(want), len(got)))
	}
	for i := 0; i < len(want) && i < len(got); i++ {
		w, g := want[i], got[i]
		if w.Kind != "" && w.Kind != g.Kind {
			out = append(out, fmt.Sprintf("[%d].kind: want %q, got %q", i+1, w.Kind, g.Kind))
		}
		if w.HasText && !strings.Contains(g.Text, w.Text) {
			out = append(out, fmt.Sprintf("[%d].text: want a text containing %q, got %q", i+1, w.Text, g.Text))
		}
	}
	if len(out) > maxDiffLines {
		out = append(out[:maxDiffLines], fmt.Sprintf("... and %d more", len(out)-maxDiffLines))
	}
	return out
}

func formatNoteWants(ns []NoteWant) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		var f []string
		if n.Kind != "" {
			f = append(f, "kind = "+strconv.Quote(n.Kind))
		}
		if n.HasText {
			f = append(f, "text containing "+strconv.Quote(n.Text))
		}
		parts[i] = "{" + strings.Join(f, ", ") + "}"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func formatNotes(ns []NoteGot) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("{kind = %q, text = %q}", n.Kind, n.Text)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func floorMatch(w *FloorWant, g *Got) bool {
	if !w.Ran {
		return !g.FloorRan
	}
	if !g.FloorRan {
		return false
	}
	if w.HasArgs && !Match(w.Args, g.FloorArgs) {
		return false
	}
	if w.HasMarks {
		a := append([]string(nil), w.Marks...)
		b := append([]string(nil), g.FloorMarks...)
		sort.Strings(a)
		sort.Strings(b)
		if strings.Join(a, "\x00") != strings.Join(b, "\x00") || len(a) != len(b) {
			return false
		}
	}
	return true
}

func formatFloorWant(w *FloorWant) string {
	if !w.Ran {
		return "the floor never ran"
	}
	var f []string
	if w.HasArgs {
		f = append(f, "args = "+Format(w.Args))
	}
	if w.HasMarks {
		f = append(f, "marks = "+Format(w.Marks)+" (any order)")
	}
	if len(f) == 0 {
		return "the floor ran"
	}
	return "the floor saw {" + strings.Join(f, ", ") + "}"
}

func formatFloorGot(g *Got) string {
	if !g.FloorRan {
		return "the floor never ran"
	}
	marks := g.FloorMarks
	if marks == nil {
		marks = []string{}
	}
	return "the floor saw {args = " + Format(g.FloorArgs) + ", marks = " + Format(marks) + "}"
}
