package mcpproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// One timer per upstream times out every pending request at its own
// deadline: a later request with an earlier deadline (call_timeout after an
// initialize under a longer start_timeout) sets it earlier, a request
// answered in time is not timed out, and each request timed out is
// cancelled at the upstream with notifications/cancelled.
func TestUpstreamDeadlines(t *testing.T) {
	toUpR, toUpW := io.Pipe()
	fromUpR, fromUpW := io.Pipe()
	u := &upstream{
		name: "u", timeout: 200 * time.Millisecond, start: 600 * time.Millisecond,
		conn: newConn(fromUpR, toUpW, 1<<20),
		done: make(chan struct{}),
		log:  func(string, ...any) {},
	}
	u.onRequest = func(*upstream, *request) {}
	u.onNotify = func(*upstream, *request) {}
	go u.run()
	var mu sync.Mutex
	var sent []string
	go func() { // the upstream: answers request 3 only, records the rest
		sc := bufio.NewScanner(toUpR)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			sent = append(sent, line)
			mu.Unlock()
			if strings.Contains(line, `"id":3,`) {
				_, _ = io.WriteString(fromUpW, `{"jsonrpc":"2.0","id":3,"result":{"ok":true}}`+"\n")
			}
		}
	}()
	type got struct {
		err  error
		took time.Duration
	}
	start := time.Now()
	call := func(method string, out chan<- got) {
		_, err := u.call(context.Background(), method, []byte(`{}`))
		out <- got{err, time.Since(start)}
	}
	initDone, callDone, answered := make(chan got, 1), make(chan got, 1), make(chan got, 1)
	go call("initialize", initDone) // id 1, start_timeout 600ms
	time.Sleep(20 * time.Millisecond)
	go call("tools/call", callDone) // id 2, call_timeout 200ms: sets the timer earlier
	time.Sleep(20 * time.Millisecond)
	go call("ping", answered) // id 3, answered at once
	for _, c := range []struct {
		name     string
		ch       chan got
		min, max time.Duration
		timeout  bool
	}{
		// answered, not timed out (its error is nil); a loaded machine
		// may take a while to schedule the goroutines that answer it
		{"ping", answered, 0, time.Second, false},
		{"tools/call", callDone, 200 * time.Millisecond, 500 * time.Millisecond, true},
		{"initialize", initDone, 600 * time.Millisecond, 1200 * time.Millisecond, true},
	} {
		select {
		case g := <-c.ch:
			if errors.Is(g.err, ErrTimeout) != c.timeout || (!c.timeout && g.err != nil) {
				t.Errorf("%s: %v, want timeout %v", c.name, g.err, c.timeout)
			}
			if g.took < c.min || g.took > c.max {
				t.Errorf("%s ended after %s, want %s to %s", c.name, g.took, c.min, c.max)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%s never ended", c.name)
		}
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(sent, "\n")
	for _, want := range []string{`"requestId":1`, `"requestId":2`} {
		if !strings.Contains(all, want) {
			t.Errorf("no notifications/cancelled with %s sent; the upstream got:\n%s", want, all)
		}
	}
	if strings.Contains(all, `"requestId":3`) {
		t.Errorf("the answered request was cancelled:\n%s", all)
	}
}
