package engine

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/attune-dev/attune/config"
	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/session"
)

// sessionState is an instance's view of its session: the journal, the
// notebook, the open turn and round. Rebuilt from the journal when an
// instance is brought back (restart, hydrate).
type sessionState struct {
	i    *Instance
	j    *session.Journal
	book *session.Book

	mu        sync.Mutex
	turn      int
	round     int
	inTurn    bool
	inRound   bool
	gen       int
	activated bool // the next round exists because an activating note asked
	input     any
	fresh     bool
	turnPin   string // the pin blob the open turn runs (its turn-begin entry's)
	traces    int    // trace lines journaled in the open turn (trace.go)

	journaling atomic.Bool              // a turn is open: tool calls are journaled
	begun      atomic.Bool              // the journal has an entry
	rp         *replayer                // set while replaying: the host is answered from the journal
	halt       atomic.Pointer[Halt]     // a halt not yet reported by a step (halt.go)
	user       []session.Note           // notes for the user, not yet taken (TakeUserNotes; mu)
	fold       atomic.Pointer[turnFold] // what the journal comes to, as it is stored (sessionsnapshot.go)
}

func (e *Engine) openSession(ctx context.Context, i *Instance) (*sessionState, error) {
	s := &sessionState{i: i, j: session.OpenJournal(e.st, i.rec.Session, i.id), book: session.NewBook(noteSpace(i))}
	s.j.SetBehindDelay(e.jdelay)
	if err := s.load(ctx); err != nil { // from the stored state: sessionsnapshot.go
		return nil, err
	}
	return s, nil
}

// quiet reports that nothing needs recording: no turn is open and no
// replay runs (the fast path may skip the journal).
func (s *sessionState) quiet() bool {
	return !s.journaling.Load() && s.rp == nil
}

// journal adds an entry to the session journal (none while a replay runs).
// An entry holding a host value with no JSON form is journaled without it,
// failed with the not-plain error returned here, which the caller fails
// its step with (notplain.go).
func (s *sessionState) journal(en session.Entry) *Error {
	if s.rp != nil {
		return nil
	}
	en.Gen = s.gen
	s.begun.Store(true)
	if err := s.j.Add(en); err != nil {
		return s.journalFailed(en, err)
	}
	return nil
}

// journalBehind journals entries written behind the caller: durable at the
// latest when the next boundary returns (see session.Journal.AddBehind).
// It returns how many it journaled and, when one could not be encoded, its
// error (a *session.EncodeError): the caller journals the rest.
func (s *sessionState) journalBehind(es ...session.Entry) (int, error) {
	if s.rp != nil {
		return len(es), nil
	}
	for k := range es {
		es[k].Gen = s.gen
	}
	return s.j.AddBehind(es...)
}

// journalQuick journals a call that ran only its host core, behind the
// caller, as journalBehind would its three entries; a value with no JSON
// form journals none of them and is reported (session.EncodeError).
func (s *sessionState) journalQuick(q *session.QuickCall) error {
	if s.rp != nil {
		return nil
	}
	q.Gen = s.gen
	return s.j.AddQuickBehind(q)
}

func (s *sessionState) flush(ctx context.Context) error {
	if s.rp != nil {
		return nil
	}
	return s.j.Flush(ctx)
}

// boundaryID is the deterministic call id of a boundary (session,
// instance, rollback generation, turn, round, phase), so replay and call-id
// replay of methods see the same ids, and two instances of one session
// never share one.
func (s *sessionState) boundaryID(kind, phase string) string {
	return s.i.rec.Session + "/" + s.i.id + ":g" + strconv.Itoa(s.gen) + ":t" + strconv.Itoa(s.turn) + ":r" + strconv.Itoa(s.round) + ":" + kind + "-" + phase
}

func fAdmitRead(s *luabind.State) int {
	r := regOf(s)
	fr := r.top()
	key := s.CheckString("admit/read", 1)
	if !utf8.ValidString(key) {
		// the journal keeps the key as JSON text, where a replay could not
		// find it again (R3.10)
		s.ArgError("admit/read", 1, "the key %q is not valid UTF-8; keys are text", key)
	}
	rc := ReadCall{Instance: fr.inst.id, Session: fr.inst.rec.Session, CallID: fr.callID, Key: key}
	dkey := key // the delivery's key: KEY, or KEY and its argument as JSON (journaled so)
	if s.L.GetTop() >= 2 && s.L.Get(2) != lua.LNil {
		arg, err := s.FromLua(s.L.Get(2))
		if err != nil {
			s.ArgErrorCoded(string(raiseCode("", err)), "admit/read", 2, "the argument must be plain data: %v", err)
		}
		b, err := json.Marshal(arg)
		if err != nil {
			s.ArgError("admit/read", 2, "the argument has no JSON form: %v", err)
		}
		rc.Arg, rc.HasArg = arg, true
		dkey = key + " " + string(b)
	}
	fr.effect()
	v, err := fr.inst.deliverFor(fr.ctx, session.Read, dkey, fr.callID, func(ctx context.Context) (any, error) {
		return fr.inst.e.runRead(context.WithValue(ctx, readKey{}, rc), key)
	})
	if err != nil {
		if c := CodeOf(err); c == CodeHostTimeout || c == CodeCancelled || c == CodeNotPlain {
			s.RaiseCoded(string(c), "%s", err.Error()) // "host-timeout: admit/read KEY did not answer ..."
		}
		s.RaiseCoded(string(raiseCode("", err)), "admit/read %s: %v", dkey, err)
	}
	s.L.Push(s.ToLua(v))
	return 1
}

