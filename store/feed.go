package store

import (
	"context"
	"strings"
	"sync"
	"time"
)

// FeedPrefix names the logs a Watcher announces: the owners' logs. The
// journals of sessions are not announced (a session is served by one
// instance at a time).
const FeedPrefix = "owner/"

// Watcher is implemented by stores that announce appends, so that a
// subscriber sees the actions other writers append (R5.8 across hosts).
//
// Watch starts a feed that runs until ctx ends and returns at once. The
// feed calls fn(log, n) after an append brought a log whose name starts
// with FeedPrefix to length n — an append made through this Store, or,
// for a store several processes share, by any of them — and fn("", 0)
// when appends may have gone unannounced (the feed's connection was lost
// and is back, or some time passed with nothing heard), so that the
// watcher reads again every log it follows from the last position it
// saw. Announcements are hints, not data: a watcher reads the log itself
// and tells entries apart by their Seq, so one announced twice, late or
// out of order does no harm. Calls to fn come from one goroutine, one at
// a time; fn should return quickly.
//
// Memory announces its own appends at once. SQLite, whose file other
// processes may write, announces on a short poll (fn("", 0) about every
// 200 ms while watched). Postgres listens on a connection of its own
// (LISTEN/NOTIFY, channel attune_log), reconnects with backoff when it
// is lost, and asks for a catch-up after every reconnect and every 5 s
// of silence.
type Watcher interface {
	Watch(ctx context.Context, fn func(log string, n int64)) error
}

// localFeed fans a store's own appends out to its watchers. Each watcher
// has a goroutine of its own: publish never waits for one.
type localFeed struct {
	mu       sync.Mutex
	watchers map[*feedWatcher]struct{}
}

type feedWatcher struct {
	fn      func(string, int64)
	mu      sync.Mutex
	pending map[string]int64 // log -> the greatest length announced
	wake    chan struct{}
}

// watch adds a watcher until ctx ends; every interval > 0 it also asks
// for a catch-up (fn("", 0)).
func (f *localFeed) watch(ctx context.Context, fn func(string, int64), interval time.Duration) {
	w := &feedWatcher{fn: fn, pending: map[string]int64{}, wake: make(chan struct{}, 1)}
	f.mu.Lock()
	if f.watchers == nil {
		f.watchers = map[*feedWatcher]struct{}{}
	}
	f.watchers[w] = struct{}{}
	f.mu.Unlock()
	go func() {
		defer func() {
			f.mu.Lock()
			delete(f.watchers, w)
			f.mu.Unlock()
		}()
		var tick <-chan time.Time
		if interval > 0 {
			t := time.NewTicker(interval)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick:
				fn("", 0)
			case <-w.wake:
				w.mu.Lock()
				p := w.pending
				w.pending = map[string]int64{}
				w.mu.Unlock()
				for log, n := range p {
					if ctx.Err() != nil {
						return
					}
					fn(log, n)
				}
			}
		}
	}()
}

// publish announces that log reached length n.
func (f *localFeed) publish(log string, n int64) {
	if !strings.HasPrefix(log, FeedPrefix) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.watchers {
		w.mu.Lock()
		if n > w.pending[log] {
			w.pending[log] = n
		}
		w.mu.Unlock()
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}
