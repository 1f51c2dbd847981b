// Package workers is the one pool of worker goroutines: the engine runs
// boundary hooks of several registries at once on it, and `attune mcp`
// its requests and its reading of the client.
//
// Idle workers wait for a job, so that a job starts without a goroutine
// made for it, and a worker's stack, grown by running Lua (the tool chain,
// a guard), stays grown: a fresh goroutine per request grew its stack from
// its first few kilobytes every time, a tenth of the proxy's CPU per call.
package workers

import "sync"

// Pool runs jobs on its workers, at most max of them (no bound when max
// is 0). Workers live until Close; a busy one ends after its job.
type Pool struct {
	jobs chan func()
	mu   sync.RWMutex // held for reading while sending, for writing to close
	n    int          // workers started (under mu, written)
	max  int
	done bool
}

// New returns a pool of at most max workers (0: as many as are busy).
func New(max int) *Pool { return &Pool{jobs: make(chan func()), max: max} }

// TryGo hands f to an idle worker, or to a new one while fewer than max
// exist; it reports false when f was not taken (the pool is full or
// closed: the caller runs f, or does without).
func (p *Pool) TryGo(f func()) bool {
	p.mu.RLock()
	if p.done {
		p.mu.RUnlock()
		return false
	}
	select {
	case p.jobs <- f:
		p.mu.RUnlock()
		return true
	default:
	}
	p.mu.RUnlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || p.max > 0 && p.n >= p.max {
		return false
	}
	p.n++
	go p.worker(f)
	return true
}

// Go runs f on a worker, or on a goroutine of its own when the pool is
// full or closed.
func (p *Pool) Go(f func()) {
	if !p.TryGo(f) {
		go f()
	}
}

func (p *Pool) worker(f func()) {
	f()
	for f := range p.jobs {
		f()
	}
}

// Close ends the idle workers; busy ones end after their job.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.done = true
		close(p.jobs)
	}
}
