package harness

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// warmSet is the LRU of the sessions `hook serve` keeps warm: the main
// instance id of each, and the instances (the session's and its
// subagents') it holds.
type warmSet struct {
	mu    sync.Mutex
	order *list.List               // of *warmEntry, most recent first
	byID  map[string]*list.Element // main id ->
}

type warmEntry struct {
	main  string
	ids   map[string]bool
	since time.Time
}

// touchWarm records that an event of instance id (of session main) ran.
func (r *Runtime) touchWarm(main, id string) {
	w := &r.warmSet
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byID == nil {
		w.order, w.byID = list.New(), map[string]*list.Element{}
	}
	if el, ok := w.byID[main]; ok {
		e := el.Value.(*warmEntry)
		e.ids[id], e.since = true, time.Now()
		w.order.MoveToFront(el)
		return
	}
	w.byID[main] = w.order.PushFront(&warmEntry{main: main, ids: map[string]bool{id: true}, since: time.Now()})
}

// WarmCount is the sessions kept warm.
func (r *Runtime) WarmCount() int {
	r.warmSet.mu.Lock()
	defer r.warmSet.mu.Unlock()
	return len(r.warmSet.byID)
}

// forgetWarm drops a session that ended.
func (r *Runtime) forgetWarm(main string) {
	w := &r.warmSet
	w.mu.Lock()
	defer w.mu.Unlock()
	if el, ok := w.byID[main]; ok {
		w.order.Remove(el)
		delete(w.byID, main)
	}
}

// EvictWarm stops the sessions past the most kept warm (the least recently
// used first) and those idle past idle, each under its lock, and removes
// their lock and reach files: an invented session costs nothing once gone.
func (r *Runtime) EvictWarm(ctx context.Context, most int, idle time.Duration) int {
	w := &r.warmSet
	w.mu.Lock()
	var out []*warmEntry
	if w.order != nil {
		for el := w.order.Back(); el != nil; {
			e := el.Value.(*warmEntry)
			prev := el.Prev()
			if w.order.Len() > most || time.Since(e.since) > idle {
				w.order.Remove(el)
				delete(w.byID, e.main)
				out = append(out, e)
			}
			el = prev
		}
	}
	w.mu.Unlock()
	for _, e := range out {
		lctx, cancel := context.WithTimeout(ctx, time.Second)
		l, err := takeLockWith(lctx, r.dir, e.main, r.locks.take(lockName(r.dir, e.main)))
		cancel()
		if err != nil { // busy: an event runs; try again later
			for id := range e.ids {
				r.touchWarm(e.main, id)
			}
			continue
		}
		for id := range e.ids {
			if inst, ok := r.e.Instance(id); ok {
				inst.Stop()
			}
			_ = dropReach(r.dir, id)
		}
		l.remove()
	}
	return len(out)
}

// LockFile is the file of session's lock, which evicting a warm session
// removes.
func (r *Runtime) LockFile(session string) string { return lockName(r.dir, session) }
