// Package inspect reads a stored session back as a timeline: its turns and
// rounds, each tool call with its chain, the notes and what became of them,
// method and command calls with the owner's revision, host answers, and the
// lines behaviors printed. It is what `attune inspect` serves as a web page
// and prints as JSON (docs/inspect.md). It reads the journal through the
// engine's and session's public functions and never writes to the store.
package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/session"
)

// DefaultLimit is how many events a page holds unless asked otherwise;
// MaxLimit the most one page holds.
const (
	DefaultLimit = 500
	MaxLimit     = 5000
)

// Timeline is one session, or one page of its events.
type Timeline struct {
	Session   string     `json:"session"`
	Instances []Instance `json:"instances"`
	Summary   Summary    `json:"summary"`
	// Total is how many events the session has; Offset and Limit say which
	// of them Events holds.
	Total  int     `json:"total"`
	Offset int     `json:"offset"`
	Limit  int     `json:"limit"`
	Events []Event `json:"events"`
	// Replay is the session replayed against its pin, when asked.
	Replay *Replay `json:"replay,omitempty"`
}

// Instance is one instance of the session.
type Instance struct {
	ID      string `json:"id"`
	Bot     string `json:"bot"`
	Kind    string `json:"kind"`
	Role    string `json:"role,omitempty"`
	Parent  string `json:"parent,omitempty"`
	Entries int    `json:"entries"`
}

// Summary counts the session's events.
type Summary struct {
	Turns    int `json:"turns"`
	Rounds   int `json:"rounds"`
	Calls    int `json:"calls"`
	Refused  int `json:"refused"`
	Failed   int `json:"failed"`
	Notes    int `json:"notes"`
	Consumed int `json:"consumed"`
	Expired  int `json:"expired"`
	Methods  int `json:"methods"`
	Reads    int `json:"reads"`
	Traces   int `json:"traces"`
}

// Event kinds.
const (
	KindTurn      = "turn"
	KindTurnEnd   = "turn-end"
	KindRound     = "round"
	KindRoundEnd  = "round-end"
	KindCall      = "call"
	KindNote      = "note"
	KindMethod    = "method"
	KindCommand   = "command"
	KindRead      = "read"
	KindDelivery  = "delivery"
	KindRepin     = "repin"
	KindTrace     = "trace"
	KindUnplaced  = "unplaced" // a consumption of a note the journal never emitted
	KindOtherType = "entry"
)

