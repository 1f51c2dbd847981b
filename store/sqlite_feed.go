package store

import (
	"context"
	"time"
)

var _ Watcher = (*SQLite)(nil)

// sqlitePoll is how often a watched SQLite store asks its watcher to read
// again: other processes sharing the file announce nothing to this one.
const sqlitePoll = 200 * time.Millisecond

// Watch implements Watcher by polling: every sqlitePoll the watcher is
// asked to read its logs again (fn("", 0)); a read of a log nothing
// appended to is served from memory (readcache.go).
func (s *SQLite) Watch(ctx context.Context, fn func(log string, n int64)) error {
	var f localFeed
	f.watch(ctx, fn, sqlitePoll)
	return nil
}
