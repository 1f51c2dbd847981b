package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// Pins across crashes (R2.5, R3.11). attune resolves the new selection and
// stores it as the instance's pending pin; the pin the instance runs is
// replaced only when the next turn starts. An instance brought back from the
// store (a restart, a hydration) therefore runs what it ran before: in the
// middle of a turn, the pin that turn's turn-begin entry names; between
// turns, its saved pin; and a pending re-attunement is pending again and
// applies at the next turn start.

// pendingKind is the store record kind of pending pins, keyed by instance.
const pendingKind = "pin-pending"

func (e *Engine) savePending(ctx context.Context, id string, p *pin.Pin) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return e.st.PutRecord(ctx, pendingKind, id, data)
}

// loadPending returns the instance's pending pin, or nil.
func (e *Engine) loadPending(ctx context.Context, id string) (*pin.Pin, error) {
	data, err := e.st.GetRecord(ctx, pendingKind, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p pin.Pin
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, errorf(CodeStore, "instance %s: its pending pin cannot be read: %v", id, err)
	}
	return &p, nil
}

// promotePending makes a pending pin the instance's pin (at a turn start).
func (e *Engine) promotePending(ctx context.Context, id string, p *pin.Pin) error {
	if err := pin.Save(ctx, e.st, id, p); err != nil {
		return err
	}
	return e.st.DeleteRecord(ctx, pendingKind, id)
}

// pinHash is the hash of p's blob (regSet.pinBlob), without storing it.
func pinHash(p *pin.Pin) (string, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	return store.BlobHash(data), nil
}

// restorePins sets the registries of an instance whose session was just
// read from its journal: an open turn runs the pin its turn-begin entry
// names, and a stored pending pin becomes the pending set again. The caller
// holds i.mu or has not published i yet.
func (i *Instance) restorePins(ctx context.Context) error {
	sess := i.sess.Load()
	if sess.inTurn && sess.turnPin != "" {
		// the hash alone: the pin the turn runs was stored when the turn
		// began, so bringing the instance back writes nothing
		sha, err := pinHash(i.cur.Load().pin)
		if err != nil {
			return err
		}
		if sha != sess.turnPin {
			p, err := loadPinBlobFrom(ctx, i.e.st, sess.turnPin)
			if err != nil {
				return errorf(CodePinMissing, "instance %s: turn %d runs pin %s, which the store no longer holds: %v", i.id, sess.turn, sess.turnPin, err)
			}
			set, err := i.e.newSet(ctx, i, p)
			if err != nil {
				return wrapErr(CodeProgram, err, "instance "+i.id)
			}
			if old := i.cur.Swap(set); old != nil {
				old.release()
			}
			i.e.feed.watch(ctx, set)
		}
	}
	p, err := i.e.loadPending(ctx, i.id)
	if err != nil || p == nil {
		return err
	}
	set, err := i.e.newSet(ctx, i, p)
	if err != nil {
		return wrapErr(CodeProgram, err, "attune "+i.id)
	}
	if i.pending != nil {
		i.pending.release()
	}
	i.pending = set
	return nil
}
