package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/attune-dev/attune/internal/jsonscan"
	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// Sessions brought back from a compact state. Bringing an instance back
// means knowing what its journal comes to: the counters, the open turn and
// round, the notebook (the notes of the open turn, placed or pending, and
// two bits a sealed note) and the calls a harness left open (ToolBegin). A
// host that read the journal for that at every event (a hook process)
// would pay for the whole open turn each time, and a long-lived host that
// read it at every ToolEnd would pay more with every call.
//
// So the state is kept as a fold of the journal (turnFold): a function of
// its entries, moved by every entry as it is stored (session.Tracker), the
// entries of other writers included (read back before this journal's own).
// Every so often (stateEvery entries, or stateBytes of them, and never more
// often than the state's own size in entries' bytes) the fold is stored as
// a record beside the journal, with the seq it covers and the sha256 of
// the stored bytes of the entry there. An instance is brought back from
// that record plus the entries after it: a bounded read, whatever the
// length of the turn or session.
//
// The record never lies about the journal. It is written after the
// entries it covers are stored (a process killed between the two leaves a
// record older than the journal: the entries after it are folded), and a
// durable write of the store makes the earlier ones durable too. It is
// checked when read: the entry at its seq must be there with the same
// bytes, so a journal rolled back (truncated and written again) or
// replaced is read from its start instead; a record that does not decode,
// or of another version, is ignored the same way. Rollback deletes it
// before it truncates. A record that cannot be stored is not an error:
// the next bring-back reads further.

// sessionSnapshotKind is the store record kind of compact states, keyed by
// journal log.
const sessionSnapshotKind = "journal-snapshot"

// turnStateVersion is the version of the stored state; a record of
// another version is ignored (the journal is read from its start).
const turnStateVersion = 2

const (
	// stateEvery is how many entries past the stored state the fold is
	// stored again; stateBytes how many bytes of entries.
	stateEvery = 64
	stateBytes = 256 << 10
)

// turnState is the stored form of a fold.
type turnState struct {
	V         int               `json:"v"`
	Seq       int64             `json:"seq"` // the last entry folded
	Sum       string            `json:"sum"` // sha256 of its stored bytes
	Turn      int               `json:"turn"`
	Round     int               `json:"round,omitempty"`
	InTurn    bool              `json:"in_turn,omitempty"`
	InRound   bool              `json:"in_round,omitempty"`
	Gen       int               `json:"gen,omitempty"`
	Activated bool              `json:"activated,omitempty"`
	Input     any               `json:"input,omitempty"`
	Fresh     bool              `json:"fresh,omitempty"`
	TurnPin   string            `json:"turn_pin,omitempty"`
	Book      session.BookState `json:"book"`
	Open      []json.RawMessage `json:"open,omitempty"` // the tool-open entries of calls left open, in order
}

func entrySum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// turnFold is what a journal's entries come to for a session's state: the
// same whether folded entry by entry as they are stored, from the whole
// journal, or from a stored state and the entries after it.
type turnFold struct {
	st    store.Store
	log   string
	every int // stateEvery, or a test's

	mu        sync.Mutex
	seq       int64
	turn      int
	round     int
	inTurn    bool
	inRound   bool
	gen       int
	activated bool
	input     any
	fresh     bool
	turnPin   string
	book      *session.Book
	open      openSet

	since, sinceBytes int   // entries folded since the state last stored (or read)
	size              int   // bytes of that state
	stored            int64 // its seq
}

func newFold(s *sessionState) *turnFold {
	every := s.i.e.stateEvery
	if every <= 0 {
		every = stateEvery
	}
	return &turnFold{st: s.i.e.st, log: session.LogName(s.i.rec.Session, s.i.id), every: every, book: session.NewBook(noteSpace(s.i))}
}

// Keep implements session.Tracker: the entries the fold takes more than
// their scalar fields from.
func (f *turnFold) Keep(typ string) bool {
	return typ == session.TurnBegin || typ == session.Emit || typ == entryToolOpen
}

