package luabind

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// ErrMemoryLimit is what a callback cancelled by a Watchdog fails with
// (errors.Is(err, ErrMemory) holds too).
var ErrMemoryLimit = fmt.Errorf("cancelled: %w limit (the host's heap went over engine.memory_limit while it ran)", ErrMemory)

// Watchdog bounds the memory behaviors can make the host use. gopher-lua has
// no allocation hook, and some allocations no built-in cap can see (`s = s
// .. s` in a loop, a table grown key by key), so the watchdog samples the
// Go heap while scripts run: every Interval while the clock of a callback
// of the states it watches ticks, and when a clock starts (a callback
// begins, or its script goes on after host work) and the last sample is
// older than Interval. Over Limit, it cancels the callbacks whose script
// ran since the last sample under the limit (they fail with
// ErrMemoryLimit, as a spent budget does: the states stay usable; one that
// waited for host work since before then is spared, unless none ran or
// the heap is still over at the next sample, and then all are cancelled)
// and runs a collection so that the memory they held is given back. Go
// counts its heap for the whole process only, so callbacks that ran in the
// same window share the cancellation.
//
// A script can only grow the heap while its clock ticks, so no sample is
// taken while every callback waits for host work: a callback that waits
// costs no timer and no wake-up, and one whose wait ends on a heap over the
// limit is cancelled as its script goes on. The cost to a callback is a
// clock reading and a short lock when its clock starts and stops, and a
// timer set and stopped when it is the only one running; sampling runs on
// a timer's goroutine, or on the callback's own when a sample is due as
// its clock starts. One Watchdog serves an engine; it is safe for
// concurrent use.
type Watchdog struct {
	limit    uint64
	interval time.Duration
	base     time.Time // the watchdog's clock is the monotonic time since base

	mu     sync.Mutex
	states map[*budget]struct{}

	// tmu guards the timer and the count of ticking clocks; it is taken
	// under a budget's lock (started, stopped) and takes no other lock
	tmu     sync.Mutex
	running int         // callbacks whose clock ticks
	timer   *time.Timer // samples every interval while running > 0
	closed  bool

	// smu makes samples one at a time, and guards what they leave
	smu       sync.Mutex
	lastOK    int64 // the number of the last sample under the limit
	cancelled bool  // the last sample over the limit cancelled callbacks

	last atomic.Int64 // when the last sample was taken, on the watchdog's clock
	// Cancels counts the callbacks cancelled so far.
	cancels atomic.Int64
	// samples counts the samples taken; a budget notes it when its clock
	// stops, so the watchdog can tell which callbacks ran lately.
	samples atomic.Int64
}

// WatchdogInterval is how often a Watchdog samples the heap while
// callbacks' scripts run.
const WatchdogInterval = 2 * time.Millisecond

// NewWatchdog makes a watchdog for a heap limit in bytes; Close stops it.
func NewWatchdog(limit uint64) *Watchdog {
	return &Watchdog{limit: limit, interval: WatchdogInterval, base: time.Now(), states: map[*budget]struct{}{}}
}

// Limit is the heap limit in bytes.
func (w *Watchdog) Limit() uint64 { return w.limit }

// Cancels is how many callbacks the watchdog has cancelled.
func (w *Watchdog) Cancels() int64 { return w.cancels.Load() }

// Close stops the watchdog: it samples no more.
func (w *Watchdog) Close() {
	w.tmu.Lock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.tmu.Unlock()
}

func (w *Watchdog) add(b *budget) {
	w.mu.Lock()
	w.states[b] = struct{}{}
	w.mu.Unlock()
}

func (w *Watchdog) remove(b *budget) {
	w.mu.Lock()
	delete(w.states, b)
	w.mu.Unlock()
}

func (w *Watchdog) now() time.Duration { return time.Since(w.base) }

// started notes a callback's clock starting (under the budget's lock); it
// reports whether a sample is due, which the caller takes (sample) once it
// has released that lock.
func (w *Watchdog) started() bool {
	now := w.now()
	left := w.interval - (now - time.Duration(w.last.Load()))
	w.tmu.Lock()
	w.running++
	if w.running == 1 && left > 0 && !w.closed {
		// the first clock: the timer takes the next sample when it is due
		if w.timer == nil {
			w.timer = time.AfterFunc(left, w.tick)
		} else {
			w.timer.Reset(left)
		}
	}
	closed := w.closed
	w.tmu.Unlock()
	return left <= 0 && !closed
}

// stopped notes a callback's clock stopping (under the budget's lock).
func (w *Watchdog) stopped() {
	w.tmu.Lock()
	w.running--
	if w.running == 0 && w.timer != nil {
		w.timer.Stop()
	}
	w.tmu.Unlock()
}

// tick is the timer's sample; the timer is set again while clocks tick.
func (w *Watchdog) tick() {
	w.tmu.Lock()
	ticking := w.running > 0 && !w.closed
	w.tmu.Unlock()
	if ticking {
		w.sample()
	}
}

func heapBytes(s []metrics.Sample) uint64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// sample reads the heap and, over the limit, cancels callbacks; then, while
// clocks tick, it sets the timer for the next sample. No lock of a budget
// may be held (cancelAll takes them).
func (w *Watchdog) sample() {
	w.smu.Lock()
	defer w.smu.Unlock()
	w.last.Store(int64(w.now()))
	defer func() {
		w.tmu.Lock()
		if w.running > 0 && !w.closed {
			if w.timer == nil {
				w.timer = time.AfterFunc(w.interval, w.tick)
			} else {
				w.timer.Reset(w.interval)
			}
		}
		w.tmu.Unlock()
	}()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	now := w.samples.Add(1)
	over := heapBytes(sample) > w.limit
	if over && w.cancelled {
		// What the callbacks cancelled last time built may still be
		// counted (garbage not yet collected once they unwound):
		// collect before judging the callbacks running now.
		runtime.GC()
		over = heapBytes(sample) > w.limit
	}
	if !over {
		w.cancelled, w.lastOK = false, now
		return
	}
	// Only a callback whose script ran since the last sample under the
	// limit can have grown the heap since: those are cancelled, and a
	// callback that waited all that time (for host work, or for a nested
	// call into another state, which is judged on its own) is left alone.
	// If none ran, or the heap is still over right after a cancellation
	// (the memory is held by a waiting callback, or a cancelled one has
	// not unwound yet), every callback is cancelled.
	since := w.lastOK
	if w.cancelled {
		since = -1
	}
	w.cancelled = true
	n := w.cancelAll(since)
	if n == 0 && since >= 0 {
		n = w.cancelAll(-1)
	}
	w.cancels.Add(int64(n))
	// What the cancelled callbacks built is garbage now: collect it, so
	// the next sample does not cancel callbacks that did nothing wrong.
	runtime.GC()
}

// cancelAll cancels the callbacks that ran since sample number since (all
// of them for since < 0) and reports how many.
func (w *Watchdog) cancelAll(since int64) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for b := range w.states {
		if b.cancelIf(ErrMemoryLimit, since) {
			n++
		}
	}
	return n
}
