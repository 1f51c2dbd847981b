package engine

// Owners (R5.1-R5.10): a named, versioned state, folded by a reducer over an
// append-only log of actions.
//
// Addresses. An owner is NAME (the reducer's first scope) or NAME@SCOPE.
// Each scope of a reducer is its own owner with its own log:
//
//	owner/session/<session id>/<name>
//	owner/project/<engine.project>/<name>
//	owner/global/-/<name>
//
// An owner is opened at the first call or state read that names it (R2.9):
// its metadata record (kind "owner", key the log name, value {"abi": ...})
// is created if absent. The record keeps the ABI the owner was created
// with; a caller whose pinned reducer declares another ABI is refused
// (refused_by = abi) until the host upgrades it (Engine.UpgradeOwnerABI).
// The rule holds for every scope: an owner keeps its ABI.
//
// Entries. Each action is stored as {"rev": N, "action": {...}}, N being
// the reducer revision that proposed it. A host reset (Instance.ResetOwner)
// appends the marker {"reset": true}: a fold restarts from :init at the
// last marker and never reads what came before it, so a reset is also the
// way past actions with no migration (R2.7). The marker is an entry: it
// counts in the owner revision, a session rollback to before it undoes it,
// and call records made before it stay valid.
//
// Folding. The engine keeps a snapshot per (log, reducer program sha256,
// configuration hash, reducer revision): the folded state as plain Go data
// (never changed once stored) and the owner revision it stands for. A fold
// reads only the entries after the snapshot, converts the state to Lua once,
// applies every new action in place in the reducer ambient of the caller's
// pinned reducer (R1.5), and converts the state back once. A reducer that
// returns nil keeps the state it was given (changed in place). An action
// recorded under another reducer revision goes through :migrate[that
// revision] first (R2.7). A command's proposals are folded the same way
// before they are appended, and the result becomes the snapshot of the
// revision the append produced.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/store"
)

// Owner scopes (docs/rules.md, Words).
const (
	ScopeSession = "session"
	ScopeProject = "project"
	ScopeGlobal  = "global"
)

// reducerDecl is one define/reducer (R5.1).
type reducerDecl struct {
	decl
	name      string
	apply     *lua.LFunction
	scopes    []string
	revision  int
	abi       string
	init      any // plain data, never changed: every fold starts from a copy
	protected map[string]bool
	migrate   map[int]*lua.LFunction
	// foldKey names what decides a fold besides the log: the program's
	// source and configuration and the reducer revision.
	foldKey string
}

func hasScope(scopes []string, s string) bool {
	for _, x := range scopes {
		if x == s {
			return true
		}
	}
	return false
}

// checkOwnerName refuses names that would make addresses ambiguous.
func checkOwnerName(name string) error {
	if name == "" {
		return errors.New("an owner needs a name")
	}
	if strings.ContainsAny(name, "/@. \t\n") {
		return fmt.Errorf("owner name %q may not contain '/', '@', '.' or spaces", name)
	}
	return nil
}

// splitOwner reads an address NAME or NAME@SCOPE.
func splitOwner(addr string) (name, scope string, err error) {
	name, scope, _ = strings.Cut(addr, "@")
	if err := checkOwnerName(name); err != nil {
		return "", "", err
	}
	if strings.Contains(addr, "@") {
		switch scope {
		case ScopeSession, ScopeProject, ScopeGlobal:
		default:
			return "", "", fmt.Errorf("owner %s: unknown scope %q (want session, project or global)", addr, scope)
		}
	}
	return name, scope, nil
}

