package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/attune-dev/attune/session"
)

// Deliveries (R3.10). Every answer the host gives while a turn is open is
// a delivery: admit/read, a host tool's core, the floor's verdict, and any
// kind added later (host libraries, callbacks). All of them go through
// deliver, which journals them in a session and answers them from the
// journal in a replay, so a replay never calls the host.

// deliver answers one question put to the host: kind names what is asked
// (session.Read, session.Core, session.Floor, or a kind of its own such as
// "lib"), key which one (the admit/read key, the tool path, the library
// function). In a session ask runs, and while a turn is open its answer
// (or its error) is journaled. In a replay ask never runs: the answer is
// the next one the journal recorded for (kind, key) in the step being
// replayed; a step that needs an answer the journal lacks is a divergence
// of the replay, and the caller gets an error saying so.
//
// The answer is stored as JSON: it must be plain data (or a value that
// encodes to it), and a replay returns it as JSON decodes it.
func (i *Instance) deliver(ctx context.Context, kind, key string, ask func(context.Context) (any, error)) (any, error) {
	return i.deliverFor(ctx, kind, key, "", ask)
}

// deliverFor is deliver for a question asked on behalf of call id callID
// (the asking frame's): the answer is journaled under it, and a replay
// gives it the answer recorded under that id first, so hooks that run in
// parallel and ask the same question get their own answers back.
func (i *Instance) deliverFor(ctx context.Context, kind, key, callID string, ask func(context.Context) (any, error)) (any, error) {
	ss := i.sess.Load()
	if rp := ss.rp; rp != nil {
		en, ok := rp.next(kind, key, callID)
		if !ok {
			return nil, fmt.Errorf("replay: the journal has no %s delivery for %q in this step", kind, key)
		}
		if en.Error != "" {
			if en.NotPlain != "" {
				return en.Value, &Error{Code: CodeNotPlain, Message: en.Error}
			}
			return en.Value, errors.New(en.Error)
		}
		return en.Value, nil
	}
	v, err := ask(ctx)
	if ss.journaling.Load() {
		en := deliveryEntry(kind, key)
		en.Value, en.CallID = v, callID
		if err != nil {
			en.Error = err.Error()
			if CodeOf(err) == CodeNotPlain {
				en.NotPlain = "value"
			}
		}
		if ne := ss.journal(en); ne != nil {
			// an answer with no JSON form: journaled as the failure it is
			// now, which the question gets (notplain.go)
			return nil, ne
		}
	}
	return v, err
}

// delivering reports whether a host answer given now is journaled (a turn
// is open) or read from the journal (a replay runs).
func (s *sessionState) delivering() bool {
	return s.rp != nil || s.journaling.Load()
}

// deliveryEntry is the journal entry of one delivery, before its answer.
// The first kinds keep the fields they were always journaled with.
func deliveryEntry(kind, key string) session.Entry {
	switch kind {
	case session.Read:
		return session.Entry{Type: session.Read, Key: key}
	case session.Core, session.Floor:
		return session.Entry{Type: kind, Path: key}
	}
	return session.Entry{Type: session.Delivery, Kind: kind, Key: key}
}

// deliveryKey is the (kind, key) of a delivery entry; ok is false for an
// entry that is no delivery.
func deliveryKey(en session.Entry) (string, bool) {
	switch en.Type {
	case session.Read:
		return session.Read + "\x00" + en.Key, true
	case session.Core, session.Floor:
		return en.Type + "\x00" + en.Path, true
	case session.Delivery:
		return en.Kind + "\x00" + en.Key, true
	}
	return "", false
}

// hostCore runs a host tool's core under the host timeout: a delivery
// (journaled while a turn is open, answered from the journal in a replay).
// in and at are those of timedCore, for a core run at once.
func (i *Instance) hostCore(ctx context.Context, te *toolEntry, callID string, args any, marks []string, in *lazyDeadline, at time.Time, ch *chain) (any, error) {
	if !i.sess.Load().delivering() {
		return i.timedCore(ctx, in, at, te, callID, args, marks, ch) // nothing to journal or replay: no closure to allocate
	}
	return i.deliverFor(ctx, session.Core, te.path, callID, func(ctx context.Context) (any, error) {
		return i.timedCore(ctx, nil, time.Time{}, te, callID, args, marks, ch)
	})
}

