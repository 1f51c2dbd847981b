package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// Reading a stored session back, for `attune record` (a scenario made from
// a real session): the instances of a session, each with its record, the
// pin its first turn ran and its journal. The journal is read with the
// session package's own functions and checked against what this engine
// writes; the seeding of shared owners goes through the engine too, so the
// log names and entry shapes stay the engine's business.

// Errors of LoadSession, for errors.Is.
var (
	// ErrNoSession: no instance in the store ran that session.
	ErrNoSession = errors.New("no such session")
	// ErrNewerJournal: the journal holds entries this engine does not know.
	ErrNewerJournal = errors.New("journal written by a newer engine")
)

// Recording is a stored session read back.
type Recording struct {
	Session   string
	Instances []RecordedInstance // sorted by id
}

// RecordedInstance is one instance of a recorded session.
type RecordedInstance struct {
	ID      string
	Bot     string
	Kind    string
	Role    string
	Parent  string
	Session string
	// Pin is the pin of the instance's first recorded turn (the pin it
	// runs now when the journal has no turn).
	Pin     *pin.Pin
	Entries []session.Entry
}

// LoadSession reads a session from a store: id is a session id, or the id
// of an instance (its session). Errors wrap ErrNoSession, ErrNewerJournal
// or ErrPinMissing, with what to do.
func LoadSession(ctx context.Context, st store.Store, id string) (*Recording, error) {
	_, recs, err := instanceRecords(ctx, st)
	if err != nil {
		return nil, err
	}
	sess := id
	var ids []string
	for k, rec := range recs {
		if rec.Session == id {
			ids = append(ids, k)
		}
	}
	if len(ids) == 0 {
		if rec, ok := recs[id]; ok {
			sess, ids = rec.Session, []string{id}
		}
	}
	if len(ids) == 0 {
		var known []string
		for _, rec := range recs {
			known = append(known, rec.Session)
		}
		sort.Strings(known)
		if len(known) > 8 {
			known = append(known[:8], "...")
		}
		have := "the store holds no session"
		if len(known) > 0 {
			have = "sessions in the store: " + strings.Join(known, ", ")
		}
		return nil, fmt.Errorf("session %q: %w (neither a session id nor an instance id; %s)", id, ErrNoSession, have)
	}
	sort.Strings(ids)
	out := &Recording{Session: sess}
	for _, iid := range ids {
		rec := recs[iid]
		entries, err := session.OpenJournal(st, sess, iid).Entries(ctx)
		if err != nil {
			return nil, fmt.Errorf("session %s, instance %s: %w", sess, iid, err)
		}
		if err := checkJournal(sess, iid, entries); err != nil {
			return nil, err
		}
		ri := RecordedInstance{ID: iid, Bot: rec.Bot, Kind: rec.Kind, Role: rec.Role, Parent: rec.Parent, Session: sess, Entries: entries}
		for _, en := range entries {
			if en.Type == session.TurnBegin && en.Pin != "" {
				p, err := loadPinBlobFrom(ctx, st, en.Pin)
				if err != nil {
					return nil, errorf(CodePinMissing, "session %s, instance %s: turn %d ran pin %s, which the store no longer holds: %v", sess, iid, en.Turn, en.Pin, err)
				}
				ri.Pin = p
				break
			}
		}
		if ri.Pin == nil {
			p, err := pin.Load(ctx, st, iid)
			if err != nil {
				return nil, errorf(CodePinMissing, "session %s, instance %s: no pin: %v", sess, iid, err)
			}
			ri.Pin = p
		}
		out.Instances = append(out.Instances, ri)
	}
	return out, nil
}

func loadPinBlobFrom(ctx context.Context, st store.Store, sha string) (*pin.Pin, error) {
	data, err := st.GetBlob(ctx, sha)
	if err != nil {
		return nil, err
	}
	var p pin.Pin
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// journalTypes are the entry types this engine writes.
var journalTypes = map[string]bool{
	session.TurnBegin: true, session.TurnEnd: true, session.RoundBegin: true, session.RoundEnd: true,
	session.Read: true, session.Core: true, session.Tool: true, session.Emit: true, session.Consume: true,
	session.Method: true, session.Command: true, session.Repin: true, entryToolOpen: true,
	session.Floor: true, session.Delivery: true, session.Trace: true,
}

// checkJournal refuses a journal written by a newer engine: a turn stamped
// with a later version, or an entry type this engine never writes.
func checkJournal(sess, inst string, entries []session.Entry) error {
	for k := range entries {
		if err := CheckJournalEntry(sess, inst, k+1, &entries[k]); err != nil {
			return err
		}
	}
	return nil
}

// CheckJournalEntry refuses entry n (from 1) of an instance's journal when
// a newer engine wrote it (a later version stamp, or a type this engine
// never writes); the error wraps ErrNewerJournal and says what to do. A
// reader of the journal that decodes it itself checks each entry with it.
func CheckJournalEntry(sess, inst string, n int, en *session.Entry) error {
	if en.Engine != "" && versionNumber(en.Engine) > versionNumber(Version) {
		return fmt.Errorf("session %s, instance %s: entry %d: %w (%s; this is %s): use an attune built from that version or later",
			sess, inst, n, ErrNewerJournal, en.Engine, Version)
	}
	if !journalTypes[en.Type] {
		return fmt.Errorf("session %s, instance %s: entry %d has type %q, which engine %s does not know: %w; use a newer attune",
			sess, inst, n, en.Type, Version, ErrNewerJournal)
	}
	return nil
}

// versionNumber reads "attune-N" (0 when it is not that form).
func versionNumber(v string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(v, "attune-"))
	if err != nil || !strings.HasPrefix(v, "attune-") {
		return 0
	}
	return n
}

