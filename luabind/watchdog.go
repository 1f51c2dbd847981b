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
// .. s` in a loop, a table grown key by key), so while any callback of the
// states it watches runs, the watchdog samples the Go heap every Interval;
// over Limit, it cancels the running callbacks whose script ran since the
// sample before last (they fail with ErrMemoryLimit, as a spent budget
// does: the states stay usable; one that waited for host work all along is
// spared, unless none ran or the heap is still over at the next sample,
// and then all are cancelled) and runs a collection so that the memory
// they held is given back. Go counts its heap for the whole process only,
// so callbacks that ran in the same window share the cancellation.
//
// The cost to a callback is two atomic adds; sampling runs on the
// watchdog's own goroutine, and only while callbacks run. One Watchdog
// serves an engine; it is safe for concurrent use.
type Watchdog struct {
	limit    uint64
	interval time.Duration

	mu     sync.Mutex
	states map[*budget]struct{}
	active atomic.Int64
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	// Cancels counts the callbacks cancelled so far.
	cancels atomic.Int64
	// samples counts the samples taken; a budget notes it when its clock
	// stops, so the watchdog can tell which callbacks ran lately.
	samples atomic.Int64
}

// WatchdogInterval is how often a Watchdog samples the heap while
// callbacks run.
const WatchdogInterval = 2 * time.Millisecond

// NewWatchdog starts a watchdog for a heap limit in bytes; Close stops it.
func NewWatchdog(limit uint64) *Watchdog {
	w := &Watchdog{limit: limit, interval: WatchdogInterval, states: map[*budget]struct{}{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// Limit is the heap limit in bytes.
func (w *Watchdog) Limit() uint64 { return w.limit }

// Cancels is how many callbacks the watchdog has cancelled.
func (w *Watchdog) Cancels() int64 { return w.cancels.Load() }

// Close stops the watchdog.
func (w *Watchdog) Close() {
	close(w.stop)
	<-w.done
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

// begin and end bracket an outermost callback.
func (w *Watchdog) begin() {
	if w.active.Add(1) == 1 {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

func (w *Watchdog) end() { w.active.Add(-1) }

func heapBytes(s []metrics.Sample) uint64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func (w *Watchdog) loop() {
	defer close(w.done)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	cancelled := false // the last sample over the limit cancelled callbacks
	for {
		if w.active.Load() == 0 {
			select {
			case <-w.stop:
				return
			case <-w.wake:
			}
		}
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		now := w.samples.Add(1)
		over := heapBytes(sample) > w.limit
		if over && cancelled {
			// What the callbacks cancelled last time built may still be
			// counted (garbage not yet collected once they unwound):
			// collect before judging the callbacks running now.
			runtime.GC()
			over = heapBytes(sample) > w.limit
		}
		if !over {
			cancelled = false
			continue
		}
		// Only a callback whose script ran since the sample before last
		// can have grown the heap since: those are cancelled, and a
		// callback that waited all that time (for host work, or for a
		// nested call into another state, which is judged on its own) is
		// left alone. If none ran, or the heap is still over right after
		// a cancellation (the memory is held by a waiting callback, or a
		// cancelled one has not unwound yet), every callback is cancelled.
		since := now - 2
		if cancelled {
			since = -1
		}
		cancelled = true
		n := w.cancelAll(since)
		if n == 0 && since >= 0 {
			n = w.cancelAll(-1)
		}
		w.cancels.Add(int64(n))
		// What the cancelled callbacks built is garbage now: collect it, so
		// the next sample does not cancel callbacks that did nothing wrong.
		runtime.GC()
	}
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
