// Package session is the session store's side of the engine: the journal
// of a session (boundaries, host deliveries, tool calls, notes and their
// consumption), the notebook that numbers, places, consumes and expires
// notes, and the loop-end merge of host addenda with behavior notes.
//
// It never loads programs and never dispatches boundaries (R1.10):
// it imports neither the Lua binding nor the engine. The engine records
// into it and reads it back for replay and hydration.
//
// Journal and Book are safe for concurrent use.
package session

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/attune-dev/attune/store"
)

// Entry types of the journal.
const (
	TurnBegin  = "turn-begin"
	TurnEnd    = "turn-end"
	RoundBegin = "round-begin"
	RoundEnd   = "round-end"
	Read       = "read"    // an admit/read delivery
	Core       = "core"    // a host tool core's outcome
	Tool       = "tool"    // a tool call made by the host
	Emit       = "note"    // a note emitted
	Consume    = "consume" // a note consumed (placed or consumed by the host)
	Method     = "method"  // a method call made by the host
	Command    = "command" // a pack command run by the host
	Repin      = "repin"   // a re-attuned pin applied at a turn start
	Floor      = "floor"   // the host floor's verdict on a tool call
	// Delivery is any other answer of the host during a turn (Kind names
	// it, Key what was asked); Read, Core and Floor are deliveries too.
	Delivery = "delivery"
	// Trace is a line a behavior printed or logged during a turn: Kind is
	// its level ("print", "debug", "info", "warn", "error"), Name the
	// program, Key the text, CallID the call or boundary that wrote it.
	// Nothing replays it.
	Trace = "trace"
)

// Status is what a step came to: "ok", "refused", "failed", or "pending"
// (a tool call the harness runs, not run yet). The engine's outcomes carry
// the same type (engine.Status); its JSON form is the word.
type Status string

// OK reports whether the step succeeded.
func (s Status) OK() bool { return s == "ok" }

// Entry is one journal record. Fields that do not apply are zero.
type Entry struct {
	Type   string `json:"t"`
	Turn   int    `json:"turn,omitempty"`
	Round  int    `json:"round,omitempty"`
	Status Status `json:"status,omitempty"`

	Input        any     `json:"input,omitempty"`
	ContextFresh bool    `json:"context_fresh,omitempty"`
	HostContinue bool    `json:"host_continue,omitempty"`
	Output       *string `json:"output,omitempty"`
	Continue     bool    `json:"continue,omitempty"`

	Key   string `json:"key,omitempty"`
	Value any    `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
	// Code is the kind of a failed step's Error (the engine's error code:
	// "cancelled", "budget", "script", ...), kept beside its text so a
	// replay compares what stopped the step without reading the text.
	Code   string `json:"code,omitempty"`
	Path   string `json:"path,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Owner  string `json:"owner,omitempty"`
	Name   string `json:"name,omitempty"` // method or command name
	Auth   bool   `json:"auth,omitempty"`

	// Kind names a Delivery's kind (host libraries, callbacks...).
	Kind string `json:"kind,omitempty"`

	// What a step (a boundary, a tool, method or command call) came to,
	// so a replay can compare its own outcome against it: Status and
	// Error above, and these. A boundary's Status says whether it opened;
	// Error is set when one of its hooks threw.
	Result    any    `json:"result,omitempty"`
	Reason    string `json:"reason,omitempty"`
	RefusedBy string `json:"refused_by,omitempty"`
	// RefusedAt is where the guard that refused a tool call was
	// registered ("protect.lua:12").
	RefusedAt   string   `json:"refused_at,omitempty"`
	Diagnostics []string `json:"diagnostics,omitempty"`

	Note *Note  `json:"note,omitempty"`
	ID   string `json:"id,omitempty"` // consumed note id

	// Revs are session owners' revisions at a turn end (for rollback).
	Revs map[string]int64 `json:"revs,omitempty"`
	// Rev is the owner's revision after a method call (method entries).
	Rev int64 `json:"rev,omitempty"`
	// Pin is the blob hash of the pin a turn ran (turn-begin entries).
	Pin string `json:"pin,omitempty"`
	// Gen counts rollbacks; boundary call ids include it.
	Gen int `json:"gen,omitempty"`

	// Engine is the version of the engine that wrote a turn-begin entry.
	Engine string `json:"engine,omitempty"`

	// NotPlain names the host value of a step that had no JSON form and
	// was left out of the entry ("args", "input"): the step failed with
	// Error without running, and a replay fails it the same way.
	NotPlain string `json:"not_plain,omitempty"`

	// Harness is the agent harness a step came from ({name, event}), as
	// its records carried it.
	Harness any `json:"harness,omitempty"`

	// Guards are the verdicts of the tool guards a call ran through, in
	// pin order per attempt (tool and tool-open entries; absent in
	// journals written before they were recorded, and when no guard ran).
	Guards []GuardVerdict `json:"guards,omitempty"`
}