// Event is one thing that happened in the session. Fields that do not
// apply are absent.
type Event struct {
	Seq      int    `json:"seq"` // its place in the session's timeline, from 0
	Instance string `json:"instance"`
	Kind     string `json:"kind"`
	Turn     int    `json:"turn,omitempty"`
	Round    int    `json:"round,omitempty"`
	CallID   string `json:"call_id,omitempty"`
	// ToolUseID is the agent's id of a call (Claude Code's tool_use_id), as
	// the harness's event carried it.
	ToolUseID string `json:"tool_use_id,omitempty"`

	// a call's path; a method's owner and name; a command's name
	Path  string `json:"path,omitempty"`
	Owner string `json:"owner,omitempty"`
	Name  string `json:"name,omitempty"`

	// a turn's input, a call's arguments, a method's input
	Input any `json:"input,omitempty"`

	Status      engine.Status `json:"status,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	RefusedBy   string        `json:"refused_by,omitempty"`
	RefusedAt   string        `json:"refused_at,omitempty"`
	Error       string        `json:"error,omitempty"`
	Result      any           `json:"result,omitempty"`
	Diagnostics []string      `json:"diagnostics,omitempty"`
	// Rev is the owner's revision after a method call.
	Rev int64 `json:"rev,omitempty"`
	// Revs are session owners' revisions (turn ends) or what a session
	// found in place (its first call).
	Revs map[string]int64 `json:"revs,omitempty"`
	// Chain is a tool call's way through the tool chain.
	Chain []Step `json:"chain,omitempty"`
	// Open: the agent was left to run the call (a hook's PreToolUse)
	// and the journal has no outcome for it yet.
	Open bool `json:"open,omitempty"`

	Note *Note `json:"note,omitempty"`

	// a read's key and the host's answer; a delivery's kind
	Key   string `json:"key,omitempty"`
	Value any    `json:"value,omitempty"`
	Kind2 string `json:"delivery,omitempty"`

	// a round end: the host asked to continue / behaviors continued
	HostContinue bool    `json:"host_continue,omitempty"`
	Continue     bool    `json:"continue,omitempty"`
	Output       *string `json:"output,omitempty"`
	Pin          string  `json:"pin,omitempty"`

	// a trace line: its level, program and text
	Level   string `json:"level,omitempty"`
	Program string `json:"program,omitempty"`
	Text    string `json:"text,omitempty"`

	step bool // a step of the journal (a boundary or a call): shown before its window
}

// Step is one step of a tool call's chain as the journal records it.
type Step struct {
	Step    string   `json:"step"` // ceiling, guards, floor, core, post, outcome
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason,omitempty"`
	At      string   `json:"at,omitempty"` // the registration ("protect.lua:12")
	Marks   []string `json:"marks,omitempty"`
	Error   string   `json:"error,omitempty"`
	Value   any      `json:"value,omitempty"`
	// Guards are each guard's verdict in pin order (the guards step), as
	// the journal records them.
	Guards []GuardVerdict `json:"guards,omitempty"`
	// Recorded says whether the journal holds this step (false: inferred
	// from the call's outcome, e.g. guards that let the call through in a
	// journal written before guards' verdicts were recorded).
	Recorded bool `json:"recorded"`
}

// GuardVerdict is what one guard made of a call: where it was registered,
// its pattern, its verdict (invoke, refuse, retry, error), its reason or
// error, the marks the call carried when it returned, and the attempt
// (from the second, when a guard's retry ran the chain again).
type GuardVerdict = session.GuardVerdict

// Note is a note and what became of it.
type Note struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Text    string `json:"text"`
	Program string `json:"program,omitempty"`
	Phase   string `json:"phase,omitempty"`
	// State: emitted (nothing took it yet), consumed (placed into the
	// model's context, or taken by the host), expired (its turn ended
	// before anything took it).
	State string `json:"state"`
	// ReachedModel is set once the note was consumed.
	ReachedModel bool `json:"reached_model"`
	// ConsumedAt names the step it was consumed at ("turn 1 round 2").
	ConsumedAt string `json:"consumed_at,omitempty"`
}

// Session is one session of a store, for the list.
type Session struct {
	Session   string     `json:"session"`
	Instances []Instance `json:"instances"`
}

// Sessions lists the sessions of a store with their instances and the
// length of each journal.
func Sessions(ctx context.Context, st engine.Store) ([]Session, error) {
	list, err := engine.ListSessions(ctx, st)
	if err != nil {
		return nil, err
	}
	out := make([]Session, 0, len(list))
	for _, s := range list {
		ss := Session{Session: s.Session, Instances: []Instance{}}
		for _, in := range s.Instances {
			n, err := engine.JournalLength(ctx, st, s.Session, in.ID)
			if err != nil {
				return nil, err
			}
			ss.Instances = append(ss.Instances, Instance{ID: in.ID, Bot: in.Bot, Kind: in.Kind, Role: in.Role, Parent: in.Parent, Entries: int(n)})
		}
		out = append(out, ss)
	}
	return out, nil
}

