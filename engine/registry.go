package engine

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/pin"
)

// registry is what one program registered for one instance and
// configuration: its own Lua state and its declarations (R1.1, R1.2).
// Access to its state is serialized by its lock (statelock.go); re-entry from a
// callback that already holds it goes through without waiting.
type registry struct {
	id      string // unique per engine: "<instance>/<program>#<n>"
	program string
	file    string
	sha     string
	config  map[string]any
	cfgLua  lua.LValue
	st      *luabind.State
	set     *regSet // the set it was loaded into

	holder   atomic.Pointer[thread] // the thread holding the state (nil when free); see lock
	nwait    atomic.Int32           // threads waiting for it
	starving atomic.Bool            // a waiter waited too long: the next unlock hands over
	woken    atomic.Bool            // a woken waiter has not tried yet: unlocks wake no other (statelock.go)
	skips    atomic.Uint32          // unlocks that left the waiters alone for it
	frames   []*frame

	tools        []*toolDecl
	toolGuards   []*guardDecl
	toolHooks    []*hookDecl
	resultGuards []*guardDecl            // guard/result (resultguard.go)
	bguards      map[string][]*guardDecl // boundary guards by kind: "turn", "round"
	bhooks       []*hookDecl             // boundary hooks, each with its boundary
	reducers     []*reducerDecl
	methods      []*methodDecl
	subs         []*subDecl
	requires     []string
	validators   []*lua.LFunction
	command      *lua.LFunction
	decls        int
	// where validators and the command were declared (coverage, messages)
	vpos    []string
	vdecls  []*decl
	cmdPos  string
	cmdDecl *decl

	invokeFn  *lua.LFunction     // the one invoke function of this state
	refuseMT  *lua.LTable        // marks what refuse() returns
	retryMT   *lua.LTable        // marks what retry() returns
	allowMT   *lua.LTable        // marks what allow() returns
	askMT     *lua.LTable        // marks what ask() returns
	haltMT    *lua.LTable        // marks what halt() returns
	replaceMT *lua.LTable        // marks what replace() returns
	calls     luabind.RecordPool // recycled call records
	outs      luabind.RecordPool // recycled outcome records
	bounds    luabind.RecordPool // recycled boundary records
	empty     *lua.LTable        // the shared empty list of records (see emptyList)
	foldRun   *foldRun           // what folds in this state use (foldrun.go)
}

// decl is what every declaration has: an id on the lineage.
type decl struct {
	id   string
	reg  *registry
	pos  string // "file:line" where it was declared
	form string // the register form, named when an Observer watches
}

type toolDecl struct {
	decl
	path    string
	fn      *lua.LFunction
	effects []string
	input   schema
	output  schema
}

type guardDecl struct {
	decl
	pattern string
	fn      *lua.LFunction
	depth   int
}

type hookDecl struct {
	decl
	pattern  string // tool hooks
	phase    string // boundary hooks: "start" or "end"
	boundary string // boundary hooks: "turn/start", "round/end"...
	fn       *lua.LFunction
	pre      *lua.LFunction
	post     *lua.LFunction
	postFail *lua.LFunction
	depth    int
}

type subDecl struct {
	decl
	owner string
	fn    *lua.LFunction
}