// GuardVerdict is what one tool guard made of a call: where it was
// registered ("protect.lua:12"), its pattern, its verdict (invoke, refuse,
// retry, error), its reason or error, and the marks the call carried when
// it returned. Attempt is set from the second attempt of a chain a guard's
// retry started again.
type GuardVerdict struct {
	At      string   `json:"at"`
	Pattern string   `json:"pattern,omitempty"`
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason,omitempty"`
	Error   string   `json:"error,omitempty"`
	Marks   []string `json:"marks,omitempty"`
	Attempt int      `json:"attempt,omitempty"`
}

// Journal is one session's append-only record in the store. Entries are
// encoded as they are added and buffered; Flush writes them durably, in one
// append (the engine flushes at every boundary). An entry that cannot be
// encoded (a value with no JSON form: a NaN, a cycle, a channel) is not
// buffered: Add and AddBehind return its *EncodeError and the journal goes
// on, so the caller can journal the failure instead. Only a failed store
// write stops a write, and the next Flush retries it. Entries added with
// AddBehind are written behind the caller: a write starts in the
// background at once and takes every entry buffered by then, so calls
// inside a turn do not wait for the store; the next Flush waits for it.
// Writes keep the order of Add, so what the store holds is always a prefix
// of the journal.
type Journal struct {
	st  store.Store
	log string

	mu       sync.Mutex
	pend     []byte        // the encoded entries waiting, back to back
	ends     []int         // where each waiting entry ends in pend
	spare    []byte        // pend of the last write, reused
	spareEnd []int         // ends of the last write, reused
	seen     encCache      // values the last encodings checked
	draining bool          // a background write is running or about to
	unsynced bool          // a background write appended lazily (store.Lazy) since the last Flush
	head     int64         // the stored length as last read or written (tail.go)
	track    Tracker       // follows the entries as they are stored (track.go)
	tracked  int64         // the last seq given to track
	facts    []Fact        // what track gets of each waiting entry, as ends
	spareFct []Fact        // facts of the last write, reused
	delay    time.Duration // how long a background write waits to start (SetBehindDelay)

	wmu  sync.Mutex // held while entries are written: writes never interleave
	data [][]byte   // the entries of a write, slices of its pend, reused (wmu held)
}

// maxReuse is the largest encoding buffer a Journal keeps between writes.
const maxReuse = 1 << 20

// maxBehind is how many entries AddBehind buffers before the caller writes
// them itself: the bound on memory when calls come faster than writes.
const maxBehind = 4096

// LogName is the store log of one instance's journal of a session. Two
// instances the host puts in one session share its owners, not their
// journals: each replays and hydrates its own turns.
func LogName(session, instance string) string { return "journal/" + session + "/" + instance }

// OpenJournal opens an instance's journal of a session.
func OpenJournal(st store.Store, session, instance string) *Journal {
	return &Journal{st: st, log: LogName(session, instance)}
}

// Add encodes and buffers an entry; the next Flush writes it. An entry
// that cannot be encoded is not buffered: the error (an *EncodeError) says
// which value and where, and the journal goes on.
func (j *Journal) Add(e Entry) error {
	j.mu.Lock()
	err := j.addLocked(&e)
	j.mu.Unlock()
	return err
}