// Load reads a session (a session id or an instance id) and builds its
// whole timeline; Page cuts it. Each journal is read in chunks and decoded
// with its host values left as the JSON they were journaled as.
func Load(ctx context.Context, st engine.Store, id string) (*Timeline, error) {
	sess, insts, err := findSession(ctx, st, id)
	if err != nil {
		return nil, err
	}
	t := &Timeline{Session: sess, Instances: []Instance{}}
	for _, in := range insts {
		log := session.LogName(sess, in.ID)
		if n, err := st.Length(ctx, log); err == nil && len(t.Events) == 0 {
			t.Events = make([]Event, 0, n/3+n/64+256) // a call is 2 or 3 entries, a boundary 1
		}
		b := builder{t: t, inst: in.ID, notes: map[string]int{}, calls: map[string]int{}}
		from, count := len(t.Events), 0
		r := readJournal(ctx, st, sess, in.ID)
		for c := range r.chunks {
			if c.err != nil {
				r.stop()
				return nil, c.err
			}
			b.add(c.entries)
			count += len(c.entries)
			r.done(c.entries)
		}
		order(t.Events, from)
		t.Instances = append(t.Instances, Instance{ID: in.ID, Bot: in.Bot, Kind: in.Kind, Role: in.Role, Parent: in.Parent, Entries: count})
	}
	t.Total = len(t.Events)
	t.Offset, t.Limit = 0, len(t.Events)
	return t, nil
}

// readChunk is how many journal entries Load reads at a time.
const readChunk = 8192

// chunk is a run of decoded journal entries, or the error that ended the
// reading.
type chunk struct {
	entries []session.Entry
	err     error
}

// journalReader reads and decodes a journal chunk by chunk on a goroutine
// of its own, one chunk ahead of the timeline built from the last: the
// store's reads (much of the time on SQLite) and the decoding overlap the
// building. Two buffers of entries go back and forth between them.
type journalReader struct {
	chunks <-chan chunk
	free   chan []session.Entry
}

func readJournal(ctx context.Context, st engine.Store, sess, inst string) *journalReader {
	out := make(chan chunk, 1)
	r := &journalReader{chunks: out, free: make(chan []session.Entry, 2)}
	r.free <- make([]session.Entry, readChunk)
	r.free <- make([]session.Entry, readChunk)
	log := session.LogName(sess, inst)
	go func() {
		defer close(out)
		dc := newDecoder()
		for after := int64(0); ; {
			raw, err := st.Read(ctx, log, after, readChunk)
			if err != nil {
				out <- chunk{err: fmt.Errorf("session %s, instance %s: %w", sess, inst, err)}
				return
			}
			if len(raw) > 0 {
				buf := (<-r.free)[:len(raw)]
				for k := range raw {
					err := dc.decode(raw[k].Data, &buf[k])
					if err != nil {
						err = fmt.Errorf("session %s, instance %s: journal %s entry %d: %w", sess, inst, log, raw[k].Seq, err)
					} else {
						err = engine.CheckJournalEntry(sess, inst, int(raw[k].Seq), &buf[k])
					}
					if err != nil {
						out <- chunk{err: err}
						return
					}
				}
				out <- chunk{entries: buf}
			}
			if len(raw) < readChunk {
				return
			}
			after = raw[len(raw)-1].Seq
		}
	}()
	return r
}

// done gives a chunk's buffer back to the reader.
func (r *journalReader) done(buf []session.Entry) { r.free <- buf[:cap(buf)] }

// stop lets the reader's goroutine end (the caller reads no more).
func (r *journalReader) stop() {
	for c := range r.chunks {
		if c.entries != nil {
			r.done(c.entries)
		}
	}
}

// findSession finds the instances of a session id, or the instance of an
// instance id, and its session.
func findSession(ctx context.Context, st engine.Store, id string) (string, []engine.InstanceInfo, error) {
	list, err := engine.ListSessions(ctx, st)
	if err != nil {
		return "", nil, err
	}
	for _, s := range list {
		if s.Session == id {
			return s.Session, s.Instances, nil
		}
	}
	for _, s := range list {
		for _, in := range s.Instances {
			if in.ID == id {
				return s.Session, []engine.InstanceInfo{in}, nil
			}
		}
	}
	// not found: the engine's error says so and lists what the store holds
	if _, err = engine.LoadSession(ctx, st, id); err == nil {
		err = fmt.Errorf("session %q: %w", id, engine.ErrNoSession)
	}
	return "", nil, err
}

