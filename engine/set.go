package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/attune-dev/attune/pin"
)

// regSet is the registries of one pin for one instance, in pin order, with
// what the pin resolves once: the tool table, the boundary guards and hooks
// flattened in pin order then declaration order. It is reference-counted:
// the instance holds it while it is current, a turn while it runs, every
// call while it runs; the last release closes its Lua states (R2.6).
type regSet struct {
	engine   *Engine
	inst     *Instance
	instance string
	pin      *pin.Pin
	regs     []*registry
	refs     atomic.Int64

	guards   map[string][]*guardDecl // boundary guards by kind, pin order then declaration
	hooks    map[string][]*hookDecl  // "turn/start", "round/end"...
	reducers map[string]*reducerDecl
	methods  map[string]*methodDecl // "owner.method" by declared owner name
	subs     []*subDecl

	tools atomic.Pointer[toolTable]

	cmdMu    sync.Mutex
	commands map[string]*registry

	pinOnce sync.Once
	pinSHA  string // the pin stored as a blob, for the journal
	pinErr  error
}

// pinBlob stores the set's pin as a blob once and returns its hash: turn
// entries of the journal name the pin they ran, so a replay across a
// re-attunement runs each turn with its own pin.
func (s *regSet) pinBlob(ctx context.Context) (string, error) {
	s.pinOnce.Do(func() {
		data, err := json.Marshal(s.pin)
		if err != nil {
			s.pinErr = err
			return
		}
		s.pinSHA, s.pinErr = s.engine.st.PutBlob(ctx, data)
	})
	return s.pinSHA, s.pinErr
}

// newSet loads every program of a pin, in pin order (R1.1), then checks
// require (R1.9) and grants (R8.2). A failure closes what was loaded and
// fails only this instance (R1.12).
func (e *Engine) newSet(ctx context.Context, inst *Instance, p *pin.Pin) (*regSet, error) {
	s := &regSet{engine: e, inst: inst, instance: inst.id, pin: p, hooks: map[string][]*hookDecl{}, guards: map[string][]*guardDecl{},
		reducers: map[string]*reducerDecl{}, methods: map[string]*methodDecl{}, commands: map[string]*registry{}}
	s.refs.Store(1)
	for _, pr := range p.Programs {
		cfg, err := pin.Config(ctx, e.st, pr)
		if err != nil {
			s.closeAll()
			return nil, err
		}
		r, err := e.loadRegistry(ctx, s, pr.Name, pr.File, pr.SHA256, cfg)
		if err != nil {
			s.closeAll()
			return nil, err
		}
		e.liveStates.Add(1)
		s.regs = append(s.regs, r)
	}
	if err := s.index(); err != nil {
		s.closeAll()
		return nil, err
	}
	return s, nil
}

// index flattens declarations and checks require and grants.
func (s *regSet) index() error {
	for _, r := range s.regs {
		for _, need := range r.requires {
			if !s.pin.Has(need) {
				return fmt.Errorf("require: %s needs %s, which this bot does not select", r.program, need)
			}
		}
		for kind, gs := range r.bguards {
			s.guards[kind] = append(s.guards[kind], gs...)
		}
		for _, h := range r.bhooks {
			s.hooks[h.boundary] = append(s.hooks[h.boundary], h)
		}
		for _, d := range r.reducers {
			if prev, dup := s.reducers[d.name]; dup {
				return fmt.Errorf("define/reducer: owner %s is declared by both %s (at %s) and %s (at %s)", d.name, prev.reg.program, prev.pos, r.program, d.pos)
			}
			s.reducers[d.name] = d
		}
		for _, m := range r.methods {
			key := m.owner + "." + m.name
			if m.scope != "" {
				key = m.owner + "@" + m.scope + "." + m.name
			}
			if prev, dup := s.methods[key]; dup {
				return fmt.Errorf("define/method: %s is declared twice (at %s and %s)", key, prev.pos, m.pos)
			}
			s.methods[key] = m
		}
		s.subs = append(s.subs, r.subs...)
	}
	for _, m := range s.methods {
		rd, ok := s.reducers[m.owner]
		if !ok {
			return fmt.Errorf("define/method: %s.%s (at %s) names owner %s, which no program of this pin declares with define/reducer", m.owner, m.name, m.pos, m.owner)
		}
		if m.scope != "" && !hasScope(rd.scopes, m.scope) {
			return fmt.Errorf("define/method: %s@%s.%s (at %s) names scope %s, but owner %s is declared with scope %s (at %s)", m.owner, m.scope, m.name, m.pos, m.scope, m.owner, strings.Join(rd.scopes, ", "), rd.pos)
		}
	}
	bot := s.inst.bot
	for _, g := range bot.Grants {
		if !s.grantKnown(g) {
			return fmt.Errorf("grant %q of bot %s names no method of its pin (grants are OWNER.METHOD, or a grant a method requires with :grant)", g, bot.Name)
		}
	}
	return nil
}

func (s *regSet) grantKnown(g string) bool {
	for _, m := range s.methods {
		if m.owner+"."+m.name == g || (m.grant != "" && m.grant == g) {
			return true
		}
		scopes := []string{m.scope}
		if rd, ok := s.reducers[m.owner]; ok && m.scope == "" {
			scopes = rd.scopes
		}
		for _, sc := range scopes { // OWNER@SCOPE.METHOD grants one scope
			if m.owner+"@"+sc+"."+m.name == g {
				return true
			}
		}
	}
	return false
}

// acquire takes a reference unless the set is already closed.
func (s *regSet) acquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference; the last one closes the Lua states.
func (s *regSet) release() {
	if s.refs.Add(-1) == 0 {
		s.closeAll()
	}
}

func (s *regSet) closeAll() {
	for _, r := range s.regs {
		r.close()
		s.engine.liveStates.Add(-1)
	}
	s.regs = nil
	s.cmdMu.Lock()
	for _, r := range s.commands {
		r.close()
		s.engine.liveStates.Add(-1)
	}
	s.commands = nil
	s.cmdMu.Unlock()
}
