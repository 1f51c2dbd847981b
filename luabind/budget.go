package luabind

import (
	"errors"
	"sync"
	"time"
)

// ErrBudget is the error a cancelled callback fails with.
var ErrBudget = errors.New("cancelled: time budget")

// budget is the context.Context a State runs its callbacks under. One
// budget lives as long as its State and is reused by every callback, so
// arming it costs no allocation and no timer operation in the common case:
// the timer is started once and, when it fires early (the callback it was
// started for has ended), re-armed only if a callback is running. Frames
// nest: a callback entered while another one of the same state waits for
// host work gets a full budget of its own; the waiting frame's clock is
// stopped while it waits.
type budget struct {
	limit time.Duration
	s     *State    // the state this budget belongs to (found by shared functions)
	wd    *Watchdog // the memory watchdog, if any

	mu       sync.Mutex
	done     chan struct{}
	fired    bool
	cause    error // why it fired: ErrBudget, ErrMemoryLimit or a *CancelError (the host's context ended)
	timer    *time.Timer
	base     time.Time       // the budget's clock is the monotonic time since base (now)
	pending  bool            // the timer will fire
	fireAt   time.Duration   // when it will (on the budget's clock)
	frames   []time.Duration // remaining time of each open frame
	starts   []time.Duration // what each open frame started with
	running  bool            // the top frame's clock is ticking
	deadline time.Duration   // on the budget's clock
	stopped  int64           // the watchdog's sample count when the clock last stopped (watchdog.go)
	// suspended is when suspend last stopped the clock (on the budget's
	// clock; read only by the state's own goroutine: State.HostSince)
	suspended time.Duration
}

func newBudget(limit time.Duration) *budget {
	return &budget{limit: limit, done: make(chan struct{}), base: time.Now()}
}

// later is now+d on the budget's clock, saturating instead of wrapping.
func later(now, d time.Duration) time.Duration {
	if d > NoCap-now {
		return NoCap
	}
	return now + d
}

// now reads the budget's clock: one monotonic clock read (time.Since of a
// time with a monotonic reading), where time.Now reads the wall clock too.
func (b *budget) now() time.Duration { return time.Since(b.base) }

// context.Context, read by the VM at every instruction while set.
func (b *budget) Deadline() (time.Time, bool) { return time.Time{}, false }
func (b *budget) Done() <-chan struct{}       { return b.done }
func (b *budget) Value(any) any               { return nil }
func (b *budget) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fired {
		return b.cause
	}
	return nil
}

// CancelError is what a callback fails with when the host's context ended
// it: "cancelled: context canceled". errors.Is sees the context's error.
type CancelError struct{ Cause error }

func (e *CancelError) Error() string { return "cancelled: " + e.Cause.Error() }
func (e *CancelError) Unwrap() error { return e.Cause }

// cancelHost ends the running callback because the host's context ended.
func (b *budget) cancelHost(cause error) { b.cancel(&CancelError{Cause: cause}) }

// cancel fires the budget of a running callback for cause; it reports
// whether a callback was running.
func (b *budget) cancel(cause error) bool {
	return b.cancelIf(cause, -1)
}

// cancelIf is cancel for a callback whose script ran (its clock ticked)
// since the watchdog's sample number since; since < 0 is any callback.
func (b *budget) cancelIf(cause error, since int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.frames) == 0 || b.fired {
		return false
	}
	if since >= 0 && !b.running && b.stopped < since {
		return false // waiting (host work, another state) since before then
	}
	b.fired, b.cause = true, cause
	close(b.done)
	return true
}

func (b *budget) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = false
	if b.fired || !b.running {
		return
	}
	now := b.now()
	if rem := b.deadline - now; rem > 0 {
		b.arm(now, rem)
		return
	}
	b.fired, b.cause = true, ErrBudget
	close(b.done)
}

// arm makes sure the timer fires no later than d from now.
func (b *budget) arm(now, d time.Duration) {
	at := later(now, d)
	switch {
	case b.timer == nil:
		b.timer = time.AfterFunc(d, b.fire)
	case !b.pending:
		b.timer.Reset(d)
	case b.fireAt > at:
		if !b.timer.Stop() {
			return // fire is running: it re-arms for the running frame
		}
		b.timer.Reset(d)
	default:
		return
	}
	b.pending, b.fireAt = true, at
}

// startLocked starts the top frame's clock; it reports whether the
// watchdog wants a sample, which the caller takes once it has released
// b.mu (Watchdog.sample).
func (b *budget) startLocked(now time.Duration) bool {
	rem := b.frames[len(b.frames)-1]
	due := b.runLocked()
	b.deadline = later(now, rem)
	b.arm(now, rem)
	return due
}

// runLocked marks the top frame's clock ticking, for the watchdog too.
func (b *budget) runLocked() bool {
	b.running = true
	return b.wd != nil && b.wd.started()
}