// Page returns the timeline with only the events [offset, offset+limit);
// limit <= 0 means DefaultLimit, and at most MaxLimit.
func (t *Timeline) Page(offset, limit int) *Timeline {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	offset = max(0, min(offset, len(t.Events)))
	p := *t
	p.Offset, p.Limit = offset, limit
	p.Events = t.Events[offset:min(offset+limit, len(t.Events))]
	return &p
}

// Slice returns the timeline with the events [offset, offset+limit), or
// every event from offset when limit <= 0; no bound on limit (the command
// line's --offset and --limit).
func (t *Timeline) Slice(offset, limit int) *Timeline {
	offset = max(0, min(offset, len(t.Events)))
	end := len(t.Events)
	if limit > 0 {
		end = min(offset+limit, end)
	}
	p := *t
	p.Offset, p.Limit = offset, end-offset
	if limit > 0 {
		p.Limit = limit
	}
	p.Events = t.Events[offset:end]
	return &p
}

// All returns the timeline with every event.
func (t *Timeline) All() *Timeline {
	p := *t
	p.Offset, p.Limit = 0, len(t.Events)
	return &p
}

// Build makes the timeline of a recording: each instance's journal in
// order, one instance after the other.
func Build(rec *engine.Recording) *Timeline {
	n := 0
	for _, in := range rec.Instances {
		n += len(in.Entries)
	}
	t := &Timeline{Session: rec.Session, Instances: []Instance{}, Events: make([]Event, 0, n)}
	for _, in := range rec.Instances {
		t.Instances = append(t.Instances, Instance{ID: in.ID, Bot: in.Bot, Kind: in.Kind, Role: in.Role, Parent: in.Parent, Entries: len(in.Entries)})
		b := builder{t: t, inst: in.ID, notes: map[string]int{}, calls: map[string]int{}}
		from := len(t.Events)
		b.add(in.Entries)
		order(t.Events, from)
	}
	t.Total = len(t.Events)
	t.Offset, t.Limit = 0, len(t.Events)
	return t
}

type builder struct {
	t         *Timeline
	inst      string
	turn      int
	round     int
	where     string         // the last step seen, for ConsumedAt
	notes     map[string]int // note id -> its event
	calls     map[string]int // call id of an open call -> its event
	turnNotes []int          // notes of the open turn not consumed yet
	// floor and core entries wait for their call's entry
	floor, core []waiting
	arena       []Step // the chains' steps are cut from it
}

// steps returns an empty list of steps with room for a call's chain.
func (b *builder) steps() []Step {
	const each = 5 // ceiling, guards, floor, core, outcome; more reallocates
	if cap(b.arena)-len(b.arena) < each {
		b.arena = make([]Step, 0, 1024*each)
	}
	n := len(b.arena)
	b.arena = b.arena[:n+each]
	return b.arena[n : n : n+each]
}

func (b *builder) push(ev Event) int {
	ev.Seq, ev.Instance = len(b.t.Events), b.inst
	if ev.Turn == 0 {
		ev.Turn = b.turn
	}
	if ev.Round == 0 && ev.Kind != KindTurn && ev.Kind != KindTurnEnd {
		ev.Round = b.round
	}
	switch ev.Kind {
	case KindTurn, KindRound, KindRoundEnd, KindTurnEnd, KindCall, KindMethod, KindCommand:
		ev.step = true
	}
	b.t.Events = append(b.t.Events, ev)
	return ev.Seq
}

// order puts each step's event before the events of its window (the
// journal records what happened during a step, its notes, host answers
// and traces, before the step's own entry) and numbers the events again;
// from is where this instance's events begin.
func order(events []Event, from int) {
	seg := events[from:]
	w := 0 // where the window of the next step begins in seg
	for k := range seg {
		if !seg[k].step {
			continue
		}
		if k > w { // the window is seg[w:k]: the step goes before it
			ev := seg[k]
			copy(seg[w+1:k+1], seg[w:k])
			seg[w] = ev
		}
		w = k + 1
	}
	for k := range seg {
		seg[k].Seq = from + k
	}
}

