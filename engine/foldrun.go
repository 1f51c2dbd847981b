package engine

import (
	"bytes"
	"fmt"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
)

// foldRun is one application of actions to a state in a reducer's
// registry (Engine.apply): the Lua function that drives it reads its
// fields, so one function per registry serves every fold, and the JSON
// decoder (with the keys and short strings it interned) is kept with it.
// A registry's foldRun is used by one fold at a time (busy); a fold that
// finds it busy makes its own.
type foldRun struct {
	busy    bool
	st      *luabind.State
	fn      *lua.LFunction
	dec     *luabind.JSONDecoder
	members []luabind.JSONMember

	o       ownerRef
	src     foldSource
	cur     lua.LValue
	ferr    error
	at, end int
}

// takeFoldRun returns the registry's foldRun for one fold (the registry is
// held); done gives it back.
func (r *registry) takeFoldRun() *foldRun {
	f := r.foldRun
	if f == nil || f.busy {
		f = &foldRun{st: r.st}
		f.fn = r.st.L.NewFunction(f.drive)
		if r.foldRun == nil {
			r.foldRun = f
		}
	}
	f.busy = true
	return f
}

// done forgets the fold's values and frees the foldRun for the next fold.
func (f *foldRun) done() {
	f.o, f.src, f.cur, f.ferr = ownerRef{}, foldSource{}, nil, nil
	f.busy = false
}

func (f *foldRun) decoder() *luabind.JSONDecoder {
	if f.dec == nil {
		f.dec = luabind.NewJSONDecoder(f.st)
		f.members = make([]luabind.JSONMember, 0, 2)
	}
	return f.dec
}

// drive applies the actions [at, end) of the source to cur.
func (f *foldRun) drive(L *lua.LState) int {
	st, rd, o, src := f.st, f.o.rd, f.o, f.src
	for ; f.at < f.end; f.at++ {
		var action lua.LValue
		rev := rd.revision
		if src.entries != nil {
			en := src.entries[f.at]
			if bytes.Equal(en.Data, resetMarker) {
				f.cur = st.ToLua(rd.init)
				continue
			}
			var err error
			rev, action, err = entry(f.decoder(), en.Data, f.members)
			if err != nil {
				f.ferr = &foldError{fmt.Sprintf("reducer: owner %s entry %d: %v", o.addr, en.Seq, err), CodeReducer}
				return 0
			}
		} else {
			action = st.ToLua(src.proposals[f.at])
		}
		if rev != rd.revision {
			mig := rd.migrate[rev]
			if mig == nil {
				f.ferr = &foldError{fmt.Sprintf("revision: reducer revision %d has no migration to %d (owner %s, reducer at %s)", rev, rd.revision, o.addr, rd.pos), CodeRevision}
				return 0
			}
			L.Push(mig)
			L.Push(action)
			L.Call(1, 1)
			action = L.Get(-1)
			L.Pop(1)
		}
		L.Push(rd.apply)
		L.Push(f.cur)
		L.Push(action)
		L.Call(2, 1)
		if next := L.Get(-1); next != lua.LNil {
			f.cur = next
		}
		L.Pop(1)
	}
	return 0
}
