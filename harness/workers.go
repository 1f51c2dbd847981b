package harness

import "sync"

// workers run the answers of a long-lived runtime on goroutines kept from
// one event to the next. An answer runs deep (the engine, a Lua guard,
// SQLite's statements), and a goroutine started for each event grew its
// stack to that depth every time, copying it at each doubling: some 15% of
// a warm event's CPU. A kept goroutine keeps its stack (the garbage
// collector may halve an idle one's, which one event grows back).
//
// At most max goroutines wait idle; an event that finds none idle (all
// are busy, say with answers past their time) starts another, which stays
// only while there is room among the idle.
type workers struct {
	mu     sync.Mutex
	idle   []chan func() // each an idle worker's inbox
	max    int
	closed bool
}

// maxIdleWorkers bounds the workers a runtime keeps idle.
const maxIdleWorkers = 16

// run runs f on an idle worker, or on a new goroutine when none is idle.
func (w *workers) run(f func()) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		in := w.idle[n-1]
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		in <- f
		return
	}
	w.mu.Unlock()
	go w.loop(f)
}

// loop runs f, then the functions handed to it while it is kept idle.
func (w *workers) loop(f func()) {
	in := make(chan func(), 1)
	for {
		f()
		w.mu.Lock()
		if w.closed || len(w.idle) >= w.max {
			w.mu.Unlock()
			return
		}
		w.idle = append(w.idle, in)
		w.mu.Unlock()
		if f = <-in; f == nil {
			return
		}
	}
}

// close ends the idle workers; a busy one ends when its function returns.
func (w *workers) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for _, in := range w.idle {
		close(in)
	}
	w.idle = nil
}