func (b *builder) add(entries []session.Entry) {
	s := &b.t.Summary
	for k := range entries {
		en := &entries[k]
		switch en.Type {
		case session.TurnBegin:
			if en.Status == engine.StatusOK {
				b.turn, b.round = en.Turn, 0
				s.Turns++
			}
			b.where = fmt.Sprintf("turn %d start", en.Turn)
			b.push(Event{Kind: KindTurn, Turn: en.Turn, CallID: en.CallID, Input: en.Input, Status: en.Status, Reason: en.Reason,
				RefusedBy: en.RefusedBy, Error: en.Error, Pin: en.Pin, Revs: en.Revs})
		case session.RoundBegin:
			if en.Status == engine.StatusOK {
				b.round = en.Round
				s.Rounds++
			}
			b.where = fmt.Sprintf("turn %d round %d", b.turn, en.Round)
			b.push(Event{Kind: KindRound, Round: en.Round, CallID: en.CallID, Status: en.Status, Reason: en.Reason, RefusedBy: en.RefusedBy, Error: en.Error})
		case session.RoundEnd:
			b.where = fmt.Sprintf("turn %d round %d end", b.turn, en.Round)
			b.push(Event{Kind: KindRoundEnd, Round: en.Round, CallID: en.CallID, Status: en.Status, Error: en.Error,
				HostContinue: en.HostContinue, Continue: en.Continue, Output: en.Output})
		case session.TurnEnd:
			b.where = fmt.Sprintf("turn %d end", b.turn)
			b.push(Event{Kind: KindTurnEnd, Turn: en.Turn, CallID: en.CallID, Status: en.Status, Error: en.Error, Revs: en.Revs, Output: en.Output})
			for _, k := range b.turnNotes {
				if n := b.t.Events[k].Note; n.State == "emitted" {
					n.State = "expired"
					s.Expired++
				}
			}
			b.turnNotes = b.turnNotes[:0]
			b.round = 0
		case session.Emit:
			if en.Note == nil {
				continue
			}
			n := en.Note
			s.Notes++
			k := b.push(Event{Kind: KindNote, CallID: en.CallID, Turn: n.Turn, Round: n.Round,
				Note: &Note{ID: n.ID, Kind: n.Kind, Text: n.Text, Program: n.Program, Phase: n.Phase, State: "emitted"}})
			b.notes[n.ID] = k
			b.turnNotes = append(b.turnNotes, k)
			if n.Expired {
				b.t.Events[k].Note.State = "expired"
				s.Expired++
			}
		case session.Consume:
			k, ok := b.notes[en.ID]
			if !ok {
				b.push(Event{Kind: KindUnplaced, Key: en.ID})
				continue
			}
			n := b.t.Events[k].Note
			if n.State != "consumed" {
				if n.State == "expired" {
					s.Expired--
				}
				n.State, n.ReachedModel, n.ConsumedAt = "consumed", true, b.where
				s.Consumed++
			}
		case session.Floor:
			b.floor = append(b.floor, waiting{callID: en.CallID, path: en.Path, value: en.Value, err: en.Error})
		case session.Core:
			b.core = append(b.core, waiting{callID: en.CallID, path: en.Path, value: en.Value, err: en.Error})
		case "tool-open":
			ev := Event{Kind: KindCall, Path: en.Path, CallID: en.CallID, ToolUseID: toolUseID(en.Harness), Input: en.Input, Status: engine.StatusPending, Open: true, Key: en.Key}
			var marks []string
			if v := asMap(en.Value); v != nil {
				if ms, ok := v["marks"].([]any); ok {
					for _, m := range ms {
						if s, ok := m.(string); ok {
							marks = append(marks, s)
						}
					}
				}
			}
			ev.Chain = b.chain(en, marks, true)
			b.calls[en.CallID] = b.push(ev)
			s.Calls++
		case session.Tool:
			b.tool(en)
		case session.Method:
			s.Methods++
			b.push(Event{Kind: KindMethod, Owner: en.Owner, Name: en.Name, Input: en.Value, CallID: en.CallID, Status: en.Status,
				Result: en.Result, Error: en.Error, Reason: en.Reason, RefusedBy: en.RefusedBy, Rev: en.Rev, Revs: en.Revs})
		case session.Command:
			b.push(Event{Kind: KindCommand, Name: en.Name, Input: en.Input, CallID: en.CallID, Status: en.Status, Error: en.Error, Revs: en.Revs})
		case session.Read:
			s.Reads++
			b.push(Event{Kind: KindRead, Key: en.Key, Value: en.Value, Error: en.Error})
		case session.Delivery:
			b.push(Event{Kind: KindDelivery, Kind2: en.Kind, Key: en.Key, Value: en.Value, Error: en.Error})
		case session.Repin:
			b.push(Event{Kind: KindRepin})
		case session.Trace:
			s.Traces++
			b.push(Event{Kind: KindTrace, CallID: en.CallID, Turn: en.Turn, Round: en.Round, Level: en.Kind, Program: en.Name, Text: en.Key})
		default:
			b.push(Event{Kind: KindOtherType, Key: en.Type})
		}
	}
}