// Track implements session.Tracker: the facts are folded, and the state
// stored when it is due.
func (f *turnFold) Track(ctx context.Context, n int64, facts []session.Fact, last []byte) {
	f.mu.Lock()
	for k := range facts {
		f.apply(&facts[k])
		f.sinceBytes += facts[k].Size
	}
	f.seq = n
	f.since += len(facts)
	due := (f.since >= f.every || f.sinceBytes >= stateBytes) && f.sinceBytes >= f.size
	var data []byte
	if due {
		data, _ = json.Marshal(f.stateLocked(entrySum(last)))
	}
	f.mu.Unlock()
	if data == nil {
		return
	}
	if f.st.PutRecord(ctx, sessionSnapshotKind, f.log, data) == nil { // an optimization: a failure costs the next read
		f.mu.Lock()
		f.since, f.sinceBytes, f.size, f.stored = 0, 0, len(data), n
		f.mu.Unlock()
	}
}

// apply folds one entry (f.mu held); it runs nothing (R3.11).
func (f *turnFold) apply(x *session.Fact) {
	switch x.Type {
	case session.TurnBegin:
		if x.Status == StatusOK {
			var en struct {
				Turn         int    `json:"turn"`
				Input        any    `json:"input"`
				ContextFresh bool   `json:"context_fresh"`
				Pin          string `json:"pin"`
			}
			if json.Unmarshal(x.Data, &en) == nil {
				f.turnPin = en.Pin
				f.turn, f.round, f.inTurn, f.inRound = en.Turn, 0, true, false
				f.input, f.fresh = en.Input, en.ContextFresh
				f.activated = false
			}
		}
	case session.RoundBegin:
		if x.Status == StatusOK {
			f.round, f.inRound = x.Round, true
		}
	case session.RoundEnd:
		f.inRound = false
		f.activated = x.Continue && !x.HostContinue
	case session.TurnEnd:
		f.inTurn, f.inRound = false, false
		f.book.Seal()
	case session.Emit:
		var en struct {
			Note *session.Note `json:"note"`
		}
		if json.Unmarshal(x.Data, &en) == nil && en.Note != nil && en.Note.Kind != session.User {
			f.book.Adopt(*en.Note)
		}
	case session.Consume:
		f.book.MarkConsumed(x.ID)
	case entryToolOpen:
		f.open.add(x.Key, x.CallID, x.Data)
	case session.Tool:
		f.open.close(x.CallID)
	}
	if x.Gen > f.gen {
		f.gen = x.Gen
	}
}

func (f *turnFold) stateLocked(sum string) turnState {
	return turnState{V: turnStateVersion, Seq: f.seq, Sum: sum, Turn: f.turn, Round: f.round, InTurn: f.inTurn, InRound: f.inRound,
		Gen: f.gen, Activated: f.activated, Input: f.input, Fresh: f.fresh, TurnPin: f.turnPin, Book: f.book.State(), Open: f.open.raw()}
}

// readTurnState decodes a stored state as json.Unmarshal does, reading
// the state's own fields and slicing out its open calls itself (a state
// holds every call left open, the bulk of its bytes, which restore reads
// again), with encoding/json for the rest: the input and a notebook with
// notes, and any text the scanner leaves to it.
func readTurnState(data []byte, st *turnState) error {
	if readState(data, st) {
		return nil
	}
	*st = turnState{}
	return json.Unmarshal(data, st)
}

