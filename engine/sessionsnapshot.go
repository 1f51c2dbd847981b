package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"

	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// Sessions brought back from a snapshot. Bringing an instance back reads
// its journal; a host that does that for every event (a hook process)
// would pay for the whole session each time. So the state at a turn end
// is kept: the counters, the notebook (sealed at a turn end, so a count
// and two bits a note) and the calls a harness left open (ToolBegin), with
// the turn-end entry's seq and the hash of its stored bytes. An instance is
// brought back from its last snapshot plus the entries after it: the cost
// is that of the open turn, not of the session.
//
// A snapshot is taken by whoever brings the instance back (it needs no
// boundary to run): when the journal holds a turn end at least
// sessionSnapshotEvery entries past the snapshot read, the state there is stored.
// It is checked when read: the entry at its seq must be the same bytes, so
// a journal rolled back (truncated and written again) or replaced is read
// from its start instead. A snapshot that cannot be stored is not an
// error: the next bring-back reads further.

// sessionSnapshotKind is the store record kind of snapshots, keyed by journal log.
const sessionSnapshotKind = "journal-snapshot"

// sessionSnapshotEvery is how many entries past the last snapshot a turn end
// must be before a newer snapshot is stored.
const sessionSnapshotEvery = 32

type sessionSnapshot struct {
	Seq       int64             `json:"seq"` // the turn-end entry's
	Sum       string            `json:"sum"` // sha256 of its stored bytes
	Turn      int               `json:"turn"`
	Round     int               `json:"round,omitempty"`
	Gen       int               `json:"gen,omitempty"`
	Activated bool              `json:"activated,omitempty"`
	Input     any               `json:"input,omitempty"`
	Fresh     bool              `json:"fresh,omitempty"`
	TurnPin   string            `json:"turn_pin,omitempty"`
	Book      session.BookState `json:"book"`
	Open      []session.Entry   `json:"open,omitempty"` // calls left open (ToolBegin), in order
}

// sessionBase is where a session state was read from: the seq of the
// snapshot (0: the start) and the calls open there.
type sessionBase struct {
	seq  int64
	open []session.Entry
}

func entrySum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// load reads the session from its last snapshot, or from the start.
func (s *sessionState) load(ctx context.Context) error {
	st := s.i.e.st
	log := session.LogName(s.i.rec.Session, s.i.id)
	var snap *sessionSnapshot
	if data, err := st.GetRecord(ctx, sessionSnapshotKind, log); err == nil {
		snap = &sessionSnapshot{}
		if json.Unmarshal(data, snap) != nil || snap.Seq < 1 {
			snap = nil
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var entries []session.Entry
	var raw []store.Entry
	if snap != nil {
		var err error
		entries, raw, err = s.j.ReadFrom(ctx, snap.Seq-1)
		if err != nil {
			return err
		}
		if len(raw) > 0 && raw[0].Seq == snap.Seq && entries[0].Type == session.TurnEnd && entrySum(raw[0].Data) == snap.Sum {
			s.restore(snap)
			entries, raw = entries[1:], raw[1:]
		} else {
			snap = nil
		}
	}
	if snap == nil {
		var err error
		if entries, raw, err = s.j.ReadFrom(ctx, 0); err != nil {
			return err
		}
	}
	// the last turn end read: the state there is the next snapshot's, and
	// where findOpen starts reading
	last := -1
	for k := range entries {
		if entries[k].Type == session.TurnEnd {
			last = k
		}
	}
	s.adopt(entries[:last+1])
	if last >= 0 {
		open := slices.Clone(s.from.open)
		for _, en := range entries[:last+1] {
			open = trackOpen(open, en)
		}
		if raw[last].Seq-s.from.seq >= sessionSnapshotEvery {
			if data, err := json.Marshal(s.capture(raw[last], open)); err == nil {
				_ = st.PutRecord(ctx, sessionSnapshotKind, log, data) // an optimization: a failure costs the next read
			}
		}
		s.from = sessionBase{seq: raw[last].Seq, open: open}
	}
	s.adopt(entries[last+1:])
	s.journaling.Store(s.inTurn)
	s.begun.Store(s.j.Head() > 0)
	return nil
}

// trackOpen follows the calls left open through one entry.
func trackOpen(open []session.Entry, en session.Entry) []session.Entry {
	switch en.Type {
	case entryToolOpen:
		return append(open, en)
	case session.Tool:
		for k := range open {
			if open[k].CallID == en.CallID {
				return slices.Delete(slices.Clone(open), k, k+1)
			}
		}
	}
	return open
}

// restore sets the state a snapshot kept.
func (s *sessionState) restore(snap *sessionSnapshot) {
	s.turn, s.round, s.gen = snap.Turn, snap.Round, snap.Gen
	s.inTurn, s.inRound = false, false
	s.activated, s.input, s.fresh, s.turnPin = snap.Activated, snap.Input, snap.Fresh, snap.TurnPin
	s.book.Restore(snap.Book)
	s.from = sessionBase{seq: snap.Seq, open: snap.Open}
}

// capture is the state just after the turn-end entry en (the notebook is
// sealed there).
func (s *sessionState) capture(en store.Entry, open []session.Entry) sessionSnapshot {
	return sessionSnapshot{Seq: en.Seq, Sum: entrySum(en.Data), Turn: s.turn, Round: s.round, Gen: s.gen,
		Activated: s.activated, Input: s.input, Fresh: s.fresh, TurnPin: s.turnPin, Book: s.book.State(), Open: open}
}

// openCalls returns the calls left open now: those open at the state's
// base, then the journal after it (another process may have written it).
func (s *sessionState) openCalls(ctx context.Context) ([]session.Entry, error) {
	entries, _, err := s.j.ReadFrom(ctx, s.from.seq)
	if err != nil {
		return nil, err
	}
	open := slices.Clone(s.from.open)
	for _, en := range entries {
		open = trackOpen(open, en)
	}
	return open, nil
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
