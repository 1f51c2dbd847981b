package luabind

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// watchedPair is two states under one watchdog whose limit is the heap now
// plus 64 MiB; the first has host.wait, which waits (as host work does,
// its clock stopped) until release is closed.
func watchedPair(t *testing.T) (w *Watchdog, a, b *State, entered, release chan struct{}) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	w = NewWatchdog(heapBytes(s) + 64<<20)
	t.Cleanup(w.Close)
	entered, release = make(chan struct{}), make(chan struct{})
	a = NewState(Options{Budget: 20 * time.Second, Watchdog: w})
	b = NewState(Options{Budget: 20 * time.Second, Watchdog: w})
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	a.Open(NewLibrary([]*Func{{Name: "host/wait", Ambients: Callback, Leaves: true, Fn: func(s *State) int {
		close(entered)
		<-release
		return 0
	}}}))
	return w, a, b, entered, release
}

// R1.11: over the memory limit the watchdog cancels the callbacks that ran
// lately, not one that has been waiting for host work all along: another
// state's `s = s .. s` fails with the memory limit, the waiting callback
// finishes as usual.
func TestWatchdogSparesWaitingCallbacks(t *testing.T) {
	w, a, b, entered, release := watchedPair(t)
	done := make(chan error, 1)
	go func() { done <- run(t, a, Callback, `local before = "kept" host.wait() assert(before == "kept")`) }()
	<-entered
	time.Sleep(20 * time.Millisecond) // several samples go by while it waits
	err := run(t, b, Callback, `local s = "x" while true do s = s .. s end`)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("the hog: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the waiting callback was cancelled too: %v", err)
	}
	if n := w.Cancels(); n != 1 {
		t.Fatalf("%d callbacks cancelled, want 1", n)
	}
}

// When no callback ran lately, the memory can only be held by the waiting
// ones (or the host): every callback is cancelled, as before.
func TestWatchdogCancelsWaitingCallbacksWhenNoneRan(t *testing.T) {
	_, a, _, entered, release := watchedPair(t)
	done := make(chan error, 1)
	go func() { done <- run(t, a, Callback, `host.wait() local n = 0 for i = 1, 10 do n = n + i end`) }()
	<-entered
	time.Sleep(20 * time.Millisecond)
	hold := make([]byte, 128<<20) // over the limit, and no script is running
	for i := range hold {
		hold[i] = byte(i)
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	err := <-done
	runtime.KeepAlive(hold)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("the waiting callback: %v", err)
	}
}

// TestWatchdogCloseWhileCancelling: states closing while the watchdog
// cancels (it takes its own lock, then each budget's) never deadlock; a
// budget that took its own lock and then the watchdog's, as close once
// did, hung here within a few thousand rounds.
func TestWatchdogCloseWhileCancelling(t *testing.T) {
	w := NewWatchdog(1 << 62) // never over: only cancelAll below cancels
	t.Cleanup(w.Close)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20000 {
			NewState(Options{Watchdog: w}).Close()
		}
	}()
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				w.cancelAll(-1)
			}
		}
	}()
	defer close(stop)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("closing states while the watchdog cancels deadlocked")
	}
}

// R1.11: the heap is sampled only while a script runs: a callback that
// waits for host work costs the watchdog no sample (no timer, no wake-up
// of the process) however long it waits.
func TestWatchdogSamplesNothingWhileCallbacksWait(t *testing.T) {
	w, a, _, entered, release := watchedPair(t)
	done := make(chan error, 1)
	go func() { done <- run(t, a, Callback, `host.wait()`) }()
	<-entered
	time.Sleep(5 * w.interval) // a sample due as the callback began is taken by now
	before := w.samples.Load()
	time.Sleep(20 * w.interval)
	after := w.samples.Load()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("%d samples while the only callback waited, want none", after-before)
	}
}

// R1.11: a script that grows the heap in short runs between host calls,
// each shorter than the watchdog's interval, is still cancelled: a sample
// is taken as its clock starts again once the last one is older than the
// interval.
func TestWatchdogCatchesShortRunsBetweenHostCalls(t *testing.T) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	w := NewWatchdog(heapBytes(s) + 64<<20)
	t.Cleanup(w.Close)
	st := NewState(Options{Budget: 20 * time.Second, Watchdog: w})
	t.Cleanup(st.Close)
	st.Open(NewLibrary([]*Func{{Name: "host/pause", Ambients: Callback, Leaves: true, Fn: func(s *State) int {
		time.Sleep(w.interval) // the script's clock is stopped meanwhile
		return 0
	}}}))
	err := run(t, st, Callback, `keep = {} while true do keep[#keep + 1] = string.rep("x", 2^20) .. #keep host.pause() end`)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("the hog: %v", err)
	}
}