// floorVerdict asks the host's floor about a call in the chain (R4.4): a
// delivery, so a replay reads the verdict from the journal and never asks
// the host again. A floor that does not answer in time refuses; err says
// why (host-timeout, cancelled).
func (i *Instance) floorVerdict(ctx context.Context, c FloorCall) (reason string, refused bool, err error) {
	if !i.sess.Load().delivering() {
		return i.e.runFloor(ctx, c)
	}
	v, err := i.deliverFor(ctx, session.Floor, c.Path, c.CallID, func(ctx context.Context) (any, error) {
		reason, refused, err := i.e.runFloor(ctx, c)
		return map[string]any{"refused": refused, "reason": reason}, err
	})
	if err != nil {
		return err.Error(), true, err
	}
	m, _ := v.(map[string]any)
	reason, _ = m["reason"].(string)
	refused, _ = m["refused"].(bool)
	return reason, refused, nil
}

// replayer answers the host's part of a replay from the journal (R3.10)
// and collects what the replay emitted.
type replayer struct {
	mu sync.Mutex
	// windowed: the journal records each step's deliveries before the
	// step's own entry, so a step is answered from its own window first,
	// then from what earlier windows left unasked (a harness that runs
	// calls in parallel begins them all before it ends the first). Journals
	// written before that are answered from per-key queues.
	windowed bool
	queues   map[string][]session.Entry
	left     map[string][]session.Entry
	notes    []session.Note
	// missing lists the answers a step asked for that the journal lacks.
	missing []string
}

func newReplayer(entries []session.Entry) *replayer {
	rp := &replayer{queues: map[string][]session.Entry{}, left: map[string][]session.Entry{}}
	for _, en := range entries {
		if en.Type == session.TurnBegin {
			rp.windowed = en.CallID != ""
			break
		}
	}
	if !rp.windowed {
		rp.fill(entries)
	}
	return rp
}

// window makes the deliveries of one step's entries the ones to answer
// from (windowed journals only).
func (rp *replayer) window(entries []session.Entry) {
	if !rp.windowed {
		return
	}
	rp.mu.Lock()
	for k, q := range rp.queues {
		if len(q) > 0 {
			rp.left[k] = append(rp.left[k], q...)
		}
	}
	clear(rp.queues)
	rp.mu.Unlock()
	rp.fill(entries)
}

func (rp *replayer) fill(entries []session.Entry) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for _, en := range entries {
		if k, ok := deliveryKey(en); ok {
			rp.queues[k] = append(rp.queues[k], en)
		}
	}
}

func (rp *replayer) next(kind, key, callID string) (session.Entry, bool) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	k := kind + "\x00" + key
	// the answer recorded for this call, in this step's window or an
	// earlier one; else the first one recorded for another call
	for _, exact := range []bool{callID != "", false} {
		for _, m := range []map[string][]session.Entry{rp.queues, rp.left} {
			if en, ok := take(m, k, callID, exact); ok {
				return en, true
			}
		}
	}
	rp.missing = append(rp.missing, fmt.Sprintf("%s %q", kind, key))
	return session.Entry{}, false
}

// take removes and returns the first answer queued under k: recorded for
// callID when exact, else any.
func take(m map[string][]session.Entry, k, callID string, exact bool) (session.Entry, bool) {
	q := m[k]
	at := -1
	for j, en := range q {
		if !exact || en.CallID == callID {
			at = j
			break
		}
	}
	if at < 0 {
		return session.Entry{}, false
	}
	en := q[at]
	m[k] = append(q[:at:at], q[at+1:]...)
	return en, true
}

// takeMissing returns and clears the answers asked for and not found.
func (rp *replayer) takeMissing() []string {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	m := rp.missing
	rp.missing = nil
	return m
}

// noteCount is how many notes the replay has emitted so far.
func (rp *replayer) noteCount() int {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return len(rp.notes)
}

// notesSince returns the notes emitted since noteCount returned n.
func (rp *replayer) notesSince(n int) []session.Note {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return append([]session.Note(nil), rp.notes[n:]...)
}

// registrySeed seeds a registry's math.random from the session, the
// instance and the program (R1.11, R3.10): a replay, which runs fresh
// registries of the same session, draws the same numbers the session drew.
func registrySeed(set *regSet, program string) uint64 {
	sess := ""
	if set.inst != nil {
		sess = set.inst.rec.Session
	}
	return seedOf(sess + "\x00" + set.instance + "\x00" + program)
}
