package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// R4.9: goroutines sharing one instance take turns in each registry: no
// two run one Lua state at once (the race detector and the count say so),
// every call gets through, and waiters are woken rather than left behind.
func TestLockSharedInstanceStress(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
n = 0
guard.tool("fs/*", function(c, invoke) n = n + 1 return invoke() end)
define.tool("g/count", function(ctx, args) return n end, {effect = {"read"}})`})
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "x", "main")
	ctx := context.Background()
	const goroutines, calls = 16, 300
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for k := range calls {
				if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: fmt.Sprint(g, "/", k)}); out.Status != StatusOK {
					errs <- fmt.Errorf("goroutine %d call %d: %+v", g, k, out)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if out := i.Tool(ctx, ToolCall{Path: "g/count"}); out.Result != float64(goroutines*calls) {
		t.Fatalf("the guard counted %v calls, want %d", out.Result, goroutines*calls)
	}
}

// R3.2, R4.9: hooks of two programs that call each other's tools, run at
// every round end while other goroutines keep both registries busy with
// tool calls: the waits that close a cycle borrow, and nothing deadlocks.
func TestLockBorrowStress(t *testing.T) {
	prog := func(me, other string) string {
		return fmt.Sprintf(`
define.tool("%[1]s/ping", function(ctx, args) return "%[1]s pong" end, {effect = {"read"}})
guard.tool("fs/%[1]s", function(c, invoke) return invoke() end)
hook.round("end", function(b)
  local out = call.tool("%[2]s/ping", {})
  notify(tostring(out.result))
end)`, me, other)
	}
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p1\", \"p2\"]\nceiling = [\"read\"]\n",
		map[string]string{"p1.lua": prog("p1", "p2"), "p2.lua": prog("p2", "p1")})
	e.RegisterTool(echoTool("fs/p1", "read"))
	e.RegisterTool(echoTool("fs/p2", "read"))
	i := start(t, e, "x", "main")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			path := []string{"fs/p1", "fs/p2"}[g%2]
			for {
				select {
				case <-stop:
					return
				default:
				}
				if out := i.Tool(ctx, ToolCall{Path: path}); out.Status != StatusOK {
					t.Errorf("%s: %+v", path, out)
					return
				}
			}
		})
	}
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	for round := range 50 {
		if _, err := i.BeginRound(ctx); err != nil {
			t.Fatal(err)
		}
		r, err := i.EndRound(ctx, RoundEnd{})
		if err != nil || r.Status != StatusOK {
			t.Fatalf("round %d: %+v %v", round, r, err)
		}
		if got := texts(r.Notes); len(got) != 2 || got[0] != "ambient:p2 pong" || got[1] != "ambient:p1 pong" {
			t.Fatalf("round %d: notes %v", round, got)
		}
	}
	close(stop)
	wg.Wait()
}

// A thread waiting for a registry leaves when its context ends; the
// registry is not lost: the next call after the holder finishes gets it.
func TestLockWaitCancelled(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n", map[string]string{"g.lua": `
guard.tool("fs/*", function(c, invoke) return invoke() end)`})
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	e.RegisterTool(HostTool{Path: "fs/slow", Effects: []string{"read"}, Core: func(context.Context, CoreCall) (any, error) {
		entered <- struct{}{}
		<-release
		return "slow", nil
	}})
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "x", "main")
	done := make(chan Outcome)
	go func() { done <- i.Tool(context.Background(), ToolCall{Path: "fs/slow"}) }()
	<-entered // the slow call holds the registry inside its guard's invoke
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "x"})
	cancel()
	if out.Status != StatusFailed || !(errors.Is(out.Err, context.DeadlineExceeded) || strings.Contains(out.Error, "deadline")) {
		t.Fatalf("a call whose context ended while waiting: %+v", out)
	}
	waiting := make(chan Outcome)
	go func() { waiting <- i.Tool(context.Background(), ToolCall{Path: "fs/read", Args: "y"}) }()
	time.Sleep(5 * time.Millisecond) // let it start waiting
	close(release)
	if out := <-done; out.Status != StatusOK {
		t.Fatalf("the slow call: %+v", out)
	}
	select {
	case out := <-waiting:
		if out.Status != StatusOK || out.Result != "y" {
			t.Fatalf("the waiting call: %+v", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting call was never woken")
	}
}

// R4.9: a thread that keeps releasing and taking a registry without ever
// parking (one processor, so the waiter cannot run to claim its turn)
// still hands the registry to a waiter that has waited longer than
// handoffAfter: the releasing thread sees the wait and hands over, instead
// of the waiter waiting for the scheduler to preempt the holder.
func TestLockHandsOverToALongWaiter(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\n", map[string]string{"g.lua": `x = 1`})
	i := start(t, e, "x", "main")
	r := i.cur.Load().regs[0]
	ctx := context.Background()
	d := &decl{}
	holder := newFrame(nil, ctx, i, r, d, "holder")
	if owned, err := r.lock(holder); !owned || err != nil {
		t.Fatal(owned, err)
	}
	var got atomic.Bool
	go func() {
		w := newFrame(nil, ctx, i, r, d, "waiter")
		owned, err := r.lock(w)
		got.Store(true)
		if err == nil {
			r.unlock(owned)
		}
	}()
	// Let the waiter start waiting: the holder parks once, in a sleep.
	for r.nwait.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	const rounds = 500 // 10 µs each: far below the scheduler's 10 ms slice
	k := 0
	for ; k < rounds && !got.Load(); k++ {
		r.unlock(true)
		owned, err := r.lock(holder)
		if err != nil {
			t.Fatal(err)
		}
		for t0 := time.Now(); time.Since(t0) < 10*time.Microsecond; { // busy, never parks
		}
		if !owned {
			t.Fatal("the holder lost track of the registry")
		}
	}
	r.unlock(true)
	if k == rounds {
		t.Fatalf("the waiter waited through %d releases (%v of handoffAfter %v)", rounds, rounds*10*time.Microsecond, handoffAfter)
	}
}

// R4.9: unlocks that find a woken waiter pending wake no one else, yet a
// released registry is never left with every waiter asleep: goroutines
// that take it in bursts, pause and stop at different times all get it,
// each wait well within its deadline (a waiter left asleep would wait for
// the whole of it).
func TestLockWokenWaiterNeverStrands(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\n", map[string]string{"g.lua": `x = 1`})
	i := start(t, e, "x", "main")
	r := i.cur.Load().regs[0]
	d := &decl{}
	var wg sync.WaitGroup
	var held atomic.Int32
	for g := range 8 {
		wg.Go(func() {
			for k := range 300 + 100*g {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				fr := newFrame(nil, ctx, i, r, d, fmt.Sprint("g", g, "/", k))
				owned, err := r.lock(fr)
				if err != nil || !owned {
					t.Errorf("goroutine %d call %d: owned %v, %v", g, k, owned, err)
					cancel()
					return
				}
				if held.Add(1) != 1 {
					t.Error("two threads hold the registry")
				}
				if k%7 == 0 {
					runtime.Gosched()
				}
				held.Add(-1)
				r.unlock(owned)
				cancel()
				if k%50 == 0 {
					time.Sleep(time.Millisecond) // a pause: the others' wake-ups must not wait for this one
				}
			}
		})
	}
	wg.Wait()
}