func fDefineReducer(s *luabind.State) int {
	const form = "define/reducer"
	r := regOf(s)
	name := s.CheckString(form, 1)
	if err := checkOwnerName(name); err != nil {
		s.ArgError(form, 1, "%v", err)
	}
	apply := s.CheckFunction(form, 2)
	o := s.OptTable(form, 3)
	checkOptions(s, form, o, "scope", "revision", "abi", "init", "protected", "migrate")
	d := &reducerDecl{decl: r.newDecl(), name: name, apply: apply,
		scopes:    optStrings(s, form, o, "scope"),
		revision:  optInt(s, form, o, "revision", 1),
		abi:       optString(s, form, o, "abi", "1"),
		protected: map[string]bool{},
		migrate:   map[int]*lua.LFunction{},
	}
	if len(d.scopes) == 0 {
		d.scopes = []string{ScopeSession}
	}
	for k, sc := range d.scopes {
		switch sc {
		case ScopeSession, ScopeProject, ScopeGlobal:
		default:
			s.L.RaiseError("%s: option scope: unknown scope %q (want session, project or global)", form, sc)
		}
		if hasScope(d.scopes[:k], sc) {
			s.L.RaiseError("%s: option scope: %s is listed twice", form, sc)
		}
	}
	if d.revision < 1 {
		s.L.RaiseError("%s: option revision: want a whole number >= 1, got %d", form, d.revision)
	}
	d.init = map[string]any{} // no :init: an empty map, as docs/forms.md says
	if iv := opt(o, "init"); iv != lua.LNil {
		init, err := s.FromLua(iv)
		if err != nil {
			s.L.RaiseError("%s: option init: %v", form, err)
		}
		d.init = init
	}
	for _, t := range optStrings(s, form, o, "protected") {
		d.protected[t] = true
	}
	switch mv := opt(o, "migrate").(type) {
	case *lua.LNilType:
	case *lua.LTable:
		var bad string
		mv.ForEach(func(k, v lua.LValue) {
			if bad != "" {
				return
			}
			var rev int
			switch kk := k.(type) {
			case lua.LNumber:
				rev = int(kk)
				if float64(rev) != float64(kk) || rev < 1 {
					bad = fmt.Sprintf("key %v: want a reducer revision (a whole number >= 1)", kk)
					return
				}
			case lua.LString:
				n, err := strconv.Atoi(string(kk))
				if err != nil || n < 1 {
					bad = fmt.Sprintf("key %q: want a reducer revision (a whole number >= 1, or its decimal string)", string(kk))
					return
				}
				rev = n
			default:
				bad = "want revision = function pairs"
				return
			}
			fn, ok := v.(*lua.LFunction)
			if !ok {
				bad = fmt.Sprintf("revision %d: want a function, got %s", rev, luabind.TypeName(v))
				return
			}
			d.migrate[rev] = fn
		})
		if bad != "" {
			s.L.RaiseError("%s: option migrate: %s", form, bad)
		}
	default:
		s.L.RaiseError("%s: option migrate: want a table of revision = function, got %s", form, luabind.TypeName(mv))
	}
	for _, prev := range r.reducers {
		if prev.name == name {
			s.L.RaiseError("%s: owner %s is declared twice in this program (first at %s)", form, name, prev.pos)
		}
	}
	cfg := ""
	if r.set != nil && r.set.pin != nil {
		for _, pr := range r.set.pin.Programs {
			if pr.Name == r.program {
				cfg = pr.Config
			}
		}
	}
	d.foldKey = r.sha + "/" + cfg + "/" + strconv.Itoa(d.revision)
	r.reducers = append(r.reducers, d)
	return 0
}

// ownerRef is one resolved owner: the caller's pinned reducer, the scope,
// and the log.
type ownerRef struct {
	addr  string // NAME@SCOPE
	name  string
	scope string
	key   string // the session id, the project, or "-"
	log   string
	rd    *reducerDecl
}

// liveOwner resolves OWNER in the instance's current set, which the caller
// releases when done (on an error there is none to release).
func (i *Instance) liveOwner(owner string) (*regSet, ownerRef, error) {
	set, err := i.live()
	if err != nil {
		return nil, ownerRef{}, err
	}
	o, err := set.resolveOwner(owner)
	if err != nil {
		set.release()
		return nil, ownerRef{}, err
	}
	return set, o, nil
}

