package luabind

import (
	"testing"
	"time"
)

// BenchmarkBudgetTailCycle is the budget's work for one callback that ends
// in "return f()" with f a host function: enter, suspend, resumeToEnd,
// exit, with a watchdog (as the engine runs it).
func BenchmarkBudgetTailCycle(b *testing.B) {
	wd := NewWatchdog(1 << 40)
	defer wd.Close()
	bg := newBudget(time.Second)
	bg.wd = wd
	b.ReportAllocs()
	for b.Loop() {
		bg.enter(NoCap)
		bg.suspend()
		bg.resumeToEnd()
		if _, _, err := bg.exit(); err != nil {
			b.Fatal(err)
		}
	}
	bg.close()
}