// tool adds a call's outcome: to the call ToolBegin left open under its
// id, or as a call of its own.
func (b *builder) tool(en *session.Entry) {
	s := &b.t.Summary
	switch en.Status {
	case engine.StatusRefused:
		s.Refused++
	case engine.StatusFailed:
		s.Failed++
	}
	if k, ok := b.calls[en.CallID]; ok && en.CallID != "" {
		delete(b.calls, en.CallID)
		ev := &b.t.Events[k]
		var marks []string
		for _, st := range ev.Chain {
			if st.Step == "floor" {
				marks = st.Marks
			}
		}
		ev.Open = false
		ev.Status, ev.Reason, ev.RefusedBy, ev.RefusedAt, ev.Error = en.Status, en.Reason, en.RefusedBy, en.RefusedAt, en.Error
		ev.Result, ev.Diagnostics = en.Result, en.Diagnostics
		pre := ev.Chain
		if n := len(pre); n > 0 && pre[n-1].Step == "core" { // the agent's part: replaced by what it reported
			pre = pre[:n-1]
		}
		ev.Chain = b.after(pre, en, marks)
		return
	}
	s.Calls++
	ev := Event{Kind: KindCall, Path: en.Path, CallID: en.CallID, ToolUseID: toolUseID(en.Harness), Input: en.Value, Status: en.Status, Reason: en.Reason,
		RefusedBy: en.RefusedBy, RefusedAt: en.RefusedAt, Error: en.Error, Result: en.Result, Diagnostics: en.Diagnostics}
	ev.Chain = b.chain(en, nil, false)
	b.push(ev)
}

// waiting is a floor's or a core's entry waiting for its call's.
type waiting struct {
	callID, path string
	value        any
	err          string
}

func (w *waiting) of(en *session.Entry) bool {
	return (w.callID != "" && w.callID == en.CallID) || (w.callID == "" && w.path == en.Path)
}

// take takes the entry waiting for a call (by call id, or the last of its
// path when it has none).
func take(list *[]waiting, en *session.Entry) (waiting, bool) {
	l := *list
	for k := len(l) - 1; k >= 0; k-- {
		if l[k].of(en) {
			w := l[k]
			copy(l[k:], l[k+1:])
			l[len(l)-1] = waiting{}
			*list = l[:len(l)-1]
			return w, true
		}
	}
	return waiting{}, false
}

