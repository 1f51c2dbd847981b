package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/attune-dev/attune/store"
)

// subFeed delivers to this engine's subscriptions the actions appended to
// an owner by anyone else: another engine on the same store, another
// process, another machine (R5.8 across hosts). The engine's own commits
// run their subscriptions themselves, before the command returns
// (methodCall.notify); the feed passes over them.
//
// Each owner log a live instance subscribes to is followed from a
// position: its length when the following began. On every announcement
// of the store (store.Watcher) the feed reads the log after that position
// and runs the subscriptions once per action, in log order, on one
// goroutine, then moves the position on; a catch-up request (the store's
// connection came back, or a while passed) reads every followed log so.
// So a subscriber sees every action once, in order: what a restart of the
// server hid is read back from the log. Actions of this engine's own
// commits run at their commit, so they can come before another's action
// that precedes them in the log but was not read yet.
//
// While one of this engine's commits to a followed log is in flight, the
// feed leaves that log for later: the entries the commit adds are its to
// run, and the feed cannot tell them from others' until it returns.
type subFeed struct {
	e  *Engine
	st store.Watcher

	mu      sync.Mutex
	logs    map[string]*follow
	started bool
	ctx     context.Context
	stop    context.CancelFunc
	pending map[string]bool
	all     bool
	wake    chan struct{}
}

// follow is one followed log.
type follow struct {
	pos     int64              // entries up to pos were delivered (or came before the following)
	writing int                // this engine's commits in flight
	gen     int64              // counts commits begun
	done    map[int64]struct{} // entries past pos run by their commit
	later   bool               // announced while a commit was in flight
}

// newSubFeed returns the feed of an engine whose store announces appends,
// or nil.
func newSubFeed(e *Engine) *subFeed {
	w, ok := e.st.(store.Watcher)
	if !ok {
		return nil
	}
	ctx, stop := context.WithCancel(context.Background())
	return &subFeed{e: e, st: w, logs: map[string]*follow{}, ctx: ctx, stop: stop,
		pending: map[string]bool{}, wake: make(chan struct{}, 1)}
}

func (f *subFeed) close() {
	if f != nil {
		f.stop()
	}
}

// subLogs are the owner logs a subscription of set may name: one, or, for
// an owner named without a scope that the pin declares no reducer of, one
// per scope.
func (s *regSet) subLogs(sub *subDecl) []string {
	name, scope, err := splitOwner(sub.owner)
	if err != nil {
		return nil
	}
	scopes := []string{scope}
	if scope == "" {
		if rd, ok := s.reducers[name]; ok {
			scopes = rd.scopes[:1]
		} else {
			scopes = []string{ScopeSession, ScopeProject, ScopeGlobal}
		}
	}
	logs := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		logs = append(logs, ownerLog(sc, s.scopeKey(sc), name))
	}
	return logs
}

// scopeKey is the key of an owner of scope sc for the set's instance.
func (s *regSet) scopeKey(sc string) string {
	switch sc {
	case ScopeSession:
		return s.inst.rec.Session
	case ScopeProject:
		return s.engine.project()
	}
	return "-"
}

