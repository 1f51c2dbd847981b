package engine

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"

	"attune/luabind"
	"attune/pin"
)

// registry is what one program registered for one instance and
// configuration: its own Lua state and its declarations (R1.1, R1.2).
// Access to its state is serialized by sema; re-entry from a callback that
// already holds it goes through without waiting (see acquire).
type registry struct {
	id      string // unique per engine: "<instance>/<program>#<n>"
	program string
	file    string
	sha     string
	config  map[string]any
	cfgLua  lua.LValue
	st      *luabind.State
	set     *regSet // the set it was loaded into

	sema   chan struct{}
	holder atomic.Pointer[thread] // the thread holding sema (nil when free)
	frames []*frame

	tools       []*toolDecl
	toolGuards  []*guardDecl
	toolHooks   []*hookDecl
	turnGuards  []*guardDecl
	roundGuards []*guardDecl
	turnHooks   []*hookDecl // phase in decl
	roundHooks  []*hookDecl
	reducers    []*reducerDecl
	methods     []*methodDecl
	subs        []*subDecl
	requires    []string
	validators  []*lua.LFunction
	command     *lua.LFunction
	decls       int

	invokeFn *lua.LFunction // the one invoke function of this state
	calls    tablePool      // recycled call records
	outs     tablePool      // recycled outcome records
}

// decl is what every declaration has: an id on the lineage.
type decl struct {
	id  string
	reg *registry
	pos string // "file:line" where it was declared
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
		sema:    make(chan struct{}, 1),
	}
	r.st = luabind.NewState(luabind.Options{
		Budget: e.budget,
		Seed:   seedOf(r.id),
		Print: func(s string) {
			e.log.Info("print", "program", name, "instance", set.instance, "text", s)
		},
	})
	r.st.Owner = r
	r.st.Open(formsLib())
	r.cfgLua = r.st.ToLua(cfg)
	r.invokeFn = formsLib().Func(invokeFunc)
	fr := &frame{reg: r, ctx: ctx, inst: set.inst}
	if err := r.call(fr, luabind.Register, r.st.Load(proto), 0); err != nil {
		r.close()
		return nil, fmt.Errorf("program %s: %w", name, err)
	}
	for _, v := range r.validators {
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
			return nil, fmt.Errorf("program %s: validate/configuration refused: %s", name, msg)
		}
	}
	return r, nil
}

func (r *registry) validate(fr *frame, v *lua.LFunction) (bool, string, error) {
	L := r.st.L
	if err := r.call(fr, luabind.Callback, v, 2, r.st.Copy(r.cfgLua)); err != nil {
		return false, "", err
	}
	ok, msg := L.Get(-2), L.Get(-1)
	L.Pop(2)
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

// call runs fn in this registry's state for a frame: the frame is pushed
// so engine functions find their caller, the state is held for the frame's
// chain, and the time budget runs.
func (r *registry) call(fr *frame, a luabind.Ambient, fn lua.LValue, nret int, args ...lua.LValue) error {
	release, err := r.acquire(fr)
	if err != nil {
		return err
	}
	r.frames = append(r.frames, fr)
	err = r.st.Call(a, fn, nret, args...)
	r.frames[len(r.frames)-1] = nil
	r.frames = r.frames[:len(r.frames)-1]
	release()
	return err
}

// top is the frame of the running callback.
func (r *registry) top() *frame {
	if len(r.frames) == 0 {
		return nil
	}
	return r.frames[len(r.frames)-1]
}

// acquire takes the registry's state for a frame chain. A frame whose
// chain already holds the state re-enters without waiting; others wait,
// at most for the callback budget, so two chains that wait on each other
// fail instead of hanging.
func (r *registry) acquire(fr *frame) (func(), error) {
	if fr.thread != nil && r.holder.Load() == fr.thread {
		return func() {}, nil
	}
	select {
	case r.sema <- struct{}{}:
	default:
		t := time.NewTimer(r.set.engine.budget)
		select {
		case r.sema <- struct{}{}:
			t.Stop()
		case <-t.C:
			return nil, fmt.Errorf("cancelled: time budget (program %s is busy in another call)", r.program)
		}
	}
	r.holder.Store(fr.thread)
	return func() {
		r.holder.Store(nil)
		<-r.sema
	}, nil
}

func (r *registry) close() {
	r.st.Close()
}

// position returns "file:line" of the script that called an engine function.
func (r *registry) position() string {
	return strings.TrimSuffix(r.st.Where(), ":")
}
