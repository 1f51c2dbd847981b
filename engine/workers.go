package engine

import "sync"

// workerPool runs boundary hooks of several registries at once without a
// goroutine each time: idle workers wait for a job, and a worker's stack,
// grown by running Lua, stays grown. Up to max workers exist; they end when
// the engine closes.
type workerPool struct {
	jobs chan func()
	mu   sync.RWMutex // held for reading while sending, for writing to close
	n    int          // workers started (under mu, written)
	max  int
	done bool
}

func newWorkerPool(max int) *workerPool {
	return &workerPool{jobs: make(chan func()), max: max}
}

// tryGo hands f to an idle worker, or to a new one while fewer than max
// exist; it reports false when f was not taken (the caller runs it, or
// does without).
func (p *workerPool) tryGo(f func()) bool {
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
	if p.done || p.n >= p.max {
		return false
	}
	p.n++
	go p.worker(f)
	return true
}

func (p *workerPool) worker(f func()) {
	f()
	for f := range p.jobs {
		f()
	}
}

// close ends the idle workers; busy ones end after their job.
func (p *workerPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.done = true
		close(p.jobs)
	}
}
