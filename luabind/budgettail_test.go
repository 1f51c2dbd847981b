package luabind

import (
	"errors"
	"testing"
	"time"
)

// A callback that ends in "return f(...)" of a function doing host work
// keeps its clock stopped from the wait to its end: the wait is not
// charged, and a budget spent meanwhile (charged by a nested callback of
// another state) still fails the callback, as it does when script runs
// after the wait.
func TestBudgetStoppedThroughTailCalledHostWork(t *testing.T) {
	s := NewState(Options{Budget: 30 * time.Millisecond})
	defer s.Close()
	spend := time.Duration(0)
	s.Open(NewLibrary([]*Func{{Name: "host/slow", Ambients: Callback, Leaves: true, Fn: func(s *State) int {
		time.Sleep(60 * time.Millisecond)
		s.Spend(spend)
		return 0
	}}}))
	call := func(src string) (time.Duration, error) {
		p, err := Compile("t.lua", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return s.CallWithin(Callback, NoCap, s.Load(p), 0)
	}
	for _, src := range []string{"return host.slow()", "host.slow() return host.slow()", "host.slow()"} {
		used, err := call(src)
		if err != nil || used >= 30*time.Millisecond {
			t.Fatalf("%s: used %v, %v; want no error, the waits not charged", src, used, err)
		}
	}
	spend = time.Hour
	for _, src := range []string{"return host.slow()", "host.slow()"} {
		if _, err := call(src); !errors.Is(err, ErrBudget) {
			t.Fatalf("%s with the budget spent during the wait: %v, want ErrBudget", src, err)
		}
	}
}
