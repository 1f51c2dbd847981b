package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// ReplayResult is what a replay emitted: returned, never journaled or placed.
type ReplayResult struct {
	Notes []Note
	// Steps counts the recorded boundaries and calls that were re-run.
	Steps int
	// Diverged lists every way a replayed step differed from the recorded
	// one: its status, refusal, error, result or notes, or an answer of the
	// host it needed that the journal lacks (R3.10). Empty: the replay
	// reproduced the session.
	Diverged []Divergence
}

// Replay re-runs every recorded boundary and tool call of the instance's
// session, in order, through fresh registries of the session's pin,
// answering admit/read, host cores and the floor from the journal without
// calling the host; method calls return their recorded results (R3.10,
// R5.6). Each step's outcome and notes are compared with the recorded
// ones, and every difference is reported in Diverged.
func (i *Instance) Replay(ctx context.Context) (ReplayResult, error) {
	if i.closed.Load() {
		return ReplayResult{}, errorf(CodeNotRunning, "instance %s is not running", i.id)
	}
	entries, err := i.sess.Load().j.Entries(ctx)
	if err != nil {
		return ReplayResult{}, err
	}
	p, err := pin.Load(ctx, i.e.st, i.id)
	if err != nil {
		return ReplayResult{}, wrapErr(CodeReplay, err, "replay "+i.id)
	}
	// A shadow instance: same id, session and bot, fresh registries, not live.
	sh := &Instance{e: i.e, rec: i.rec, id: i.id, idLV: i.idLV, sessLV: i.sessLV, botLV: i.botLV, bot: i.bot, ceiling: i.ceiling, nonce: "replay"}
	rp := newReplayer(entries)
	shs := &sessionState{i: sh, j: i.sess.Load().j, book: session.NewBook(i.rec.Session + ":replay"), rp: rp}
	sh.sess.Store(shs)
	set, err := i.e.newSet(ctx, sh, p)
	if err != nil {
		return ReplayResult{}, wrapErr(CodeReplay, err, "replay "+i.id)
	}
	sh.cur.Store(set)
	defer sh.release()
	pinSHA, _ := set.pinBlob(ctx)
	res := ReplayResult{}
	from := 0 // the first entry of the next step's window
	for k, en := range entries {
		shs.gen = en.Gen
		if !isStep(en) {
			continue
		}
		win := entries[from:k]
		from = k + 1
		rp.window(win)
		n0 := rp.noteCount()
		ctx := withHarnessValue(ctx, en.Harness) // the records get the harness data the session's got
		var got stepOutcome
		ran := true
		switch en.Type {
		case session.TurnBegin:
			if shs.inTurn {
				_, _ = sh.EndTurn(ctx)
				n0 = rp.noteCount()
			}
			if en.Pin != "" && en.Pin != pinSHA {
				// the turn ran another pin (a re-attunement): replay it with that one
				np, perr := loadPinBlob(ctx, i.e, en.Pin)
				if perr != nil {
					return res, wrapErr(CodePinMissing, perr, "replay "+i.id)
				}
				ns, serr := i.e.newSet(ctx, sh, np)
				if serr != nil {
					return res, wrapErr(CodeProgram, serr, "replay "+i.id)
				}
				if old := sh.cur.Swap(ns); old != nil {
					old.release()
				}
				pinSHA = en.Pin
			}
			var r BoundaryResult
			r, err = sh.BeginTurn(ctx, TurnInput{Input: replayValue(en, "input", en.Input), ContextFresh: en.ContextFresh})
			if en.NotPlain != "" && CodeOf(err) == CodeNotPlain {
				err = nil // the turn failed as recorded: compared below
			}
			got = boundaryOutcome(r)
		case session.RoundBegin:
			ran = shs.inTurn
			if ran {
				var r BoundaryResult
				r, err = sh.BeginRound(ctx)
				got = boundaryOutcome(r)
			}
		case session.RoundEnd:
			ran = shs.inRound
			if ran {
				var r BoundaryResult
				r, err = sh.EndRound(ctx, RoundEnd{HostContinue: en.HostContinue, Output: en.Output})
				got = boundaryOutcome(r)
			}
		case session.TurnEnd:
			ran = shs.inTurn
			if ran {
				var r BoundaryResult
				r, err = sh.EndTurn(ctx)
				got = boundaryOutcome(r)
			}
		case session.Tool:
			o := sh.Tool(ctx, ToolCall{Path: en.Path, Args: replayValue(en, "args", en.Value), CallID: en.CallID})
			got = stepOutcome{Status: o.Status, Reason: o.Reason, RefusedBy: o.RefusedBy, Error: o.Error, Code: errCode(o.Err), Result: o.Result, Diagnostics: o.Diagnostics}
		case session.Method:
			if !shs.inTurn { // outside a turn: journaled for recordings, not replayed
				continue
			}
			o := replayMethod(ctx, sh, en)
			got = stepOutcome{Status: o.Status, Reason: o.Reason, RefusedBy: o.RefusedBy, Error: o.Error, Code: errCode(o.Err), Result: o.Result}
		case session.Command:
			if !shs.inTurn {
				continue
			}
			o := sh.command(ctx, en.Name, fmt.Sprint(en.Input), en.CallID)
			got = stepOutcome{Status: o.Status, Error: o.Error, Code: errCode(o.Err)}
		}
		if err != nil {
			return res, wrapErr(CodeReplay, err, "replay "+i.id)
		}
		if !ran {
			res.Diverged = append(res.Diverged, Divergence{Entry: k, Step: stepName(en), Turn: en.Turn, Round: en.Round, CallID: en.CallID,
				Field: "replayed", Recorded: "ran", Replayed: "not run: the replay has no open turn or round here"})
			continue
		}
		res.Steps++
		res.Diverged = append(res.Diverged, compareStep(k, en, got, stepNotes(win, en), rp.notesSince(n0), rp.takeMissing(), rp.windowed)...)
	}
	res.Notes = rp.notes
	return res, nil
}

