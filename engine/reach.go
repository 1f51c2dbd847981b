package engine

import "context"

// Reach is what a running instance's registrations can see of its tool
// calls, and where its session stands, taken after a host has handled an
// event of the instance. A host that answers each event in a new process
// (a coding agent's hook) keeps it beside its store, so that a later tool
// event that nothing can see is answered without opening the store:
// Reach.Sees says whether any guard or hook of the pin could run for a
// tool path.
type Reach struct {
	// Bot is the instance's bot (its ceiling is the configuration's).
	Bot string `json:"bot"`
	// Patterns are the path patterns of the tool guards, result guards
	// and tool hooks (:pre, :post and :post-fail alike) of the pin.
	Patterns []string `json:"patterns,omitempty"`
	// Defined are the tools the pin defines (define/tool).
	Defined []string `json:"defined,omitempty"`
	// Boundaries: a turn or round guard or hook is registered.
	Boundaries bool `json:"boundaries,omitempty"`
	// InTurn and InRound: a turn (a round) of the session is open.
	InTurn  bool `json:"in_turn,omitempty"`
	InRound bool `json:"in_round,omitempty"`
	// Pending: a re-attuned pin waits for the next turn start.
	Pending bool `json:"pending,omitempty"`
	// Open are the keys of the calls a harness left open (ToolBegin):
	// their ToolEnd has a call to complete.
	Open []string `json:"open,omitempty"`
}

// Reach returns what the instance's registrations can see and where its
// session stands; false when the instance is not running or its open
// calls cannot be read.
func (i *Instance) Reach(ctx context.Context) (Reach, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	set := i.cur.Load()
	ss := i.sess.Load()
	if set == nil || ss == nil || i.closed.Load() {
		return Reach{}, false
	}
	r := Reach{Bot: i.rec.Bot, Pending: i.pending != nil}
	for _, reg := range set.regs {
		for _, g := range reg.toolGuards {
			r.Patterns = append(r.Patterns, g.pattern)
		}
		for _, h := range reg.toolHooks {
			r.Patterns = append(r.Patterns, h.pattern)
		}
		for _, g := range reg.resultGuards {
			r.Patterns = append(r.Patterns, g.pattern)
		}
		for _, d := range reg.tools {
			r.Defined = append(r.Defined, d.path)
		}
		if len(reg.bhooks) > 0 {
			r.Boundaries = true
		}
		for _, gs := range reg.bguards {
			if len(gs) > 0 {
				r.Boundaries = true
			}
		}
	}
	ss.mu.Lock()
	r.InTurn, r.InRound = ss.inTurn, ss.inRound
	ss.mu.Unlock()
	f, err := ss.current(ctx)
	if err != nil {
		return Reach{}, false
	}
	r.Open = append(r.Open, f.openKeys()...)
	return r, true
}

// Sees reports whether a call of the tool at path could run anything of the
// pin: a tool guard or hook whose pattern matches it, or the pin's own
// definition of that tool.
func (r Reach) Sees(path string) bool {
	for _, p := range r.Defined {
		if p == path {
			return true
		}
	}
	for _, p := range r.Patterns {
		if match(p, path) {
			return true
		}
	}
	return false
}
