package luabind

import (
	"testing"
	"time"
)

// The budget's clock is a duration since the budget was made; a deadline
// past its range saturates instead of wrapping into the past (which would
// cancel a callback at once).
func TestBudgetClockSaturates(t *testing.T) {
	if got := later(time.Second, NoCap); got != NoCap {
		t.Fatalf("later(1s, NoCap) = %v, want NoCap", got)
	}
	if got := later(time.Second, 2*time.Second); got != 3*time.Second {
		t.Fatalf("later(1s, 2s) = %v", got)
	}
	b := newBudget(NoCap)
	defer b.close()
	time.Sleep(time.Millisecond)
	b.enter(NoCap)
	if r := b.remaining(); r <= 0 {
		t.Fatalf("a callback with no limit has %v left", r)
	}
	if b.Err() != nil {
		t.Fatalf("a callback with no limit is cancelled: %v", b.Err())
	}
	b.exit()
}
