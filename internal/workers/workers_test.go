package workers

import (
	"sync"
	"testing"
)

// A worker runs the next job after its own; a bounded pool refuses once
// full; a closed pool refuses and Go still runs the job.
func TestPool(t *testing.T) {
	p := New(1)
	release := make(chan struct{})
	started := make(chan struct{})
	if !p.TryGo(func() { close(started); <-release }) {
		t.Fatal("an empty pool refused")
	}
	<-started
	if p.TryGo(func() {}) {
		t.Fatal("a full pool took a job")
	}
	var wg sync.WaitGroup
	wg.Add(1)
	p.Go(func() { wg.Done() }) // full: a goroutine of its own
	wg.Wait()
	close(release)
	p.Close()
	if p.TryGo(func() {}) {
		t.Fatal("a closed pool took a job")
	}
	u := New(0)
	defer u.Close()
	wg.Add(100)
	for range 100 {
		u.Go(func() { wg.Done() })
	}
	wg.Wait()
}