// resolveOwner finds OWNER in a pin (R5.2): the caller's pinned reducer
// folds the owner, whoever created it.
func (s *regSet) resolveOwner(addr string) (ownerRef, error) {
	name, scope, err := splitOwner(addr)
	if err != nil {
		return ownerRef{}, errorf(CodeOwner, "owner: %v", err)
	}
	rd, ok := s.reducers[name]
	if !ok {
		return ownerRef{}, errorf(CodeOwner, "owner: no program of the pin of instance %s declares owner %s", s.instance, name)
	}
	if scope == "" {
		scope = rd.scopes[0]
	} else if !hasScope(rd.scopes, scope) {
		return ownerRef{}, errorf(CodeOwner, "owner: %s is declared with scope %s (at %s), not %s", name, strings.Join(rd.scopes, ", "), rd.pos, scope)
	}
	o := ownerRef{addr: name + "@" + scope, name: name, scope: scope, rd: rd}
	switch scope {
	case ScopeSession:
		o.key = s.inst.rec.Session
	case ScopeProject:
		o.key = s.engine.project()
	default:
		o.key = "-"
	}
	o.log = ownerLog(scope, o.key, name)
	return o, nil
}

// resetMarker is the entry a host reset appends.
var resetMarker = []byte(`{"reset":true}`)

// ResetOwner resets an owner to its initial state on the host's behalf: it
// appends a reset marker, so folds restart from :init there (and actions
// before it need no migration, R2.7). The ABI is not checked: a reset is
// the host's way out.
func (i *Instance) ResetOwner(ctx context.Context, owner string) error {
	set, o, err := i.liveOwner(owner)
	if err != nil {
		return err
	}
	defer set.release()
	if _, err := i.e.openOwner(ctx, o); err != nil {
		return err
	}
	_, err = i.e.st.Append(ctx, o.log, store.Any, [][]byte{resetMarker}, nil)
	return err
}

// State returns an owner's folded state and revision (R2.9: opening it,
// checking its ABI and folding it first). The state is the caller's copy.
func (i *Instance) State(ctx context.Context, owner string) (any, int64, error) {
	set, o, err := i.liveOwner(owner)
	if err != nil {
		return nil, 0, err
	}
	defer set.release()
	stored, err := i.e.openOwner(ctx, o)
	if err != nil {
		return nil, 0, err
	}
	if why := abiRefusal(o, stored); why != "" {
		return nil, 0, errors.New("abi: " + why)
	}
	st, rev, err := i.e.fold(ctx, nil, i, o, i.newCallID())
	if err != nil {
		return nil, 0, err
	}
	return CopyPlain(st), rev, nil
}

// foldError is a failure of a fold; its text starts with its code.
type foldError struct {
	msg string
	c   Code // CodeReducer or CodeRevision
}

func (e *foldError) Error() string { return e.msg }

func (e *foldError) code() Code { return e.c }

// fold returns an owner's state at its latest revision, folding only the
// entries after the cached snapshot. The state returned is shared: never
// change it (ToLua copies it into a Lua state).
func (e *Engine) fold(ctx context.Context, parent *frame, inst *Instance, o ownerRef, callID string) (any, int64, error) {
	rd := o.rd
	sn, ref := e.owners.get(o.log, rd.foldKey)
	var state any
	var rev int64
	if sn != nil {
		state, rev = sn.state, sn.rev
	} else {
		state = rd.init
	}
	// The log is read and applied a chunk at a time, so a cold fold of a
	// long log holds one chunk in memory, not the log. Entries before the
	// last reset count for nothing: a failure among them is forgotten when
	// a reset follows.
	newRev := rev
	var pending error
	for {
		entries, err := e.st.Read(ctx, o.log, newRev, readChunk)
		if err != nil {
			return nil, 0, err
		}
		if len(entries) == 0 {
			break
		}
		full := len(entries) == readChunk
		newRev = entries[len(entries)-1].Seq
		for k := len(entries) - 1; k >= 0; k-- { // restart at the last reset
			if bytes.Equal(entries[k].Data, resetMarker) {
				state, entries, pending = rd.init, entries[k+1:], nil
				break
			}
		}
		if len(entries) > 0 && pending == nil {
			state, pending = e.apply(ctx, parent, inst, o, callID, state, foldSource{entries: entries})
		}
		if !full {
			break
		}
	}
	if pending != nil {
		return nil, 0, pending
	}
	if newRev == rev {
		return state, rev, nil
	}
	e.owners.put(o.log, rd.foldKey, ref, &snapshot{state: state, rev: newRev})
	return state, newRev, nil
}

