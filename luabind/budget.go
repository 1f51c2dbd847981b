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
	s     *State // the state this budget belongs to (found by shared functions)

	mu       sync.Mutex
	done     chan struct{}
	fired    bool
	timer    *time.Timer
	pending  bool            // the timer will fire
	fireAt   time.Time       // when it will
	frames   []time.Duration // remaining time of each open frame
	running  bool            // the top frame's clock is ticking
	deadline time.Time
	// host is why the host's context ended the running callback (nil: the
	// budget did, or nothing did).
	host error
}

func newBudget(limit time.Duration) *budget {
	return &budget{limit: limit, done: make(chan struct{})}
}

// context.Context, read by the VM at every instruction while set.
func (b *budget) Deadline() (time.Time, bool) { return time.Time{}, false }
func (b *budget) Done() <-chan struct{}       { return b.done }
func (b *budget) Value(any) any               { return nil }
func (b *budget) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fired {
		if b.host != nil {
			return b.host
		}
		return ErrBudget
	}
	return nil
}

// CancelError is what a callback fails with when the host's context ended
// it: "cancelled: context canceled". errors.Is sees the context's error.
type CancelError struct{ Cause error }

func (e *CancelError) Error() string { return "cancelled: " + e.Cause.Error() }
func (e *CancelError) Unwrap() error { return e.Cause }

// cancelHost ends the running callback because the host's context ended.
func (b *budget) cancelHost(cause error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fired || len(b.frames) == 0 {
		return
	}
	b.fired = true
	b.host = &CancelError{Cause: cause}
	close(b.done)
}

func (b *budget) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = false
	if b.fired || !b.running {
		return
	}
	now := time.Now()
	if rem := b.deadline.Sub(now); rem > 0 {
		b.arm(now, rem)
		return
	}
	b.fired = true
	close(b.done)
}

// arm makes sure the timer fires no later than d from now.
func (b *budget) arm(now time.Time, d time.Duration) {
	at := now.Add(d)
	switch {
	case b.timer == nil:
		b.timer = time.AfterFunc(d, b.fire)
	case !b.pending:
		b.timer.Reset(d)
	case b.fireAt.After(at):
		if !b.timer.Stop() {
			return // fire is running: it re-arms for the running frame
		}
		b.timer.Reset(d)
	default:
		return
	}
	b.pending, b.fireAt = true, at
}

// startLocked starts the top frame's clock.
func (b *budget) startLocked(now time.Time) {
	rem := b.frames[len(b.frames)-1]
	b.running = true
	b.deadline = now.Add(rem)
	b.arm(now, rem)
}

// pauseLocked stops the top frame's clock, keeping what remains.
func (b *budget) pauseLocked(now time.Time) {
	if !b.running {
		return
	}
	b.running = false
	b.frames[len(b.frames)-1] = b.deadline.Sub(now)
}

// enter opens a frame; it reports whether it is the outermost one.
func (b *budget) enter() bool {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pauseLocked(now)
	b.frames = append(b.frames, b.limit)
	b.startLocked(now)
	return len(b.frames) == 1
}

// exit closes the top frame; it reports whether it was the outermost one.
// The frame below stays paused until resume.
func (b *budget) exit() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running {
		b.running = false // the frame is dropped: what remained does not matter
	}
	b.frames = b.frames[:len(b.frames)-1]
	if len(b.frames) == 0 && b.fired {
		b.fired = false
		b.host = nil
		b.done = make(chan struct{})
	}
	return len(b.frames) == 0
}

// suspend stops the clock while the script waits for host work.
func (b *budget) suspend() {
	now := time.Now()
	b.mu.Lock()
	b.pauseLocked(now)
	b.mu.Unlock()
}

// resume restarts the clock of the top frame.
func (b *budget) resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.frames) == 0 || b.running {
		return
	}
	now := time.Now()
	if b.frames[len(b.frames)-1] <= 0 {
		b.running = true
		b.deadline = now
		if !b.fired {
			b.fired = true
			close(b.done)
		}
		return
	}
	b.startLocked(now)
}

func (b *budget) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
		b.pending = false
	}
}