// readState is readTurnState's own reading: false where encoding/json
// decides.
func readState(data []byte, st *turnState) bool {
	fields := [...]string{"v", "seq", "sum", "turn", "round", "in_turn", "in_round", "gen", "activated", "input", "fresh", "turn_pin", "book", "open"}
	var out [len(fields)][]byte
	if ok, _ := jsonscan.Members(data, fields[:], out[:], jsonscan.Options{}); !ok {
		return false
	}
	return jsonscan.IntoInt(out[0], &st.V) && jsonscan.IntoInt64(out[1], &st.Seq) && jsonscan.IntoString(out[2], &st.Sum) &&
		jsonscan.IntoInt(out[3], &st.Turn) && jsonscan.IntoInt(out[4], &st.Round) && jsonscan.IntoBool(out[5], &st.InTurn) &&
		jsonscan.IntoBool(out[6], &st.InRound) && jsonscan.IntoInt(out[7], &st.Gen) && jsonscan.IntoBool(out[8], &st.Activated) &&
		jsonscan.IntoAny(out[9], &st.Input) && jsonscan.IntoBool(out[10], &st.Fresh) && jsonscan.IntoString(out[11], &st.TurnPin) &&
		stateBook(out[12], &st.Book) && stateList(out[13], &st.Open)
}

// stateBook reads a notebook with nothing but its seq itself, and leaves
// one with notes to encoding/json.
func stateBook(raw []byte, dst *session.BookState) bool {
	if raw == nil || string(raw) == "null" {
		return true
	}
	fields := [...]string{"seq", "existed", "placed", "live"}
	var out [len(fields)][]byte
	if ok, _ := jsonscan.Members(raw, fields[:], out[:], jsonscan.Options{}); ok && out[1] == nil && out[2] == nil && out[3] == nil {
		return jsonscan.IntoInt(out[0], &dst.Seq)
	}
	return json.Unmarshal(raw, dst) == nil
}

// stateList reads the open calls' list into their texts.
func stateList(raw []byte, dst *[]json.RawMessage) bool {
	if raw == nil || string(raw) == "null" {
		return true
	}
	items, ok := jsonscan.Items(raw)
	if !ok {
		return false
	}
	out := make([]json.RawMessage, len(items))
	for k, it := range items {
		out[k] = it
	}
	*dst = out
	return true
}

// restore makes a new fold the stored state st (size bytes long); false
// when st cannot be one.
func (f *turnFold) restore(st *turnState, size int) bool {
	if st.V != turnStateVersion || st.Seq < 1 {
		return false
	}
	for _, raw := range st.Open {
		x, err := session.ReadFact(raw)
		if err != nil || x.Type != entryToolOpen {
			return false
		}
		f.open.add(x.Key, x.CallID, raw)
	}
	f.seq, f.turn, f.round, f.inTurn, f.inRound, f.gen = st.Seq, st.Turn, st.Round, st.InTurn, st.InRound, st.Gen
	f.activated, f.input, f.fresh, f.turnPin = st.Activated, st.Input, st.Fresh, st.TurnPin
	f.book.Restore(st.Book)
	f.size, f.stored = size, st.Seq
	return true
}

// follow has a fold follow the session's journal: from the stored state
// when there is one that holds, else from the journal's start.
func (s *sessionState) follow(ctx context.Context) (*turnFold, error) {
	f := newFold(s)
	data, err := s.i.e.st.GetRecord(ctx, sessionSnapshotKind, f.log)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err == nil {
		var st turnState
		if readTurnState(data, &st) == nil && f.restore(&st, len(data)) {
			ok, err := s.j.Track(ctx, f, st.Seq, func(en store.Entry) bool { return entrySum(en.Data) == st.Sum })
			if err != nil {
				return nil, err
			}
			if ok {
				return f, nil
			}
		}
		f = newFold(s) // a state that does not hold: the whole journal
	}
	if _, err := s.j.Track(ctx, f, 0, nil); err != nil {
		return nil, err
	}
	return f, nil
}

// load brings the session back: its fold, then the state from it.
func (s *sessionState) load(ctx context.Context) error {
	f, err := s.follow(ctx)
	if err != nil {
		return err
	}
	s.fold.Store(f)
	f.mu.Lock()
	s.turn, s.round, s.inTurn, s.inRound, s.gen = f.turn, f.round, f.inTurn, f.inRound, f.gen
	s.activated, s.input, s.fresh, s.turnPin = f.activated, f.input, f.fresh, f.turnPin
	s.book.Restore(f.book.State())
	f.mu.Unlock()
	s.journaling.Store(s.inTurn)
	s.begun.Store(s.j.Head() > 0)
	return nil
}