// maxUnflushed bounds the entries host calls outside a turn leave in the
// journal's buffer (they are flushed with the next boundary, or when this
// many wait).
const maxUnflushed = 64

// journalTool is the journal entry of a tool call made by the host, with its
// outcome.
func journalTool(path string, args any, out Outcome) session.Entry {
	return session.Entry{Type: session.Tool, Path: path, Value: args, CallID: out.CallID,
		Status: out.Status, Result: out.Result, Error: out.Error, Code: errCode(out.Err), Reason: out.Reason, RefusedBy: out.RefusedBy, RefusedAt: out.RefusedAt, Diagnostics: out.Diagnostics,
		Guards: out.guards.list()}
}

// firstRevs returns, before a session's first journaled call (a turn
// begin, a host method call, a command), the revisions of the project and
// global owners its pin declares, by owner address (NAME@SCOPE): what the
// session found in place, so that a recording can start from it. Later
// calls, and a replay: nil. A store error leaves them out.
func (i *Instance) firstRevs(ctx context.Context, set *regSet) map[string]int64 {
	s := i.sess.Load()
	if s == nil || s.rp != nil || s.begun.Load() {
		return nil
	}
	var revs map[string]int64
	for name, rd := range set.reducers {
		for _, sc := range rd.scopes {
			if sc == ScopeSession {
				continue
			}
			key := "-"
			if sc == ScopeProject {
				key = i.e.project()
			}
			n, err := i.e.st.Length(ctx, ownerLog(sc, key, name))
			if err != nil {
				return nil
			}
			if revs == nil {
				revs = map[string]int64{}
			}
			revs[name+"@"+sc] = n
		}
	}
	return revs
}

// SharedOwnerEntries returns the first n entries of a project or global
// owner's log (addr is NAME@SCOPE), as plain data: what a recording seeds.
func (e *Engine) SharedOwnerEntries(ctx context.Context, addr string, n int64) ([]any, error) {
	log, err := e.sharedLog(addr)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	raw, err := e.st.Read(ctx, log, 0, int(n))
	if err != nil {
		return nil, err
	}
	out := make([]any, len(raw))
	for k, r := range raw {
		if err := json.Unmarshal(r.Data, &out[k]); err != nil {
			return nil, fmt.Errorf("owner %s entry %d: %w", addr, r.Seq, err)
		}
	}
	return out, nil
}

// SeedOwner appends entries to a project or global owner's log: a
// recorded scenario puts back what its session found in place. An entry is
// either a log entry as SharedOwnerEntries returns it ({rev, action}) or a
// bare action (a map with a string "type" and no "action"), which is
// recorded as proposed by reducer revision 1. Anything else is refused
// with the entry's number, before anything is appended.
func (e *Engine) SeedOwner(ctx context.Context, addr string, entries []any) error {
	log, err := e.sharedLog(addr)
	if err != nil {
		return err
	}
	data := make([][]byte, len(entries))
	for k, en := range entries {
		en, err := seedEntry(en)
		if err == nil {
			data[k], err = json.Marshal(en)
		}
		if err != nil {
			return &Error{Code: CodeInvalid, Message: fmt.Sprintf("owner %s entry %d: %v", addr, k+1, err)}
		}
	}
	if len(data) == 0 {
		return nil
	}
	if _, err := e.st.Append(ctx, log, store.Any, data, nil); err != nil {
		return err
	}
	e.owners.invalidate(log)
	return nil
}

// seedEntry is en as a stored log entry: {rev, action} as it is, a bare
// action wrapped at revision 1.
func seedEntry(en any) (any, error) {
	m, ok := en.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want an action (a table with a string type) or a log entry {rev = N, action = {...}}, got %T", en)
	}
	if _, ok := m["action"]; ok {
		if rev, ok := m["rev"].(int64); ok && rev >= 1 {
			return en, nil
		}
		if rev, ok := m["rev"].(float64); ok && rev >= 1 && rev == float64(int64(rev)) {
			return en, nil
		}
		return nil, errors.New("a log entry needs rev, an integer of at least 1, beside its action")
	}
	if t, ok := m["type"].(string); !ok || t == "" {
		return nil, errors.New("an action needs type, a string")
	}
	return map[string]any{"rev": 1, "action": m}, nil
}

func (e *Engine) sharedLog(addr string) (string, error) {
	name, scope, err := splitOwner(addr)
	if err != nil {
		return "", err
	}
	switch scope {
	case ScopeProject:
		return ownerLog(scope, e.project(), name), nil
	case ScopeGlobal:
		return ownerLog(scope, "-", name), nil
	}
	return "", fmt.Errorf("owner %s: only project and global owners are seeded (NAME@project, NAME@global)", addr)
}

// JournalStep is one step of a journal (a boundary, a tool, method or
// command call made by the host): its entry, the entries recorded during
// it (deliveries, notes, consumptions) and the notes it emitted. The
// journal records what happens during a step before the step's own entry.
type JournalStep struct {
	Entry  session.Entry
	Window []session.Entry
	Notes  []session.Note
}

// JournalSteps splits a journal into its steps, the way Replay reads it;
// tail is what follows the last step.
func JournalSteps(entries []session.Entry) (steps []JournalStep, tail []session.Entry) {
	from := 0
	for k, en := range entries {
		if !isStep(en) {
			continue
		}
		win := entries[from:k]
		from = k + 1
		steps = append(steps, JournalStep{Entry: en, Window: win, Notes: stepNotes(win, en)})
	}
	return steps, entries[from:]
}
