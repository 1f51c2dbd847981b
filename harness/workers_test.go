package harness

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// The workers of a warm runtime: a function runs even while every kept
// worker is busy (an answer past its time never holds up the next event),
// sequential events reuse one kept goroutine, at most max stay idle, and
// close ends the idle ones.
func TestWorkers(t *testing.T) {
	base := runtime.NumGoroutine()
	w := &workers{max: 2}
	block := make(chan struct{})
	ran := make(chan int, 8)
	w.run(func() { <-block; ran <- 0 }) // busy until released
	w.run(func() { ran <- 1 })          // must not wait for the first
	select {
	case k := <-ran:
		if k != 1 {
			t.Fatalf("ran %d first", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a function waited for a busy worker")
	}
	close(block)
	<-ran
	waitIdle(t, w, 2)
	for k := range 100 { // one after the other: the idle workers serve them all
		done := make(chan struct{})
		w.run(func() { close(done) })
		<-done
		waitIdle(t, w, 2)
		if n := runtime.NumGoroutine(); n > base+2 {
			t.Fatalf("after %d runs: %d goroutines, want at most %d", k+1, n, base+2)
		}
	}
	var wg sync.WaitGroup // more at once than max: the extra ones end
	release := make(chan struct{})
	for range 5 {
		wg.Add(1)
		w.run(func() { wg.Done(); <-release })
	}
	wg.Wait()
	close(release)
	waitIdle(t, w, 2)
	w.close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Fatalf("after close: %d goroutines, want %d", n, base)
	}
	done := make(chan struct{}) // closed: a function still runs
	w.run(func() { close(done) })
	<-done
}

// waitIdle waits until w keeps n idle workers.
func waitIdle(t *testing.T, w *workers, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		k := len(w.idle)
		w.mu.Unlock()
		if k == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle workers, want %d", k, n)
		}
		time.Sleep(time.Millisecond)
	}
}
