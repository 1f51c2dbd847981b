package store

import (
	"context"
	"errors"
	"sync"
)

// Group commit. Every append of a SQLite store joins a queue. The first to
// find no commit running leads: it takes the whole queue, runs each append
// in order inside one transaction, commits once (one fsync of the WAL),
// and answers every member; meanwhile the next appends queue up, and when
// it is done it hands the lead to the first of them. An append refused by
// its checks (ErrStale, a known call id) writes nothing and does not
// disturb the others. When the shared transaction fails, each member is
// run again in a transaction of its own, so one bad append cannot fail
// another. Appends to one log keep their queue order, and each sees the
// ones before it (they run in one transaction, in order). An Append
// returns only after its transaction committed or rolled back: whatever
// it answers is what the file holds.

// appendReq is one Append waiting in the queue.
type appendReq struct {
	log      string
	expected int64
	entries  [][]byte
	call     *CallRecord

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
}

// maxGroup bounds the appends one transaction takes.
const maxGroup = 256

func (c *committer) append(ctx context.Context, s *SQLite, q *appendReq) (int64, error) {
	q.done = make(chan struct{})
	c.mu.Lock()
	c.queue = append(c.queue, q)
	if c.leading {
		c.mu.Unlock()
		<-q.done
		if !q.lead {
			return q.n, q.err
		}
		c.mu.Lock() // handed the lead: leading is still true
	}
	c.leading = true
	for {
		batch := c.queue[:min(len(c.queue), maxGroup)]
		c.queue = c.queue[len(batch):]
		c.mu.Unlock()
		s.commitGroup(context.WithoutCancel(ctx), batch)
		answered := false
		for _, m := range batch {
			if m == q {
				answered = true
			}
			if m != q {
				close(m.done)
			}
		}
		c.mu.Lock()
		if answered {
			break
		}
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		next.lead = true
		close(next.done)
	} else {
		c.leading = false
		c.queue = nil
	}
	c.mu.Unlock()
	return q.n, q.err
}

// commitGroup runs a batch of appends in one transaction.
func (s *SQLite) commitGroup(ctx context.Context, batch []*appendReq) {
	if len(batch) > 1 {
		if s.tryGroup(ctx, batch) {
			return
		}
	}
	for _, q := range batch { // alone, or after the shared transaction failed
		s.tryGroup(ctx, []*appendReq{q})
	}
}

// tryGroup runs batch in one transaction and reports whether it committed;
// a batch of one is always answered.
func (s *SQLite) tryGroup(ctx context.Context, batch []*appendReq) bool {
	fail := func(err error) bool {
		if len(batch) > 1 {
			return false
		}
		batch[0].n, batch[0].err = 0, err
		return true
	}
	// BEGIN IMMEDIATE: the write lock is taken before any length is read.
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(s.err("append to", err))
	}
	defer tx.Rollback()
	for _, q := range batch {
		q.n, q.err = s.appendTx(ctx, tx, q)
		var r *refusal
		if errors.As(q.err, &r) {
			q.err = r.err
		} else if q.err != nil {
			return fail(q.err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(s.err("append to", err))
	}
	return true
}