// chain is the way of a call through the chain, as far as the journal
// says: up to the core of an open call, to the outcome of a finished one.
func (b *builder) chain(en *session.Entry, marks []string, open bool) []Step {
	by := en.RefusedBy
	steps := b.steps()
	if by == engine.ByCeiling {
		return append(steps, Step{Step: "ceiling", Verdict: "refuse", Reason: en.Reason, Recorded: true},
			Step{Step: "outcome", Verdict: string(en.Status), Reason: en.Reason, Recorded: true})
	}
	steps = append(steps, Step{Step: "ceiling", Verdict: "pass"})
	switch by {
	case engine.ByGuard:
		steps = append(steps, Step{Step: "guards", Verdict: "refuse", Reason: en.Reason, At: en.RefusedAt, Guards: en.Guards, Recorded: true})
		return append(steps, Step{Step: "outcome", Verdict: string(en.Status), Reason: en.Reason, Recorded: true})
	case engine.ByReentry, engine.ByRetryBudget:
		steps = append(steps, Step{Step: "guards", Verdict: "refuse", Reason: en.Reason, Guards: en.Guards, Recorded: true}, Step{Step: "outcome", Verdict: string(en.Status), Reason: en.Reason, Recorded: true})
		return steps
	}
	if en.Status == engine.StatusFailed && !b.waitingFloor(en) && len(b.core) == 0 {
		// failed before the floor: a guard or hook threw, or the arguments could not be recorded
		st := Step{Step: "guards", Verdict: "error", Error: en.Error, Guards: en.Guards, Recorded: true}
		for _, g := range en.Guards {
			if g.Verdict == "error" {
				st.At = g.At
			}
		}
		return append(steps, st, Step{Step: "outcome", Verdict: string(en.Status), Error: en.Error, Recorded: true})
	}
	// the guards let the call through: the journal says how each did
	// (a journal written before guards' verdicts were recorded does not)
	steps = append(steps, Step{Step: "guards", Verdict: "pass", Guards: en.Guards, Recorded: len(en.Guards) > 0})
	if f, ok := take(&b.floor, en); ok {
		st := Step{Step: "floor", Verdict: "pass", Marks: marks, Recorded: true}
		if r, ok := f.value.(json.RawMessage); ok && string(r) == floorPassed {
			// the verdict of nearly every call: nothing to decode
		} else if v := asMap(f.value); v != nil {
			if r, _ := v["refused"].(bool); r {
				st.Verdict = "refuse"
			}
			st.Reason, _ = v["reason"].(string)
		}
		steps = append(steps, st)
	} else {
		steps = append(steps, Step{Step: "floor", Verdict: "pass", Marks: marks, Reason: "the default floor passes unmarked calls without being asked"})
	}
	if by == engine.ByFloor {
		return append(steps, Step{Step: "outcome", Verdict: string(en.Status), Reason: en.Reason, Recorded: true})
	}
	if open {
		return append(steps, Step{Step: "core", Verdict: string(engine.StatusPending), Reason: "the agent runs the tool", Recorded: true})
	}
	return b.after(steps, en, marks)
}

func (b *builder) waitingFloor(en *session.Entry) bool {
	for k := range b.floor {
		if b.floor[k].of(en) {
			return true
		}
	}
	return false
}

// after appends the core, the :post hooks and the outcome of a call.
func (b *builder) after(steps []Step, en *session.Entry, marks []string) []Step {
	if c, ok := take(&b.core, en); ok {
		st := Step{Step: "core", Verdict: string(engine.StatusOK), Value: c.value, Recorded: true}
		if c.err != "" {
			st.Verdict, st.Error, st.Value = string(engine.StatusFailed), c.err, nil
		}
		steps = append(steps, st)
	} else if en.Status != engine.StatusRefused {
		st := Step{Step: "core", Verdict: string(en.Status), Value: en.Result, Error: en.Error}
		steps = append(steps, st)
	}
	if len(en.Diagnostics) > 0 {
		steps = append(steps, Step{Step: "post", Verdict: "ok", Value: en.Diagnostics, Recorded: true})
	}
	return append(steps, Step{Step: "outcome", Verdict: string(en.Status), Reason: en.Reason, Error: en.Error, Recorded: true})
}

