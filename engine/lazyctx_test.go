package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A host callback's ctx behaves as context.WithTimeout's would, though its
// timer is made only when the callback waits on it.
func TestLazyDeadline(t *testing.T) {
	t.Run("runs out without Done being asked", func(t *testing.T) {
		l := newLazyDeadline(context.Background(), time.Now(), 5*time.Millisecond)
		defer l.cancel()
		if err := l.Err(); err != nil {
			t.Fatalf("Err before the deadline = %v", err)
		}
		if d, ok := l.Deadline(); !ok || time.Until(d) > 5*time.Millisecond {
			t.Fatalf("Deadline = %v, %v", d, ok)
		}
		time.Sleep(10 * time.Millisecond)
		if err := l.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err after the deadline = %v", err)
		}
		if c := context.Cause(l); !errors.Is(c, context.DeadlineExceeded) {
			t.Fatalf("Cause after the deadline = %v", c)
		}
		select {
		case <-l.Done():
		default:
			t.Fatal("Done not closed after the deadline")
		}
	})
	t.Run("the deadline is d from now, whatever the epoch", func(t *testing.T) {
		l := newLazyDeadline(context.Background(), time.Now().Add(-time.Hour), time.Minute)
		defer l.cancel()
		d, _ := l.Deadline()
		if u := time.Until(d); u <= 59*time.Second || u > time.Minute {
			t.Fatalf("deadline in %v, want about 1m", u)
		}
	})
	t.Run("a waiter is woken at the deadline", func(t *testing.T) {
		l := newLazyDeadline(context.Background(), time.Now(), 5*time.Millisecond)
		defer l.cancel()
		child, stop := context.WithCancel(l)
		defer stop()
		select {
		case <-child.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("a context derived from the callback's was not ended by its deadline")
		}
		if !errors.Is(l.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err = %v", l.Err())
		}
	})
	t.Run("the caller's end and deadline pass through", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKeyTest{}, "v"))
		l := newLazyDeadline(parent, time.Now(), time.Hour)
		defer l.cancel()
		if l.Value(ctxKeyTest{}) != "v" {
			t.Fatal("Value does not reach the caller's ctx")
		}
		cancel()
		if !errors.Is(l.Err(), context.Canceled) {
			t.Fatalf("Err after the caller's cancel = %v", l.Err())
		}
		<-l.Done()
		short, c2 := context.WithTimeout(context.Background(), time.Millisecond)
		defer c2()
		l2 := newLazyDeadline(short, time.Now(), time.Hour)
		if d, _ := l2.Deadline(); time.Until(d) > time.Millisecond {
			t.Fatalf("Deadline %v is later than the caller's", d)
		}
	})
	t.Run("cancel ends it, before or after Done", func(t *testing.T) {
		l := newLazyDeadline(context.Background(), time.Now(), time.Hour)
		l.cancel()
		if !errors.Is(l.Err(), context.Canceled) {
			t.Fatalf("Err after cancel = %v", l.Err())
		}
		<-l.Done()
		l2 := newLazyDeadline(context.Background(), time.Now(), time.Hour)
		d := l2.Done()
		l2.cancel()
		<-d
	})
	t.Run("a callback that does not wait makes no timer", func(t *testing.T) {
		e := &Engine{hostWait: time.Minute, epoch: time.Now()}
		ctx := context.Background()
		allocs := testing.AllocsPerRun(100, func() {
			h := e.hostCtx(ctx)
			if h.Err() != nil {
				t.Fatal("ended")
			}
			h.cancel()
		})
		if allocs > 1 { // context.WithTimeout made 4 (its context, timer, ...)
			t.Fatalf("%v allocations per host callback ctx, want <= 1", allocs)
		}
	})
}

type ctxKeyTest struct{}