// addLocked encodes e at the end of the buffer (j.mu held). An entry that
// cannot be encoded (a value encoding/json refuses) leaves the buffer as it
// was; its *EncodeError is returned.
func (j *Journal) addLocked(e *Entry) error {
	n := len(j.pend)
	b, err := appendEntry(j.pend, e, &j.seen)
	if err != nil {
		j.pend = j.pend[:n]
		return encodeError(j.log, e, err)
	}
	j.pend = b
	j.ends = append(j.ends, len(b))
	if j.track != nil {
		j.facts = append(j.facts, j.fact(e, b[n:]))
	}
	return nil
}

// Pending is how many entries wait to be written.
func (j *Journal) Pending() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.ends)
}

// AddBehind encodes and buffers entries and has them written in the
// background (write-behind): they are durable at the latest when the next
// Flush returns. When maxBehind entries are waiting, the caller writes them.
// It adds the entries in order up to the first that cannot be encoded, and
// returns how many it added and that entry's *EncodeError: the caller
// journals what it makes of the rest (the journal goes on).
func (j *Journal) AddBehind(es ...Entry) (int, error) {
	j.mu.Lock()
	added := len(es)
	var err error
	for k := range es {
		if err = j.addLocked(&es[k]); err != nil {
			added = k
			break
		}
	}
	j.behindLocked()
	return added, err
}

// behindLocked starts or hands over the write of what is buffered and
// unlocks j.mu.
func (j *Journal) behindLocked() {
	switch {
	case len(j.ends) == 0:
		j.mu.Unlock()
	case len(j.ends) >= maxBehind:
		j.mu.Unlock()
		_ = j.Flush(context.Background()) // an error stays buffered: the next Flush reports it
	case !j.draining:
		j.draining = true
		d := j.delay
		j.mu.Unlock()
		if d > 0 {
			time.AfterFunc(d, j.drain)
		} else {
			go j.drain()
		}
	default:
		j.mu.Unlock()
	}
}

// SetBehindDelay has every background write wait d before it starts, so
// that the entries added meanwhile (the calls of those d) share its one
// store append (on SQLite, one transaction); 0, the default, starts it at
// once. Entries added behind are then written at most d after they were
// added, plus the write's own time (until then a crash of the process
// loses them), and durable at the latest when the next Flush returns;
// Flush itself never waits.
func (j *Journal) SetBehindDelay(d time.Duration) {
	j.mu.Lock()
	j.delay = d
	j.mu.Unlock()
}

// WriteBehind has the buffered entries written in the background, as
// AddBehind does: durable at the latest when the next Flush returns.
func (j *Journal) WriteBehind() {
	j.mu.Lock()
	j.behindLocked()
}

// drain writes buffered entries until none is left. A failed write puts its
// entries back and stops; the next Flush retries them and reports the error.
// With no delay, it lingers a few yields before it ends, so that calls
// coming faster than that keep one drain running instead of each starting
// one (and waking a processor for it).
func (j *Journal) drain() {
	idle := 0
	for {
		j.wmu.Lock()
		err := j.writeLocked(context.Background(), true)
		j.mu.Lock()
		if err != nil || len(j.ends) == 0 && (j.delay > 0 || idle == lingerYields) {
			j.draining = false
			j.mu.Unlock()
			j.wmu.Unlock()
			return
		}
		if len(j.ends) == 0 {
			idle++
		} else {
			idle = 0
		}
		j.mu.Unlock()
		j.wmu.Unlock()
		if idle > 0 {
			runtime.Gosched()
		}
	}
}

// lingerYields is how many times a drain with nothing to write yields
// before it ends.
const lingerYields = 4

// Flush writes the buffered entries durably, in one append, after any
// write already running, and makes what background writes appended
// durable too.
func (j *Journal) Flush(ctx context.Context) error {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	if err := j.writeLocked(ctx, false); err != nil {
		return err
	}
	if j.unsynced {
		if err := j.st.(store.Lazy).Sync(ctx); err != nil {
			return fmt.Errorf("journal %s: %w", j.log, err)
		}
		j.unsynced = false
	}
	return nil
}