// toolUseID is the tool_use_id of the harness event a call's entry
// carries ({name, event: {tool_use_id...}}), "" when none.
func toolUseID(h any) string {
	switch x := h.(type) {
	case nil:
		return ""
	case json.RawMessage:
		const key = `"tool_use_id":`
		at := bytes.Index(x, []byte(key))
		if at < 0 {
			return ""
		}
		v := x[at+len(key):]
		end, _, ok := skipString(v, 0)
		if !ok || len(v) == 0 || v[0] != '"' {
			return ""
		}
		s, _ := str(v[:end])
		return s
	}
	if m := asMap(h); m != nil {
		if ev, ok := m["event"].(map[string]any); ok {
			s, _ := ev["tool_use_id"].(string)
			return s
		}
	}
	return ""
}

// floorPassed is the journaled verdict of a floor that let a call through.
const floorPassed = `{"reason":"","refused":false}`

// asMap is a journaled object as a map: as it is, or decoded from its JSON
// (nil for anything else).
func asMap(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case json.RawMessage:
		var m map[string]any
		if json.Unmarshal(x, &m) == nil {
			return m
		}
	}
	return nil
}

// JSON is t encoded for `attune inspect --json`: as json.Marshal encodes
// it, the events by appendEvent, on several goroutines when there are
// many.
func (t *Timeline) JSON() ([]byte, error) {
	pieces, err := t.encode()
	if err != nil {
		return nil, err
	}
	size := 0
	for _, p := range pieces {
		size += len(p)
	}
	out := make([]byte, 0, size)
	for _, p := range pieces {
		out = append(out, p...)
	}
	return out, nil
}

// WriteJSON writes what JSON returns to w, piece by piece (a long
// session's encoding is not copied into one buffer first).
func (t *Timeline) WriteJSON(w io.Writer) error {
	pieces, err := t.encode()
	if err != nil {
		return err
	}
	for _, p := range pieces {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// encode is t's encoding in pieces to join: the head up to its events, the
// events in parts (encoded side by side), the rest.
func (t *Timeline) encode() ([][]byte, error) {
	head := *t
	head.Events = nil
	h, err := json.Marshal(&head)
	if err != nil {
		return nil, err
	}
	const marker = `"events":null`
	at := bytes.Index(h, []byte(marker))
	if at < 0 {
		return nil, fmt.Errorf("inspect: the timeline's encoding has no events member")
	}
	n := runtime.GOMAXPROCS(0)
	if len(t.Events) < 4096 || n < 2 {
		n = 1
	}
	parts := make([][]byte, n)
	step := (len(t.Events) + n - 1) / max(n, 1)
	each := 256 // bytes an event takes, as the first events say
	if m := min(len(t.Events), 64); m > 0 {
		var sample []byte
		for k := range m {
			sample = appendEvent(sample, &t.Events[k])
		}
		each = len(sample)/m + 64
	}
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		from, to := min(w*step, len(t.Events)), min((w+1)*step, len(t.Events))
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := make([]byte, 0, (to-from)*each+1)
			for k := from; k < to; k++ {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendEvent(b, &t.Events[k])
			}
			parts[w] = b
		}()
	}
	wg.Wait()
	pieces := make([][]byte, 0, n+2)
	pieces = append(pieces, append(h[:at:at], `"events":[`...))
	pieces = append(pieces, parts...)
	return append(pieces, append([]byte("]"), h[at+len(marker):]...)), nil
}

// Replay is what a replay of the session against its pins found.
type Replay struct {
	// Instances are each instance's replay.
	Instances []ReplayedInstance `json:"instances"`
	// FirstDivergence is the first way a replayed step differed from the
	// recorded one ("" when every instance replayed as recorded).
	FirstDivergence string `json:"first_divergence,omitempty"`
}

// ReplayedInstance is one instance's replay.
type ReplayedInstance struct {
	ID       string   `json:"id"`
	Steps    int      `json:"steps"`
	Diverged []string `json:"diverged"`
	Error    string   `json:"error,omitempty"`
}