// watch starts following the logs set's subscriptions name, from their
// current length, and starts the feed on first use. An error reading a
// length leaves that log unfollowed (logged): the instance still gets its
// own process's actions.
func (f *subFeed) watch(ctx context.Context, set *regSet) {
	if f == nil || set == nil || len(set.subs) == 0 {
		return
	}
	var logs []string
	for _, sub := range set.subs {
		logs = append(logs, set.subLogs(sub)...)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, log := range logs {
		if _, ok := f.logs[log]; ok {
			continue
		}
		// Read under f.mu: a commit ending meanwhile marks its entries
		// against this position, not a missing one.
		n, err := f.e.st.Length(ctx, log)
		if err != nil {
			f.e.log.Warn("subscriptions: cannot follow owner log", "log", log, "error", err)
			continue
		}
		f.logs[log] = &follow{pos: n}
	}
	if !f.started {
		f.started = true
		go f.run()
		if err := f.st.Watch(f.ctx, f.announce); err != nil {
			f.e.log.Warn("subscriptions: the store's feed did not start", "error", err)
		}
	}
}

// begin notes a commit to log in flight; end is told what it appended
// (entries from+1..to; none when to is 0).
func (f *subFeed) begin(log string) *follow {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.logs[log]
	if fl != nil {
		fl.writing++
		fl.gen++
	}
	return fl
}

func (f *subFeed) end(fl *follow, from, to int64) {
	if fl == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := max(from, fl.pos) + 1; s <= to; s++ {
		if fl.done == nil {
			fl.done = map[int64]struct{}{}
		}
		fl.done[s] = struct{}{}
	}
	fl.writing--
	if fl.writing == 0 && fl.later {
		fl.later = false
		for log, x := range f.logs {
			if x == fl {
				f.pending[log] = true
			}
		}
		f.signal()
	}
}

// announce hears the store's feed.
func (f *subFeed) announce(log string, _ int64) {
	f.mu.Lock()
	if log == "" {
		f.all = true
	} else if _, ok := f.logs[log]; ok {
		f.pending[log] = true
	}
	f.mu.Unlock()
	f.signal()
}

func (f *subFeed) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// run delivers what was announced, one log at a time, until the engine
// closes.
func (f *subFeed) run() {
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.wake:
		}
		f.mu.Lock()
		logs := make([]string, 0, len(f.pending))
		if f.all {
			for log := range f.logs {
				logs = append(logs, log)
			}
		} else {
			for log := range f.pending {
				logs = append(logs, log)
			}
		}
		f.all, f.pending = false, map[string]bool{}
		f.mu.Unlock()
		for _, log := range logs {
			if f.ctx.Err() != nil {
				return
			}
			f.deliver(log)
		}
	}
}

// deliver reads log after its position and runs the subscriptions of the
// entries no commit of this engine ran.
func (f *subFeed) deliver(log string) {
	f.mu.Lock()
	fl := f.logs[log]
	if fl == nil {
		f.mu.Unlock()
		return
	}
	if fl.writing > 0 {
		fl.later = true
		f.mu.Unlock()
		return
	}
	pos, gen := fl.pos, fl.gen
	f.mu.Unlock()

	entries, err := f.e.st.Read(f.ctx, log, pos, 0)
	if err != nil {
		// Read again at the next announcement or catch-up.
		f.e.log.Warn("subscriptions: cannot read owner log", "log", log, "error", err)
		return
	}
	if len(entries) == 0 {
		return
	}
	f.mu.Lock()
	if fl.gen != gen || fl.writing > 0 { // a commit began meanwhile: its entries may be among these
		fl.later = true
		f.mu.Unlock()
		return
	}
	var run []store.Entry
	for _, en := range entries {
		if _, ok := fl.done[en.Seq]; ok {
			delete(fl.done, en.Seq)
			continue
		}
		run = append(run, en)
	}
	fl.pos = entries[len(entries)-1].Seq
	f.mu.Unlock()

	o, ok := ownerOfLog(log)
	if !ok || len(run) == 0 {
		return
	}
	targets, done := f.e.subTargets(o, nil, nil)
	defer done()
	if len(targets) == 0 {
		return
	}
	for _, en := range run {
		a, ok := actionOf(en.Data)
		if !ok {
			continue // a reset marker, not an action
		}
		seq := en.Seq
		f.e.runSubs(f.ctx, nil, nil, o, targets, []any{a}, func(k int) string {
			return fmt.Sprintf("feed:%s:%d:sub%d", log, seq, k)
		})
	}
}

// ownerOfLog reads owner/SCOPE/KEY/NAME back (the key may hold '/').
func ownerOfLog(log string) (ownerRef, bool) {
	rest, ok := strings.CutPrefix(log, "owner/")
	if !ok {
		return ownerRef{}, false
	}
	scope, rest, ok := strings.Cut(rest, "/")
	k := strings.LastIndexByte(rest, '/')
	if !ok || k < 0 {
		return ownerRef{}, false
	}
	key, name := rest[:k], rest[k+1:]
	return ownerRef{addr: name + "@" + scope, name: name, scope: scope, key: key, log: log}, true
}

// actionOf is the action of a stored entry, as plain data; ok is false for
// an entry that is not an action (a reset marker).
func actionOf(data []byte) (any, bool) {
	var en struct {
		Rev    int             `json:"rev"`
		Action json.RawMessage `json:"action"`
	}
	if err := json.Unmarshal(data, &en); err != nil || en.Rev < 1 || en.Action == nil {
		return nil, false
	}
	var a any
	if err := json.Unmarshal(en.Action, &a); err != nil {
		return nil, false
	}
	return a, true
}
