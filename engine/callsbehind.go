package engine

import (
	"context"
	"sync"

	"attune/store"
)

// Query call records are written behind the call (R5.4): a query outside a
// turn answers as soon as its handler returned, and its call record reaches
// the store in the background, batched with the records of other queries
// (on SQLite they share one commit). Until it is stored the record is
// served from memory, so a call id is recognised at once (R5.6). A crash can
// lose the records of the last queries; such a query retried after a
// restart is answered from a fresh fold. Queries inside a turn are recorded
// durably, as the journal that names them is (replay needs the record).

type callKey struct{ log, id string }

type callsBehind struct {
	st       store.Store
	mu       sync.Mutex
	pending  map[callKey]store.CallRecord // not stored yet, or being stored
	queue    []callKey                    // pending, in order, not taken by a write yet
	draining bool
	idle     *sync.Cond // signalled when a drain ends
}

// maxCallsBehind bounds the records waiting; past it a query waits for its
// own record to be stored.
const maxCallsBehind = 4096

// callBatch is how many records one background round stores at once.
const callBatch = 64

func newCallsBehind(st store.Store) *callsBehind {
	c := &callsBehind{st: st, pending: map[callKey]store.CallRecord{}}
	c.idle = sync.NewCond(&c.mu)
	return c
}

// get returns a record not stored yet.
func (c *callsBehind) get(log, id string) (store.CallRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, ok := c.pending[callKey{log, id}]
	return rec, ok
}

// add records a query's result behind the call. A record already pending
// under that call id wins, as the store's would (R5.6): the error is then a
// *store.CallExistsError or store.ErrCallConflict. ok is false when the
// caller must store the record itself (too many are waiting).
func (c *callsBehind) add(log string, rec store.CallRecord) (ok bool, err error) {
	k := callKey{log, rec.ID}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, dup := c.pending[k]; dup {
		if string(old.Input) == string(rec.Input) {
			return true, &store.CallExistsError{Record: old}
		}
		return true, store.ErrCallConflict
	}
	if len(c.pending) >= maxCallsBehind {
		return false, nil
	}
	c.pending[k] = rec
	c.queue = append(c.queue, k)
	if !c.draining {
		c.draining = true
		go c.drain()
	}
	return true, nil
}

// drain stores pending records, a batch at a time, each batch's appends
// made at once so that the store can commit them together.
func (c *callsBehind) drain() {
	ctx := context.Background()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.draining = false
			c.idle.Broadcast()
			c.mu.Unlock()
			return
		}
		batch := c.queue[:min(len(c.queue), callBatch)]
		c.queue = c.queue[len(batch):]
		recs := make([]store.CallRecord, len(batch))
		for n, k := range batch {
			recs[n] = c.pending[k]
		}
		c.mu.Unlock()
		var wg sync.WaitGroup
		for n, k := range batch {
			wg.Go(func() {
				rec := recs[n]
				// Errors have nowhere to go: a record the store refuses (the
				// call id stored meanwhile by another host) or cannot take
				// is dropped, and the call id is then answered from the store.
				_, _ = c.st.Append(ctx, k.log, store.Any, nil, &rec)
			})
		}
		wg.Wait()
		c.mu.Lock()
		for _, k := range batch {
			delete(c.pending, k)
		}
		c.mu.Unlock()
	}
}

// flush waits until every pending record is stored.
func (c *callsBehind) flush() {
	c.mu.Lock()
	for c.draining {
		c.idle.Wait()
	}
	c.mu.Unlock()
}