// Hydrate rebuilds the instance's session from its journal, as after a
// crash (also in the middle of a turn): the open turn and round, the notes
// and their consumption, with fresh registries of the same pin. It runs no
// hook and emits nothing (R3.11).
func (i *Instance) Hydrate(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closed.Load() {
		return errorf(CodeNotRunning, "instance %s is not running", i.id)
	}
	p, err := pin.Load(ctx, i.e.st, i.id)
	if err != nil {
		return wrapErr(CodeProgram, err, "hydrate "+i.id)
	}
	set, err := i.e.newSet(ctx, i, p)
	if err != nil {
		return wrapErr(CodeProgram, err, "hydrate "+i.id)
	}
	if err := i.sess.Load().flush(ctx); err != nil { // entries written behind reach the store first
		set.release()
		return err
	}
	sess, err := i.e.openSession(ctx, i)
	if err != nil {
		set.release()
		return err
	}
	if old := i.cur.Swap(set); old != nil {
		old.release()
	}
	if i.turnSet != nil {
		i.turnSet.release()
		i.turnSet = nil
	}
	if i.pending != nil {
		i.pending.release()
		i.pending = nil
	}
	i.sess.Store(sess)
	if err := i.restorePins(ctx); err != nil { // R2.5, R3.11: pinning.go
		return err
	}
	if sess.inTurn {
		if set := i.cur.Load(); set.acquire() {
			i.turnSet = set
		}
	}
	return nil
}

// Rollback rolls the session back to the end of turn toTurn: the journal
// and the session's owners return to what they were then. Project and
// global owners are never touched (R5.9).
func (i *Instance) Rollback(ctx context.Context, toTurn int) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	entries, err := i.sess.Load().j.Entries(ctx)
	if err != nil {
		return err
	}
	cut, revs := -1, map[string]int64(nil)
	if toTurn <= 0 {
		cut = 0
	}
	for k, en := range entries {
		if en.Type == session.TurnEnd && en.Turn == toTurn {
			cut, revs = k+1, en.Revs
		}
	}
	if cut < 0 {
		return errorf(CodeInvalid, "rollback %s: turn %d never ended in session %s", i.id, toTurn, i.rec.Session)
	}
	if err := truncateOwners(ctx, i, revs); err != nil {
		return err
	}
	gen := 0
	for _, en := range entries {
		if en.Gen > gen {
			gen = en.Gen
		}
	}
	// the stored state goes before the entries it covers: a process killed
	// in between leaves a journal read from its start (sessionsnapshot.go)
	j := i.sess.Load().j
	if err := j.Untrack(ctx); err != nil {
		return err
	}
	if err := i.e.st.DeleteRecord(ctx, sessionSnapshotKind, session.LogName(i.rec.Session, i.id)); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err := j.Truncate(ctx, cut); err != nil {
		return err
	}
	// The next boundaries get call ids of a new generation, so they never
	// collide with the rolled-back ones' recorded results.
	sess, err := i.e.openSession(ctx, i)
	if err != nil {
		return err
	}
	sess.gen = gen + 1
	if i.turnSet != nil {
		i.turnSet.release()
		i.turnSet = nil
	}
	i.sess.Store(sess)
	if sess.inTurn {
		if set, err := i.live(); err == nil {
			i.turnSet = set
		}
	}
	return nil
}

// loadPinBlob reads a pin stored as a blob by a turn entry.
func loadPinBlob(ctx context.Context, e *Engine, sha string) (*pin.Pin, error) {
	data, err := e.st.GetBlob(ctx, sha)
	if err != nil {
		return nil, errorf(CodePinMissing, "pin-missing: the pin of a recorded turn (sha256 %s): %w", sha, err)
	}
	var p pin.Pin
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