// readChunk is how many entries a fold reads at once.
const readChunk = 8192

// foldSource is what a fold applies: stored entries, or a command's
// proposals (plain data, of the reducer's own revision).
type foldSource struct {
	entries   []store.Entry
	proposals []any
}

func (f foldSource) len() int {
	if f.entries != nil {
		return len(f.entries)
	}
	return len(f.proposals)
}

// foldChunk bounds the actions applied in one callback, so a long log does
// not run into the time budget of a single callback.
const foldChunk = 4096

// apply folds actions into a state in the reducer's registry, in the
// reducer ambient (R1.5). The state is converted to Lua once and back once;
// the reducer may change it and the action in place (R1.5).
func (e *Engine) apply(ctx context.Context, parent *frame, inst *Instance, o ownerRef, callID string, state any, src foldSource) (any, error) {
	rd := o.rd
	r := rd.reg
	fr := newFrame(parent, ctx, inst, r, &rd.decl, callID)
	owned, lerr := r.lock(fr)
	if lerr != nil {
		return nil, &foldError{"reducer: owner " + o.addr + ": " + errText(lerr), CodeReducer}
	}
	defer r.unlock(owned)
	st := r.st
	f := r.takeFoldRun()
	defer f.done()
	f.o, f.src = o, src
	f.cur = st.ToLua(state)
	n := src.len()
	for f.at = 0; f.at < n; {
		f.end = min(f.at+foldChunk, n)
		err := r.call(fr, luabind.Reducer, f.fn, 0)
		if f.ferr != nil {
			return nil, f.ferr
		}
		if err != nil {
			what := "action"
			if src.entries != nil && f.at < len(src.entries) {
				what = fmt.Sprintf("entry %d", src.entries[f.at].Seq)
			} else if src.proposals != nil {
				what = fmt.Sprintf("proposal %d", f.at+1)
			}
			return nil, &foldError{fmt.Sprintf("reducer: owner %s, %s: %s", o.addr, what, errText(err)), CodeReducer}
		}
	}
	out, err := st.FromLua(f.cur)
	if err != nil {
		return nil, &foldError{fmt.Sprintf("reducer: owner %s: the state is not plain data: %v", o.addr, err), CodeReducer}
	}
	return out, nil
}

// encodeEntry is the stored form of one action: {"rev": N, "action":
// ..., "by": AUTHOR, "host": HOST, "at": TIME}, stamp being the part from
// "by" on (Engine.stamp); folds read only rev and action.
func encodeEntry(rev int, action any, stamp []byte) ([]byte, error) {
	a, err := json.Marshal(action)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(a)+24+len(stamp))
	b = append(b, `{"rev":`...)
	b = strconv.AppendInt(b, int64(rev), 10)
	b = append(b, `,"action":`...)
	b = append(b, a...)
	b = append(b, stamp...)
	b = append(b, '}')
	return b, nil
}

// decodeEntry reads {"rev": N, "action": ...} straight into Lua values.
func decodeEntry(st *luabind.State, data []byte) (int, lua.LValue, error) {
	return entry(luabind.NewJSONDecoder(st), data, nil)
}

// entry reads one stored entry, {"rev": N, "action": ...}, with members as
// scratch space.
func entry(dec *luabind.JSONDecoder, data []byte, members []luabind.JSONMember) (int, lua.LValue, error) {
	members, err := dec.DecodeMembers(data, members[:0])
	if err != nil {
		return 0, nil, err
	}
	rev := 0
	var action lua.LValue = lua.LNil
	seen := false
	for _, m := range members {
		switch m.Key {
		case "rev":
			n, ok := m.Value.(lua.LNumber)
			if !ok {
				return 0, nil, errors.New("rev is not a number")
			}
			rev = int(n)
		case "action":
			action, seen = m.Value, true
		}
	}
	clear(members)
	if !seen || rev < 1 {
		return 0, nil, errors.New("not an action entry")
	}
	return rev, action, nil
}

// canonicalJSON is the comparable form of plain data (map keys sorted).
func canonicalJSON(v any) ([]byte, error) {
	return json.Marshal(v)
}