// current returns the session's fold with every entry stored so far
// folded in: the entries of other writers are read (one read of the store
// when there are none); a fold that lost the journal (truncated under it)
// is brought back again.
func (s *sessionState) current(ctx context.Context) (*turnFold, error) {
	f := s.fold.Load()
	if f == nil { // a replay's session: nothing journaled
		return newFold(s), nil
	}
	ok, err := s.j.CatchUp(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		return f, nil
	}
	if f, err = s.follow(ctx); err != nil {
		return nil, err
	}
	s.fold.Store(f)
	return f, nil
}

// lastOpen returns the last call left open under key, nil when none is.
func (f *turnFold) lastOpen(key string) (*session.Entry, error) {
	f.mu.Lock()
	c := f.open.last(key)
	f.mu.Unlock()
	if c == nil {
		return nil, nil
	}
	var en session.Entry
	if err := json.Unmarshal(c.data, &en); err != nil {
		return nil, err
	}
	return &en, nil
}

// openKeys returns the keys of the calls left open, in order.
func (f *turnFold) openKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	cs := f.open.list()
	out := make([]string, len(cs))
	for k, c := range cs {
		out[k] = c.key
	}
	return out
}

// openSet is the calls left open, found by key and by call id without a
// scan. A tool entry closes the first call open under its call id; a key
// finds the last call open under it.
type openSet struct {
	n      int64
	byKey  map[string][]*openCall
	byCall map[string][]*openCall
}

type openCall struct {
	key, callID string
	data        []byte // the tool-open entry as stored
	ord         int64
}

func (o *openSet) add(key, callID string, data []byte) {
	if o.byKey == nil {
		o.byKey, o.byCall = map[string][]*openCall{}, map[string][]*openCall{}
	}
	c := &openCall{key: key, callID: callID, data: data, ord: o.n}
	o.n++
	o.byKey[key] = append(o.byKey[key], c)
	o.byCall[callID] = append(o.byCall[callID], c)
}

func (o *openSet) close(callID string) {
	cs := o.byCall[callID]
	if len(cs) == 0 {
		return
	}
	c := cs[0]
	if len(cs) == 1 {
		delete(o.byCall, callID)
	} else {
		o.byCall[callID] = slices.Delete(cs, 0, 1)
	}
	ks := o.byKey[c.key]
	for k := range ks {
		if ks[k] == c {
			ks = slices.Delete(ks, k, k+1)
			break
		}
	}
	if len(ks) == 0 {
		delete(o.byKey, c.key)
	} else {
		o.byKey[c.key] = ks
	}
}

func (o *openSet) last(key string) *openCall {
	cs := o.byKey[key]
	if len(cs) == 0 {
		return nil
	}
	return cs[len(cs)-1]
}

// list returns the open calls in the order they were opened.
func (o *openSet) list() []*openCall {
	var out []*openCall
	for _, cs := range o.byCall {
		out = append(out, cs...)
	}
	slices.SortFunc(out, func(a, b *openCall) int { return int(a.ord - b.ord) })
	return out
}

func (o *openSet) raw() []json.RawMessage {
	cs := o.list()
	if len(cs) == 0 {
		return nil
	}
	out := make([]json.RawMessage, len(cs))
	for k, c := range cs {
		out[k] = c.data
	}
	return out
}

// Stale reports whether the instance's journal moved in the store since
// the instance last read or wrote it: another process (a hook process
// beside a long-lived host) journaled for the same instance. A host that
// keeps instances live across such processes brings a stale one back
// (Restart) before it uses it.
func (i *Instance) Stale(ctx context.Context) (bool, error) {
	ss := i.sess.Load()
	if ss == nil || ss.rp != nil {
		return false, nil
	}
	return ss.j.Moved(ctx)
}