// pauseLocked stops the top frame's clock, keeping what remains.
func (b *budget) pauseLocked(now time.Duration) {
	if !b.running {
		return
	}
	b.running = false
	b.frames[len(b.frames)-1] = b.deadline - now
	b.stoppedLocked()
}

// stoppedLocked notes when the clock stopped, for the watchdog.
func (b *budget) stoppedLocked() {
	if b.wd != nil {
		b.stopped = b.wd.samples.Load()
		b.wd.stopped()
	}
}

// NoCap is CallWithin's "no limit but the state's own budget".
const NoCap = time.Duration(1<<63 - 1)

// enter opens a frame with the state's limit, or less: what remains of
// the frame below (a nested callback spends its caller's budget), or
// within. It reports whether it is the outermost one.
func (b *budget) enter(within time.Duration) bool {
	now := b.now()
	b.mu.Lock()
	b.pauseLocked(now)
	lim := min(b.limit, within)
	if n := len(b.frames); n > 0 {
		lim = min(lim, b.frames[n-1])
	}
	b.frames = append(b.frames, lim)
	b.starts = append(b.starts, lim)
	due := b.startLocked(now)
	outer := len(b.frames) == 1
	b.mu.Unlock()
	if due {
		b.wd.sample()
	}
	return outer
}

// exit closes the top frame; it reports whether it was the outermost one,
// how much script time the frame used, which is charged to the frame
// below, and why the budget fired if it did (Err as the frame ends). The
// frame below stays paused until resume.
func (b *budget) exit() (bool, time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	top := len(b.frames) - 1
	rem := b.frames[top]
	if b.running { // a stopped clock (resumeToEnd) needs no reading
		b.running = false
		rem = b.deadline - b.now()
		b.stoppedLocked()
	}
	used := max(b.starts[top]-rem, 0)
	b.frames = b.frames[:top]
	b.starts = b.starts[:top]
	if top > 0 {
		b.frames[top-1] -= used
	}
	var cause error
	if b.fired {
		cause = b.cause
	}
	if len(b.frames) == 0 {
		if b.fired {
			b.fired, b.cause = false, nil
			b.done = make(chan struct{})
		}
	}
	return len(b.frames) == 0, used, cause
}

// remaining is what the top frame has left (NoCap outside a callback).
func (b *budget) remaining() time.Duration {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.frames)
	switch {
	case n == 0:
		return NoCap
	case b.running:
		return b.deadline - now
	}
	return b.frames[n-1]
}

// spend charges d to the top frame, which is paused (its script waits for
// a nested callback of another state).
func (b *budget) spend(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := len(b.frames); n > 0 && !b.running {
		b.frames[n-1] -= d
	}
}

// suspend stops the clock while the script waits for host work.
func (b *budget) suspend() {
	now := b.now()
	b.mu.Lock()
	b.pauseLocked(now)
	b.mu.Unlock()
	b.suspended = now
}

// resumeToEnd is resume for a wait after which the frame ends with no
// script running (a tail call of the callback's own function): the clock
// stays stopped and exit charges what the frame had used before the wait;
// a frame whose budget ran out meanwhile fails, as resume would make it.
//
// It takes the lock only when the frame ran out: frames and running are
// written only by the state's own goroutine (enter, exit, suspend, resume,
// spend; under b.mu, for the timer's and the watchdog's goroutines, which
// read them under b.mu too), and this is that goroutine, so it reads them
// without the lock; fired, which other goroutines write, is read under it.
func (b *budget) resumeToEnd() {
	if n := len(b.frames); n == 0 || b.running || b.frames[n-1] > 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.fired {
		b.fired, b.cause = true, ErrBudget
		close(b.done)
	}
}

// resume restarts the clock of the top frame.
func (b *budget) resume() {
	b.mu.Lock()
	if len(b.frames) == 0 || b.running {
		b.mu.Unlock()
		return
	}
	now := b.now()
	if b.frames[len(b.frames)-1] <= 0 {
		b.runLocked()
		b.deadline = now
		if !b.fired {
			b.fired, b.cause = true, ErrBudget
			close(b.done)
		}
		b.mu.Unlock()
		return
	}
	due := b.startLocked(now)
	b.mu.Unlock()
	if due {
		b.wd.sample() // a wait that ended on a heap over the limit cancels the callback here
	}
}

// close stops the timer and leaves the watchdog. The watchdog is left
// after b.mu is released: the watchdog takes its own lock and then a
// budget's (cancelAll), so holding b.mu while taking the watchdog's would
// deadlock against a cancellation running at that moment.
func (b *budget) close() {
	b.mu.Lock()
	if b.running { // not as the engine closes states; the watchdog's count stays right
		b.running = false
		b.stoppedLocked()
	}
	if b.timer != nil {
		b.timer.Stop()
		b.pending = false
	}
	b.mu.Unlock()
	if b.wd != nil {
		b.wd.remove(b)
	}
}
