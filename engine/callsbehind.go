package engine

import (
	"sync"

	"github.com/attune-dev/attune/store"
)

// Query call records outside a turn are kept in memory, never written
// (R5.4: a query appends nothing): a query answers as soon as its handler
// returned, and its call id is recognised while the engine runs (R5.6),
// for the last maxQueryRecords queries. After a restart, or past that
// bound, a query retried under its call id is answered from a fresh fold.
// Queries inside a turn are recorded durably, as the journal that names
// them is (replay needs the record).

type callKey struct{ log, id string }

type queryRecords struct {
	mu    sync.Mutex
	recs  map[callKey]store.CallRecord
	order []callKey // a ring, oldest at next once full
	next  int
}

// maxQueryRecords bounds the query records kept.
const maxQueryRecords = 1 << 14

func newQueryRecords() *queryRecords {
	return &queryRecords{recs: map[callKey]store.CallRecord{}}
}

// get returns a query's record.
func (c *queryRecords) get(log, id string) (store.CallRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, ok := c.recs[callKey{log, id}]
	return rec, ok
}

// add keeps a query's record. A record already kept under that call id
// wins, as the store's would (R5.6): the error is then a
// *store.CallExistsError or store.ErrCallConflict.
func (c *queryRecords) add(log string, rec store.CallRecord) error {
	k := callKey{log, rec.ID}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, dup := c.recs[k]; dup {
		if string(old.Input) == string(rec.Input) {
			return &store.CallExistsError{Record: old}
		}
		return store.ErrCallConflict
	}
	c.recs[k] = rec
	if len(c.order) < maxQueryRecords {
		c.order = append(c.order, k)
		return nil
	}
	delete(c.recs, c.order[c.next])
	c.order[c.next] = k
	c.next = (c.next + 1) % maxQueryRecords
	return nil
}
