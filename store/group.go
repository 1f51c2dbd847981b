package store

import (
	"context"
	"errors"
	"slices"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Group commit. Every append of a SQLite store joins a queue. The first to
// find no commit running leads: it takes the whole queue and runs the
// appends in order inside one transaction (all their call records in one
// statement and all their entries in another, see planned). While a flush
// of the WAL is under way the group could not be flushed before it ends
// anyway, so the leader keeps the transaction open and takes in every
// append that queues meanwhile (committer.more); it commits once no flush
// runs, and the flush starts at once. The commit itself writes the WAL
// without waiting for the disk (the writer runs with synchronous=NORMAL):
// as soon as it is done the leader hands the lead to the first of the
// queue, whose transaction runs while the leader makes the WAL durable
// (one fsync, see wal.go) and then answers every member. So the disk's
// flush, the slow part, is shared by every append of the group and
// overlaps the next group's work instead of holding the writer, and there
// is one transaction per flush, not one per burst of arrivals.
//
// An append refused by its checks (ErrStale, a known call id) writes
// nothing and does not disturb the others. When the shared transaction
// fails, each member is run again in a transaction of its own, so one bad
// append cannot fail another. Appends to one log keep their queue order,
// and each sees the ones before it (they run in one transaction, in
// order). An Append returns only after its transaction committed and the
// WAL holding it was flushed to disk, or after it rolled back: whatever it
// answers is what the file holds. The WAL is written in order, so the
// flush that makes one group durable also covers every group committed
// before it.

// appendReq is one Append waiting in the queue.
type appendReq struct {
	log      string
	expected int64
	entries  [][]byte
	call     *CallRecord
	lazy     bool // answered without waiting for the flush (AppendLazy)

	n    int64
	err  error
	lead bool          // set when handed the lead instead of an answer
	done chan struct{} // closed when answered or made the leader
}

// refusal marks an append that its checks refused: it wrote nothing, and
// the transaction it ran in is still good for the others.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }

// committer is the queue of one store.
type committer struct {
	mu      sync.Mutex
	queue   []*appendReq
	leading bool
	waiting bool          // the leader waits in more for arrivals or the flush's end
	wake    chan struct{} // wakes it (made by OpenSQLite; one token at most)
}

// maxGroup bounds the appends one transaction takes.
const maxGroup = 256

func (c *committer) append(ctx context.Context, s *SQLite, q *appendReq) (int64, error) {
	q.done = make(chan struct{})
	c.mu.Lock()
	c.queue = append(c.queue, q)
	if c.leading {
		if c.waiting {
			c.nudge()
		}
		c.mu.Unlock()
		<-q.done
		if !q.lead {
			return q.n, q.err
		}
		c.mu.Lock() // handed the lead: leading is still true
	}
	c.leading = true
	// q is the head of the queue: the leader either found it empty or was
	// handed the lead as its first member.
	batch := slices.Clip(c.queue[:min(len(c.queue), maxGroup)]) // the group grows into its own array, not the queue's
	c.queue = c.queue[len(batch):]
	c.mu.Unlock()

	s.wal.mu.Lock()
	seq := s.wal.committed.Load() // the commits this group may have seen
	group, wrote := s.commitGroup(context.WithoutCancel(ctx), batch, func(room int) []*appendReq { return c.more(&s.wal, room) })
	if wrote {
		seq = s.wal.committed.Add(1)
	}
	s.wal.mu.Unlock()

	c.mu.Lock()
	if len(c.queue) > 0 {
		next := c.queue[0]
		next.lead = true
		close(next.done)
	} else {
		c.leading = false
		c.queue = nil
	}
	c.mu.Unlock()

	if !allLazy(group) {
		if err := s.wal.syncThrough(seq); err != nil {
			for _, m := range group {
				m.n, m.err = 0, s.err("append to", err)
			}
		}
	}
	for _, m := range group {
		if m != q {
			close(m.done)
		}
	}
	return q.n, q.err
}

// more is called by the leader with its transaction open: while a flush
// of the WAL is under way (the group could not be flushed before it ends
// anyway) it waits for appends to join the transaction and returns those
// queued (at most room); it returns nil when none are queued and no flush
// runs: time to commit, and flush at once.
func (c *committer) more(w *walSync, room int) []*appendReq {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 && room > 0 {
			batch := slices.Clip(c.queue[:min(len(c.queue), room)])
			c.queue = c.queue[len(batch):]
			c.waiting = false
			c.mu.Unlock()
			return batch
		}
		if room <= 0 || !w.flushing.Load() {
			c.waiting = false
			c.mu.Unlock()
			return nil
		}
		c.waiting = true
		c.mu.Unlock()
		<-c.wake // an append queued, or a flush ended
	}
}

// nudge wakes the leader waiting in more, if it waits (c.mu held, or
// called at the end of a flush).
func (c *committer) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// allLazy reports whether no member of batch waits for the flush.
func allLazy(batch []*appendReq) bool {
	for _, m := range batch {
		if !m.lazy {
			return false
		}
	}
	return true
}

// commitGroup runs a batch of appends in one transaction, with the appends
// more gives it while the transaction is open (see tryGroup), and returns
// them all and whether any of them wrote.
func (s *SQLite) commitGroup(ctx context.Context, batch []*appendReq, more func(room int) []*appendReq) (group []*appendReq, wrote bool) {
	ok, group, wrote := s.tryGroup(ctx, batch, more)
	if ok {
		return group, wrote
	}
	wrote = false
	for _, q := range group { // after the shared transaction failed: alone
		_, _, w := s.tryGroup(ctx, []*appendReq{q}, nil)
		wrote = wrote || w
	}
	return group, wrote
}