// loadRegistry instantiates a pinned program for one instance: runs its
// top level in the register ambient, then its validate/configuration
// handlers. Errors name the program's file and line (R1.12).
func (e *Engine) loadRegistry(ctx context.Context, set *regSet, name, file, sha string, cfg map[string]any) (*registry, error) {
	src, err := pin.Source(ctx, e.st, name, sha)
	if err != nil {
		return nil, err
	}
	proto, err := e.compile(file, sha, src)
	if err != nil {
		return nil, fmt.Errorf("program %s: %w", name, err)
	}
	r := &registry{
		id:      e.nextID(set.instance + "/" + name + "#"),
		program: name,
		file:    file,
		sha:     sha,
		config:  cfg,
		set:     set,
	}
	r.st = luabind.NewState(luabind.Options{
		Budget:   e.budget,
		Watchdog: e.watchdog,
		Seed:     registrySeed(set, name),
		DrawKey:  r.drawKey,
		Print:    func(s string) { r.trace("print", s) },
	})
	r.st.Owner = r
	r.st.Open(e.lib)
	r.cfgLua = r.st.ToLua(cfg)
	r.invokeFn = e.lib.Func(invokeFunc)
	r.refuseMT = r.st.L.CreateTable(0, 0)
	r.retryMT = r.st.L.CreateTable(0, 0)
	r.allowMT = r.st.L.CreateTable(0, 0)
	r.askMT = r.st.L.CreateTable(0, 0)
	r.haltMT = r.st.L.CreateTable(0, 0)
	r.replaceMT = r.st.L.CreateTable(0, 0)
	fr := &frame{reg: r, ctx: ctx, inst: set.inst}
	if err := r.call(fr, luabind.Register, r.st.Load(proto), 0); err != nil {
		r.close()
		return nil, fmt.Errorf("program %s: %w", name, err)
	}
	e.observeRegistrations(r)
	fr.validating = true
	for k, v := range r.validators {
		if e.obs != nil {
			e.ran(r.validatorDecl(k))
		}
		ok, msg, err := r.validate(fr, v)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("program %s: validate/configuration: %w", name, err)
		}
		if !ok {
			r.close()
			if msg == "" {
				msg = "configuration refused"
			}
			pos := r.file // the validator's line, where the load has one (R1.12)
			if k < len(r.vpos) && r.vpos[k] != "" {
				pos = r.vpos[k]
			}
			return nil, fmt.Errorf("program %s: validate/configuration refused: %s (the validator at %s)", name, msg, pos)
		}
	}
	if err := e.claimOwners(ctx, r); err != nil { // ownership.go
		r.close()
		return nil, fmt.Errorf("program %s: %w", name, err)
	}
	return r, nil
}

// validate runs one validate/configuration handler (R1.8): true accepts;
// false or nil refuses, with the message given as a second value; a string
// returned alone refuses with that message (the Scheme-style forms return
// one value); a throw refuses with the error.
func (r *registry) validate(fr *frame, v *lua.LFunction) (bool, string, error) {
	L := r.st.L
	owned, err := r.lock(fr)
	if err != nil {
		return false, "", err
	}
	defer r.unlock(owned)
	if err := r.run(fr, luabind.Callback, v, 2, r.st.Copy(r.cfgLua)); err != nil {
		return false, "", err
	}
	ok, msg := L.Get(-2), L.Get(-1)
	L.Pop(2)
	if s, isStr := ok.(lua.LString); isStr {
		return false, string(s), nil
	}
	m := ""
	if s, isStr := msg.(lua.LString); isStr {
		m = string(s)
	}
	return lua.LVAsBool(ok), m, nil
}

func seedOf(s string) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// call runs fn in this registry's state for a frame: the state is held
// for the frame's thread, the frame is pushed so engine functions find
// their caller, and the time budget runs. Results, if any, are left on the
// stack: a caller that reads them must hold the registry itself (lock),
// since another thread may take the state once call returns.
func (r *registry) call(fr *frame, a luabind.Ambient, fn lua.LValue, nret int, args ...lua.LValue) error {
	owned, err := r.lock(fr)
	if err != nil {
		return err
	}
	err = r.run(fr, a, fn, nret, args...)
	r.unlock(owned)
	return err
}

// run calls fn with the registry already held by fr's thread.
func (r *registry) run(fr *frame, a luabind.Ambient, fn lua.LValue, nret int, args ...lua.LValue) error {
	r.frames = append(r.frames, fr)
	// A nested callback in another state spends what its caller has left
	// (the budget spans the lineage); the same state does this itself.
	within, up := luabind.NoCap, (*luabind.State)(nil)
	if p := fr.parent; p != nil && p.reg != nil && p.reg != r {
		up = p.reg.st
		within = up.Remaining()
	}
	used, err := r.st.CallContextWithin(fr.ctx, within, a, fn, nret, args...)
	if up != nil && within != luabind.NoCap {
		up.Spend(used)
	}
	r.frames[len(r.frames)-1] = nil
	r.frames = r.frames[:len(r.frames)-1]
	if err != nil {
		return withFrames(fr, err)
	}
	return nil
}

// top is the frame of the running callback.
func (r *registry) top() *frame {
	if len(r.frames) == 0 {
		return nil
	}
	return r.frames[len(r.frames)-1]
}

// drawKey is the call id of the running callback: math.random's draws in
// it depend on the session, the instance, the program and this call only,
// so a registry made anew after a restart draws what a replay draws.
func (r *registry) drawKey() string {
	if fr := r.top(); fr != nil {
		return fr.callID
	}
	return ""
}

func (r *registry) close() {
	r.st.Close()
}

// position returns "file:line" of the script that called an engine function.
func (r *registry) position() string {
	return strings.TrimSuffix(r.st.Where(), ":")
}