// noteSink collects what one boundary hook emits, so the boundary can list
// its notes in pin order then declaration order whatever goroutine ran first.
type noteSink struct {
	notes []session.Note
	phase string
	bytes int64 // of the notes' text (engine.max_boundary_note_bytes)
}

func fNotify(s *luabind.State) int {
	r := regOf(s)
	fr := r.top()
	text := s.L.Get(1)
	if text == lua.LNil {
		s.ArgError("notify", 1, "want the note's text, got nil")
	}
	kind := session.Ambient
	if k := s.L.Get(2); k != lua.LNil {
		ks, ok := k.(lua.LString)
		if !ok || (ks != session.Ambient && ks != session.Activating && ks != session.User) {
			s.ArgError("notify", 2, "kind must be \"ambient\", \"activating\" or \"user\", got %s", lua.LVAsString(s.L.ToStringMeta(k)))
		}
		kind = string(ks)
	}
	body := lua.LVAsString(s.L.ToStringMeta(text))
	noteLimits(s, r, fr, int64(len(body)))
	fr.effect()
	ss := fr.inst.sess.Load()
	n := session.Note{ID: ss.book.NewID(), Kind: kind, Text: body, Program: r.program}
	ss.mu.Lock()
	n.Turn, n.Round = ss.turn, ss.round
	ss.mu.Unlock()
	if fr.notes != nil {
		n.Phase = fr.notes.phase
		fr.notes.notes = append(fr.notes.notes, n)
	} else {
		ss.emit([]session.Note{n}, fr.callID)
	}
	s.L.Push(lua.LString(n.ID))
	return 1
}

// noteLimits refuses a note over engine.max_note_bytes, or one that takes
// what the program emitted at this boundary (or on this callback's lineage,
// outside a boundary hook) over engine.max_boundary_note_bytes: a memory
// error naming the program, before anything is stored or sent.
func noteLimits(s *luabind.State, r *registry, fr *frame, n int64) {
	cfg := fr.inst.e.cfg.Engine
	most, boundary := cfg.MaxNoteBytes, cfg.MaxBoundaryNoteBytes
	if most <= 0 {
		most = config.DefaultMaxNoteBytes
	}
	if boundary <= 0 {
		boundary = config.DefaultMaxBoundaryNoteBytes
	}
	if n > most {
		s.RaiseCoded(string(CodeMemory), "memory: notify: program %s: a note of %d bytes is over engine.max_note_bytes (%d)", r.program, n, most)
	}
	count := fr.noted
	if fr.notes != nil {
		count = &fr.notes.bytes
	}
	if count == nil {
		return
	}
	if *count+n > boundary {
		s.RaiseCoded(string(CodeMemory), "memory: notify: program %s: its notes here come to %d bytes, over engine.max_boundary_note_bytes (%d)", r.program, *count+n, boundary)
	}
	*count += n
}

// emit commits notes to the book (in the order given) and the journal,
// under the call id of the step (or nested call) that emitted them.
func (s *sessionState) emit(notes []session.Note, callID string) {
	for _, n := range notes {
		if s.rp != nil {
			s.rp.mu.Lock()
			s.rp.notes = append(s.rp.notes, n)
			s.rp.mu.Unlock()
			continue
		}
		c := n
		if n.Kind == session.User { // for the user only: never placed into the model's context
			s.mu.Lock()
			s.user = append(s.user, n)
			s.mu.Unlock()
		} else {
			s.book.Add(n)
		}
		s.journal(session.Entry{Type: session.Emit, Note: &c, CallID: callID})
		if f := s.i.e.onNote; f != nil {
			f(s.i.id, n)
		}
	}
}

// noteSpace prefixes the ids of an instance's notes: its session and its
// id, so two instances the host puts in one session never share an id.
func noteSpace(i *Instance) string { return i.rec.Session + "/" + i.id }