// tryGroup runs batch in one transaction, then the appends more gives it
// (nil: none) until it gives none, and commits; it reports whether it
// committed, the appends it ran, and whether it wrote anything. A group of
// one is always answered.
func (s *SQLite) tryGroup(ctx context.Context, batch []*appendReq, more func(room int) []*appendReq) (ok bool, group []*appendReq, wrote bool) {
	group = batch
	fail := func(err error) (bool, []*appendReq, bool) {
		if len(group) > 1 {
			return false, group, false
		}
		group[0].n, group[0].err = 0, err
		return true, group, false
	}
	// BEGIN IMMEDIATE: the write lock is taken before any length is read.
	// The transaction is the writer connection's own (prepared BEGIN and
	// COMMIT), not a database/sql Tx, which makes a context and a goroutine
	// per transaction and parses BEGIN and COMMIT each time.
	if _, err := s.wBegin.ExecContext(ctx); err != nil {
		return fail(s.err("append to", err))
	}
	committed := false
	defer func() {
		if !committed {
			s.wRollback.ExecContext(ctx) // none may be open any more: no matter
		}
	}()
	h0, ok0 := s.shm.header()
	lengths := make(map[string]int64, len(batch))
	for {
		w, err := s.planned(ctx, batch, lengths, h0, ok0)
		if errors.Is(err, errKnownCall) && len(batch) == 1 {
			w, err = s.oneByOne(ctx, batch, lengths)
		}
		if err != nil {
			return fail(err)
		}
		wrote = wrote || w
		if more == nil {
			break
		}
		if batch = more(maxGroup - len(group)); batch == nil {
			break
		}
		group = append(group, batch...)
	}
	if _, err := s.wCommit.ExecContext(ctx); err != nil {
		s.cache.invalidate()
		return fail(s.err("append to", err))
	}
	committed = true
	h1, ok1 := s.shm.header()
	s.cache.committed(h0, ok0, h1, ok1, wrote, func() {
		for _, q := range group {
			if q.err == nil {
				s.cache.appendedLocked(q.log, q.n-int64(len(q.entries)), q.n, q.entries)
			}
		}
	})
	return true, group, wrote
}

// errKnownCall: an append of the batch names a call id already recorded.
var errKnownCall = errors.New("a call id is known")

// planned runs batch in the open write transaction in two statements: it
// plans the appends in order from the lengths of their logs (lengthTx),
// refusing the stale ones, then inserts the call records of the others in
// one statement and their entries in another (a statement per 1<<(sizes-1)
// rows). A call id already recorded (a rare retry: the engine looks for
// it before it runs a call) makes the call records' insert fail, and
// planned returns errKnownCall: a batch of one runs again in the same
// transaction append by append (oneByOne, which reads the call id first;
// its one-row insert wrote nothing, as SQLite backs out a statement that
// breaks a constraint), a larger batch in transactions of their own.
func (s *SQLite) planned(ctx context.Context, batch []*appendReq, lengths map[string]int64, h walHeader, hok bool) (wrote bool, err error) {
	var entries, calls []any
	for _, q := range batch {
		n, seen := lengths[q.log]
		if !seen {
			if n, err = s.lengthTx(ctx, q.log, h, hok); err != nil {
				return false, s.err("append to", err)
			}
		}
		q.n, q.err = n, nil
		if q.expected != Any && q.expected != n { // R5.5, after R5.6: the call id first
			r, err := s.knownCall(ctx, q)
			if err != nil {
				return false, err
			}
			if r == nil {
				r = &refusal{staleError(q.log, n, q.expected)}
			}
			q.err, lengths[q.log] = r.err, n
			continue
		}
		entries = entryRows(entries, q, n)
		q.n = n + int64(len(q.entries))
		if q.call != nil {
			calls = callRow(calls, q, q.n)
		}
		lengths[q.log] = q.n
		wrote = wrote || len(q.entries) > 0 || q.call != nil
	}
	if err := insertRows(ctx, s.wCalls[:], callColumns, calls); err != nil {
		if isConstraint(err) {
			return false, errKnownCall
		}
		return false, s.err("append to", err)
	}
	if err := insertRows(ctx, s.wEntries[:], entryColumns, entries); err != nil {
		return false, s.err("append to", err)
	}
	return wrote, nil
}

// oneByOne runs batch in the open write transaction, one append after the
// other (appendTx), keeping lengths (the logs' lengths in the transaction) current.
func (s *SQLite) oneByOne(ctx context.Context, batch []*appendReq, lengths map[string]int64) (wrote bool, err error) {
	for _, q := range batch {
		q.n, q.err = s.appendTx(ctx, q)
		var r *refusal
		if errors.As(q.err, &r) {
			q.err = r.err
		} else if q.err != nil {
			return false, q.err
		} else {
			wrote = true
		}
		lengths[q.log] = q.n
	}
	return wrote, nil
}

// lengthTx is the length of log inside a write transaction, whose header
// is h: the read cache's when it holds the log's tail at h (the write lock
// is held, so h is the latest commit), else SQLite's.
func (s *SQLite) lengthTx(ctx context.Context, log string, h walHeader, hok bool) (int64, error) {
	if hok {
		if n, hit := s.cache.length(h, log); hit {
			return n, nil
		}
	}
	var n int64
	err := s.wLength.QueryRowContext(ctx, log).Scan(&n)
	return n, err
}

// isConstraint reports whether err is SQLite's SQLITE_CONSTRAINT.
func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}
