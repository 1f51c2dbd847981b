package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// lazyDeadline is the ctx of one host callback under the host timeout: the
// caller's ctx with a deadline host_timeout after the callback started. Most
// callbacks (an in-process core, the floor) return without ever asking for
// Done, so the timer behind it is made only when someone does (Done, or Err
// once the deadline has passed); a callback that never waits costs one
// clock read and this struct, not a timer and its context.
type lazyDeadline struct {
	parent context.Context
	// the deadline is began plus wait, or the parent's (capped), added up
	// when asked for: most callbacks never ask
	began  time.Time
	wait   time.Duration
	capped bool
	parDL  time.Time // the parent's deadline, when capped
	mu     sync.Mutex
	inner  atomic.Pointer[lazyInner] // set once, under mu
	done   bool                      // cancelled before inner was made
	commit atomic.Pointer[chain]     // while its core runs, the chain of the core this is the ctx of (Commit)
}

type lazyInner struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// newLazyDeadline's deadline is d from now, read as the monotonic time
// since epoch (a time with a monotonic reading): one clock read, where
// time.Now reads the wall clock too.
func newLazyDeadline(parent context.Context, epoch time.Time, d time.Duration) *lazyDeadline {
	l := new(lazyDeadline)
	l.start(parent, epoch.Add(time.Since(epoch)), d)
	return l
}

// start makes l, unused so far, the ctx of a callback that began at
// began (a time with a monotonic reading): its deadline is d after that.
func (l *lazyDeadline) start(parent context.Context, began time.Time, d time.Duration) {
	l.parent, l.began, l.wait = parent, began, d
	if pd, ok := parent.Deadline(); ok && pd.Before(began.Add(d)) {
		l.capped, l.parDL = true, pd
	}
}

// deadline is when the callback's time is up.
func (l *lazyDeadline) deadline() time.Time {
	if l.capped {
		return l.parDL
	}
	return l.began.Add(l.wait)
}

// hostCtxIn is hostCtx made in in, a struct no callback used yet (nil: a
// new one), for a callback that began at at: a clock reading the caller
// took just before, so as not to read the clock again (zero: now).
func (e *Engine) hostCtxIn(ctx context.Context, in *lazyDeadline, at time.Time) *lazyDeadline {
	if in == nil {
		in = new(lazyDeadline)
	}
	if at.IsZero() {
		at = e.epoch.Add(time.Since(e.epoch))
	}
	in.start(ctx, at, e.hostWait)
	return in
}

// real makes (once) the context the lazy one stands for.
func (l *lazyDeadline) real() context.Context {
	if in := l.inner.Load(); in != nil {
		return in.ctx
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if in := l.inner.Load(); in != nil {
		return in.ctx
	}
	ctx, cancel := context.WithDeadline(l.parent, l.deadline())
	if l.done { // asked for after the callback returned: already over
		cancel()
	}
	l.inner.Store(&lazyInner{ctx: ctx, cancel: cancel})
	return ctx
}

func (l *lazyDeadline) Deadline() (time.Time, bool) { return l.deadline(), true }

func (l *lazyDeadline) Done() <-chan struct{} { return l.real().Done() }

func (l *lazyDeadline) Err() error {
	if in := l.inner.Load(); in != nil {
		return in.ctx.Err()
	}
	l.mu.Lock()
	done := l.done
	l.mu.Unlock()
	if done || l.parent.Err() != nil || time.Until(l.deadline()) <= 0 {
		return l.real().Err()
	}
	return nil
}

// Value answers from the parent until the context is over; from then on
// (and once made) from the real context, so that context.Cause and the
// contexts derived from this one see its end.
func (l *lazyDeadline) Value(key any) any {
	if _, ok := key.(commitKey); ok {
		if ch := l.commit.Load(); ch != nil {
			return ch
		}
	}
	if in := l.inner.Load(); in != nil {
		return in.ctx.Value(key)
	}
	if l.Err() != nil {
		return l.real().Value(key)
	}
	return l.parent.Value(key)
}

// cancel ends the context, as a CancelFunc: the timer, if made, is stopped.
func (l *lazyDeadline) cancel() {
	l.mu.Lock()
	l.done = true
	in := l.inner.Load()
	l.mu.Unlock()
	if in != nil {
		in.cancel()
	}
}
