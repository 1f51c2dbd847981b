package session

import (
	"context"
	"fmt"

	"github.com/attune-dev/attune/store"
)

// A Tracker follows a journal as it is stored, so that a state the
// journal's entries determine (the engine's compact state of a session)
// moves with every write instead of being read back from the journal. It
// is handed what it needs of each entry (a Fact) in the order of the
// entries' seqs: the entries this Journal writes, and those another writer
// appended before them, read back. A Journal has at most one Tracker.
type Tracker interface {
	// Keep reports whether the tracker wants the stored bytes of entries
	// of type typ (Fact.Data); other entries come without them.
	Keep(typ string) bool
	// Track is given the facts of the entries stored at seqs
	// n-len(facts)+1 .. n, in order, and the stored bytes of the last
	// (valid during the call only). The journal's write lock is held: calls
	// never overlap, and a later call continues where the last ended.
	Track(ctx context.Context, n int64, facts []Fact, last []byte)
}

// Fact is what a Tracker is given of one journal entry: its type and the
// scalar fields a session's state depends on, its encoded size, and, for
// the types the tracker keeps, the entry's stored bytes (which the tracker
// may keep: they are never reused).
type Fact struct {
	Type         string `json:"t"`
	Round        int    `json:"round,omitempty"`
	Status       Status `json:"status,omitempty"`
	Continue     bool   `json:"continue,omitempty"`
	HostContinue bool   `json:"host_continue,omitempty"`
	CallID       string `json:"call_id,omitempty"`
	Key          string `json:"key,omitempty"`
	ID           string `json:"id,omitempty"`
	Gen          int    `json:"gen,omitempty"`

	Size int    `json:"-"`
	Data []byte `json:"-"`
}

// untracked is Journal.tracked when no tracker follows the journal.
const untracked = -1

// fact is the Fact of e, encoded as data (j.mu held).
func (j *Journal) fact(e *Entry, data []byte) Fact {
	f := Fact{Type: e.Type, Round: e.Round, Status: e.Status, Continue: e.Continue, HostContinue: e.HostContinue,
		CallID: e.CallID, Key: e.Key, ID: e.ID, Gen: e.Gen, Size: len(data)}
	if j.track.Keep(e.Type) {
		f.Data = append([]byte(nil), data...)
	}
	return f
}

// Track has t follow the journal from seq at on. The entries stored after
// at are read now and given to t, then every entry stored later, as it is
// written. When at > 0, check is given the stored entry at seq at (read
// with them) and says whether t's state belongs there; when it does not,
// or the journal is shorter, nothing is tracked and Track returns false:
// the caller starts again from 0. The journal's head becomes the last seq
// read.
func (j *Journal) Track(ctx context.Context, t Tracker, at int64, check func(store.Entry) bool) (bool, error) {
	if err := j.Flush(ctx); err != nil {
		return false, err
	}
	j.wmu.Lock()
	defer j.wmu.Unlock()
	from := max(at-1, 0)
	raw, err := j.st.Read(ctx, j.log, from, 0)
	if err != nil {
		return false, err
	}
	if at > 0 {
		if len(raw) == 0 || raw[0].Seq != at || !check(raw[0]) {
			return false, nil
		}
		raw = raw[1:]
	}
	facts, err := decodeFacts(j.log, raw, t)
	if err != nil {
		return false, err
	}
	n := at
	if len(raw) > 0 {
		n = raw[len(raw)-1].Seq
		t.Track(ctx, n, facts, raw[len(raw)-1].Data)
	}
	j.mu.Lock()
	j.track, j.tracked, j.head = t, n, n
	j.facts = j.facts[:0]
	if len(j.ends) > 0 { // entries added meanwhile came without facts: nothing is tracked
		j.track, j.tracked = nil, untracked
	}
	j.mu.Unlock()
	return true, nil
}

// Tracking reports whether a tracker follows the journal: false once the
// journal was truncated or a write could not be followed.
func (j *Journal) Tracking() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.track != nil && j.tracked != untracked
}

// CatchUp flushes, then gives the tracker the entries another writer
// stored since the last it was given (none, usually: one read of the
// store), and moves the journal's head past them. It returns false when no
// tracker follows the journal.
func (j *Journal) CatchUp(ctx context.Context) (bool, error) {
	if err := j.Flush(ctx); err != nil {
		return false, err
	}
	j.wmu.Lock()
	defer j.wmu.Unlock()
	j.mu.Lock()
	t, at := j.track, j.tracked
	j.mu.Unlock()
	if t == nil || at == untracked {
		return false, nil
	}
	if err := j.follow(ctx, t, at, 0); err != nil {
		return false, err
	}
	return true, nil
}

// follow gives t the stored entries after seq at (at most limit of them;
// 0: all) and moves the tracked seq and the head past them (wmu held).
func (j *Journal) follow(ctx context.Context, t Tracker, at int64, limit int) error {
	raw, err := j.st.Read(ctx, j.log, at, limit)
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		return nil
	}
	facts, err := decodeFacts(j.log, raw, t)
	if err != nil {
		return err
	}
	n := raw[len(raw)-1].Seq
	t.Track(ctx, n, facts, raw[len(raw)-1].Data)
	j.mu.Lock()
	j.tracked, j.head = n, max(j.head, n)
	j.mu.Unlock()
	return nil
}

// trackWrite gives the tracker the facts of a write that stored its entries
// up to seq n, the last of them last (wmu held, j.mu not). Entries another
// writer stored before them are read back and given first; a journal that
// got shorter than what was tracked (truncated) is no longer tracked.
func (j *Journal) trackWrite(ctx context.Context, n int64, facts []Fact, last []byte) {
	j.mu.Lock()
	t, at := j.track, j.tracked
	j.mu.Unlock()
	if t == nil || at == untracked {
		return
	}
	first := n - int64(len(facts)) // the seq before this write's entries
	if first < at {
		j.untrack()
		return
	}
	if first > at { // another writer's entries came first
		if err := j.follow(ctx, t, at, int(first-at)); err != nil {
			j.untrack()
			return
		}
		j.mu.Lock()
		at = j.tracked
		j.mu.Unlock()
		if at != first {
			j.untrack()
			return
		}
	}
	t.Track(ctx, n, facts, last)
	j.mu.Lock()
	j.tracked = n
	j.mu.Unlock()
}

func (j *Journal) untrack() {
	j.mu.Lock()
	j.track, j.tracked = nil, untracked
	j.facts = nil
	j.mu.Unlock()
}

// Untrack flushes and stops the tracker: nothing written from now on
// reaches it (before a rollback, which truncates the journal).
func (j *Journal) Untrack(ctx context.Context) error {
	err := j.Flush(ctx)
	j.wmu.Lock()
	j.untrack()
	j.wmu.Unlock()
	return err
}

// decodeFacts decodes the facts of stored entries, on up to GOMAXPROCS
// goroutines for a long run of them.
func decodeFacts(log string, raw []store.Entry, t Tracker) ([]Fact, error) {
	out := make([]Fact, len(raw))
	one := func(from, to int) error {
		for k := from; k < to; k++ {
			f, err := ReadFact(raw[k].Data)
			if err != nil {
				return fmt.Errorf("journal %s entry %d: %w", log, raw[k].Seq, err)
			}
			out[k] = f
			out[k].Size = len(raw[k].Data)
			if t.Keep(out[k].Type) {
				out[k].Data = raw[k].Data
			}
		}
		return nil
	}
	if err := inParts(len(raw), one); err != nil {
		return nil, err
	}
	return out, nil
}
