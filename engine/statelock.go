package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The registry lock. A registry's Lua state runs one thread at a time. A
// thread takes a free registry with one compare-and-swap; a thread that
// finds it taken registers as a waiter and sleeps until an unlock wakes it
// (no polling). Unlock wakes the longest-waiting waiter, which then takes
// the registry unless a running thread took it first: a thread that
// releases and takes a registry again keeps running instead of handing it
// to a sleeping one, which keeps throughput when goroutines share an
// instance. While a woken waiter has not tried yet, unlocks wake no other
// (woken): the holder's release costs one atomic load instead of the wait
// graph's lock, and the waiter clears the flag and tries once more before
// it sleeps again, so a release never leaves every waiter asleep. An
// unlock whose longest waiter has waited longer than handoffAfter hands the
// registry straight to it, bounding every wait: the unlocking thread runs
// and sees the wait, where the waiter may not get a processor to claim its
// turn while the holder keeps running (with a woken waiter pending, every
// checkEvery-th unlock looks).
//
// Threads wait for each other only in cycles the engine can see: thread T
// needs registry R held by H, H waits for a registry held by ... T. Then
// every thread that could resume in R is blocked until T finishes, so T
// borrows R: its frames go on top of the waiting ones and leave before any
// of them resumes. Two hooks of one boundary that call each other's
// programs therefore work instead of waiting for each other forever. The
// thread whose wait closes a cycle is the one that sees it (its check runs
// after every edge it adds), so no other waiter needs waking for it.

// thread identifies one logical thread of control (see frame.thread);
// waiting is the registry it waits for, if any.
type thread struct {
	waiting atomic.Pointer[registry]
	wake    chan struct{} // made on its first wait; one pending wake-up at most
	since   time.Time     // when its current wait began
}

// waitGraph is an engine's waiting threads, in the order they began waiting.
type waitGraph struct {
	mu      sync.Mutex
	waiters []*thread
}

// lockWait bounds how long a thread waits for a registry another thread is
// using (a host core that never returns, say).
const lockWait = time.Minute

// handoffAfter is the wait after which the registry is handed over.
const handoffAfter = 200 * time.Microsecond

// checkEvery: while a woken waiter has not tried yet, every checkEvery-th
// unlock looks at how long the longest waiter has waited.
const checkEvery = 16

// lock takes the registry's state for fr's thread; owned says whether this
// call took it (false: the thread already holds it, or borrows it).
func (r *registry) lock(fr *frame) (bool, error) {
	t := fr.thread
	if h := r.holder.Load(); h == t {
		return false, nil
	} else if h == nil && !r.starving.Load() && r.holder.CompareAndSwap(nil, t) {
		return true, nil
	}
	return r.lockSlow(fr, t)
}

func (r *registry) lockSlow(fr *frame, t *thread) (bool, error) {
	g := &r.set.engine.waits
	var deadline *time.Timer
	g.mu.Lock()
	if t.wake == nil {
		t.wake = make(chan struct{}, 1)
	}
	t.since = time.Now()
	t.waiting.Store(r)
	r.nwait.Add(1)
	g.waiters = append(g.waiters, t)
	leave := func() {
		r.woken.Store(false)
		t.waiting.Store(nil)
		r.nwait.Add(-1)
		if n := len(g.waiters); n > 0 {
			for k, w := range g.waiters {
				if w == t {
					copy(g.waiters[k:], g.waiters[k+1:])
					g.waiters[n-1] = nil
					g.waiters = g.waiters[:n-1]
					break
				}
			}
		}
		if r.starving.Load() && (time.Since(t.since) < handoffAfter || r.nwait.Load() == 0) {
			r.starving.Store(false)
		}
		if deadline != nil {
			deadline.Stop()
		}
	}
	for {
		if h := r.holder.Load(); h == t { // handed over by unlock
			leave()
			g.mu.Unlock()
			return true, nil
		}
		if !r.starving.Load() || g.first(r) == t {
			if r.holder.CompareAndSwap(nil, t) {
				leave()
				g.mu.Unlock()
				return true, nil
			}
		}
		if borrowable(r, t) {
			leave()
			g.wakeNext(r) // the wake-up it may have taken belongs to another
			g.mu.Unlock()
			return false, nil
		}
		if time.Since(t.since) > handoffAfter {
			r.starving.Store(true)
		}
		g.mu.Unlock()
		// Unlocks that saw woken set woke no one: clear it, then look
		// again before sleeping (an unlock after this sees it clear).
		r.woken.Store(false)
		if h := r.holder.Load(); h == nil || h == t {
			g.mu.Lock()
			continue
		}
		if deadline == nil {
			deadline = time.NewTimer(lockWait)
		}
		select {
		case <-t.wake:
		case <-fr.ctx.Done():
			g.mu.Lock()
			if r.holder.Load() == t { // handed over meanwhile: pass it on
				r.holder.Store(nil)
			}
			leave()
			g.wakeNext(r)
			g.mu.Unlock()
			return false, fr.ctx.Err()
		case <-deadline.C:
			g.mu.Lock()
			if r.holder.Load() == t {
				leave()
				g.mu.Unlock()
				return true, nil
			}
			leave()
			g.wakeNext(r)
			g.mu.Unlock()
			return false, fmt.Errorf("program %s stayed busy in another call for %v", r.program, lockWait)
		}
		g.mu.Lock()
	}
}

// first returns the longest-waiting thread waiting for r (g.mu held).
func (g *waitGraph) first(r *registry) *thread {
	for _, w := range g.waiters {
		if w.waiting.Load() == r {
			return w
		}
	}
	return nil
}

// wakeNext wakes the longest-waiting thread waiting for r, if r is free
// (g.mu held).
func (g *waitGraph) wakeNext(r *registry) {
	if r.holder.Load() != nil {
		return
	}
	if w := g.first(r); w != nil {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// borrowable reports whether the holder of r waits, through a chain of
// holders, for thread t (the caller holds the wait graph's lock).
func borrowable(r *registry, t *thread) bool {
	h := r.holder.Load()
	for range 64 {
		if h == nil {
			return false
		}
		if h == t {
			return true
		}
		w := h.waiting.Load()
		if w == nil {
			return false
		}
		h = w.holder.Load()
	}
	return false
}

// unlock releases what lock took, waking a waiter; a starving waiter gets
// the registry handed over.
func (r *registry) unlock(owned bool) {
	if !owned {
		return
	}
	r.holder.Store(nil)
	if r.nwait.Load() == 0 {
		return
	}
	if r.woken.Load() && !r.starving.Load() && r.skips.Add(1)%checkEvery != 0 {
		return // the woken waiter tries before it sleeps again
	}
	g := &r.set.engine.waits
	g.mu.Lock()
	if w := g.first(r); w != nil {
		// The unlocking thread, which runs, sees how long w has waited:
		// a waiter that no scheduler lets run still gets the registry.
		if r.starving.Load() || time.Since(w.since) > handoffAfter {
			r.starving.Store(true)
			r.holder.CompareAndSwap(nil, w) // w owns it when it wakes
		}
		r.woken.Store(true)
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	g.mu.Unlock()
}