// writeLocked writes what is buffered; the caller holds wmu. On failure the
// entries go back in front of the buffer. A lazy write (from the
// background) does not wait for the disk when the store can do that.
func (j *Journal) writeLocked(ctx context.Context, lazy bool) error {
	j.mu.Lock()
	pend, ends, facts := j.pend, j.ends, j.facts
	if len(ends) == 0 {
		j.mu.Unlock()
		return nil
	}
	j.pend, j.ends, j.facts = j.spare[:0], j.spareEnd[:0], j.spareFct[:0]
	j.spare, j.spareEnd, j.spareFct = nil, nil, nil
	j.mu.Unlock()
	n, err := j.write(ctx, pend, ends, lazy)
	if err != nil { // back in front, after the entries of pend
		j.mu.Lock()
		defer j.mu.Unlock()
		for _, e := range j.ends {
			ends = append(ends, len(pend)+e)
		}
		j.pend, j.ends = append(pend, j.pend...), ends
		if j.track != nil {
			j.facts = append(facts, j.facts...)
		}
		return err
	}
	if len(facts) == len(ends) {
		last := 0
		if len(ends) > 1 {
			last = ends[len(ends)-2]
		}
		j.trackWrite(ctx, n, facts, pend[last:ends[len(ends)-1]])
	} else if len(facts) > 0 || j.Tracking() {
		j.untrack()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.head = n
	if cap(pend) <= maxReuse {
		j.spare, j.spareEnd = pend[:0], ends[:0]
		clear(facts)
		j.spareFct = facts[:0]
	}
	return nil
}

// write appends the encoded entries pend (each ending at its ends).
func (j *Journal) write(ctx context.Context, pend []byte, ends []int, lazy bool) (int64, error) {
	data := j.data[:0] // each entry a capped slice of pend (a store copies what it is given)
	start := 0
	for _, end := range ends {
		data = append(data, pend[start:end:end])
		start = end
	}
	defer func() {
		clear(data)
		j.data = data[:0]
	}()
	lz, ok := j.st.(store.Lazy)
	lazy = lazy && ok
	appendTo := j.st.Append
	if lazy {
		appendTo = lz.AppendLazy
	}
	n, err := appendTo(ctx, j.log, store.Any, data, nil)
	if err != nil {
		return 0, fmt.Errorf("journal %s: %w", j.log, err)
	}
	if lazy {
		j.unsynced = true // wmu is held
	}
	return n, nil
}

// Entries flushes, then returns every entry in order.
func (j *Journal) Entries(ctx context.Context) ([]Entry, error) {
	out, _, err := j.ReadFrom(ctx, 0)
	return out, err
}

// Truncate keeps the first n entries (rollback).
func (j *Journal) Truncate(ctx context.Context, n int) error {
	if err := j.Flush(ctx); err != nil {
		return err
	}
	j.wmu.Lock()
	j.untrack() // the tracker's state is past the cut
	j.wmu.Unlock()
	if err := j.st.Truncate(ctx, j.log, int64(n)); err != nil {
		return err
	}
	j.mu.Lock()
	j.head = min(j.head, int64(n))
	j.mu.Unlock()
	return nil
}

// Note is text a behavior adds to the model's context (R3.7).
type Note struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"` // "ambient" or "activating"
	Text    string `json:"text"`
	Program string `json:"program,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	Round   int    `json:"round,omitempty"`
	Phase   string `json:"phase,omitempty"` // "turn/start", "round/end"...
	Placed  bool   `json:"placed,omitempty"`
	Expired bool   `json:"expired,omitempty"`
}

// Note kinds.
const (
	Ambient    = "ambient"
	Activating = "activating"
	// User: a note for the harness's user only, never the model's context
	// (the engine keeps it out of the notebook).
	User = "user"
)

// Book numbers, places, consumes and expires the notes of a session.
//
// Its costs do not grow with the session: it holds the notes of the open
// turn only (the live notes) and a cursor of those not placed yet. Seal
// drops the notes it seals from memory (they stay in the journal) and keeps
// two bits per sealed note, whether it existed and whether it was placed, so
// that consuming an old note still fails with the right message.
type Book struct {
	session string
	prefix  string // session + ":n", the ids' common part
	mu      sync.Mutex
	seq     int
	live    []*Note          // not sealed yet, in emission order
	byID    map[string]*Note // the live notes
	pending []*Note          // live notes not placed by Place yet, in emission order
	existed bitset           // sealed notes, by number
	placed  bitset           // sealed notes that were placed, by number
}

// NewBook returns an empty notebook for a session.
func NewBook(session string) *Book {
	return &Book{session: session, prefix: session + ":n", byID: map[string]*Note{}}
}

// NewID reserves a new note id; every emission gets one (R3.7).
func (b *Book) NewID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return b.prefix + strconv.Itoa(b.seq)
}

// Add records an emitted note (with an id from NewID). The order of Add is
// the emission order placement follows; old notes are never withdrawn.
func (b *Book) Add(n Note) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.add(n)
}

func (b *Book) add(n Note) {
	c := n
	b.live = append(b.live, &c)
	b.byID[c.ID] = &c
	if !c.Placed && !c.Expired {
		b.pending = append(b.pending, &c)
	}
}

// Adopt restores a recorded note (hydration) without emitting it again.
func (b *Book) Adopt(n Note) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.byID[n.ID]; ok {
		return
	}
	if k, ok := b.number(n.ID); ok && b.existed.has(k) {
		return
	}
	b.add(n)
	b.seq++
}

// number is the number in a note id of this book.
func (b *Book) number(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, b.prefix)
	if !ok {
		return 0, false
	}
	k, err := strconv.Atoi(rest)
	return k, err == nil && k > 0
}

// Notes returns a copy of every note not sealed yet, in emission order.
func (b *Book) Notes() []Note {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Note, len(b.live))
	for k, n := range b.live {
		out[k] = *n
	}
	return out
}

// Place consumes every note not yet placed and not expired, in emission
// order (R3.7), and returns them.
func (b *Book) Place() []Note {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Note
	for _, n := range b.pending {
		if !n.Placed && !n.Expired {
			n.Placed = true
			out = append(out, *n)
		}
	}
	clear(b.pending)
	b.pending = b.pending[:0]
	return out
}

// Consume places one note; a consumed or expired note throws (R3.7).
func (b *Book) Consume(id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.byID[id]
	if !ok {
		k, num := b.number(id)
		switch {
		case num && b.placed.has(k):
			return fmt.Errorf("note %s already consumed", id)
		case num && b.existed.has(k):
			return fmt.Errorf("note %s expired", id)
		}
		return fmt.Errorf("note %s does not exist in session %s", id, b.session)
	}
	switch {
	case n.Placed:
		return fmt.Errorf("note %s already consumed", id)
	case n.Expired:
		return fmt.Errorf("note %s expired", id)
	}
	n.Placed = true
	return nil
}

// MarkConsumed records a consumption read back from the journal.
func (b *Book) MarkConsumed(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n, ok := b.byID[id]; ok {
		n.Placed = true
	}
}

// Seal expires every note never placed (turn end) and returns the notes it
// sealed, as they are now. Sealed notes can no longer change: they leave
// memory, and only whether each was placed is kept.
func (b *Book) Seal() []Note {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Note, len(b.live))
	for k, n := range b.live {
		if !n.Placed {
			n.Expired = true
		}
		out[k] = *n
		if num, ok := b.number(n.ID); ok {
			b.existed.set(num)
			if n.Placed {
				b.placed.set(num)
			}
		}
	}
	clear(b.live)
	b.live = b.live[:0]
	clear(b.pending)
	b.pending = b.pending[:0]
	clear(b.byID)
	return out
}

// Get returns a note not sealed yet by id.
func (b *Book) Get(id string) (Note, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.byID[id]
	if !ok {
		return Note{}, false
	}
	return *n, true
}

// bitset is a set of small positive numbers.
type bitset []uint64

func (s *bitset) set(k int) {
	for k/64 >= len(*s) {
		*s = append(*s, 0)
	}
	(*s)[k/64] |= 1 << (k % 64)
}

func (s bitset) has(k int) bool { return k/64 < len(s) && s[k/64]&(1<<(k%64)) != 0 }

// LoopEnd is what the host gets when a turn's loop ends: its own addenda
// and the behaviors' notes, side by side; neither replaces the other (R3.8).
type LoopEnd struct {
	Addenda []string `json:"addenda"`
	Notes   []Note   `json:"notes"`
}

// Merge joins host addenda with behavior notes.
func Merge(addenda []string, notes []Note) LoopEnd {
	return LoopEnd{Addenda: append([]string{}, addenda...), Notes: append([]Note{}, notes...)}
}
