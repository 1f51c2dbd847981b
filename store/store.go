// Package store keeps what attune must not lose: content-addressed blobs
// (program sources and configurations), small keyed records (pins, instance
// records, owner metadata), and append-only logs (owner action logs and
// session journals) with the call records that make method calls replayable.
//
// Three implementations share one contract, the Store interface, checked by
// the conformance suite in store/storetest (R5.10):
//
//   - Memory, for tests: nothing survives the process.
//   - SQLite, the embedded default: one file (for example .attune/state.db)
//     in WAL mode; every write flushes the WAL to disk before it returns,
//     so an Append is on disk when it returns; appends waiting together
//     share one commit and one flush (group commit), and the flush runs
//     outside the writer's lock, beside the next group's transaction.
//     Reads of what the store just wrote or read are served from memory
//     while SQLite's WAL-index header shows that nothing committed since
//     (readcache.go).
//   - Postgres, a server store several hosts can share: tables named
//     attune_*, appends to one log serialized by a transaction-scoped
//     advisory lock.
//
// Open picks one by kind ("memory", "sqlite", "postgres"); config.ParseStore
// reads the engine.store setting into a kind and a target.
//
// Logs are the heart of it. A log is a sequence of entries numbered from 1;
// its length is its revision. Append is optimistic: it names the length the
// caller observed and fails with ErrStale, appending nothing, when another
// append got there first (R5.5). A call record stored with the append makes
// a retried call recognisable: the same call id with the same input gets the
// stored record back (a *CallExistsError) and appends nothing, another input
// gets ErrCallConflict (R5.6). Truncate rolls a session log back together
// with its call records (R5.9).
//
// Every Store is safe for concurrent use by many goroutines, and the SQLite
// and PostgreSQL stores also by many processes sharing one file or database.
// An Append either happened durably when it returns nil, or did not happen at
// all. Byte slices are copied on the way in and on the way out: a store never
// keeps or hands out a slice the caller can change, and what it returns is
// never nil (an empty value comes back as an empty slice).
//
// Errors are tested with errors.Is against ErrNotFound, ErrStale,
// ErrCallConflict, ErrCallExists and ErrOutcomeUnknown; their messages start with "store: ".
package store

import (
	"context"
	"errors"
)

// Errors callers test with errors.Is.
var (
	// ErrNotFound: no blob, record or call record under that key.
	ErrNotFound = errors.New("not found")
	// ErrStale: the log's length was not the expected one; nothing was appended.
	ErrStale = errors.New("stale revision")
	// ErrCallConflict: the call id is already recorded with another input; nothing was appended.
	ErrCallConflict = errors.New("call id reused with a different input")
	// ErrCallExists: the call id is already recorded with the same input; nothing was appended.
	// The error is a *CallExistsError carrying the stored record.
	ErrCallExists = errors.New("call id already recorded")
	// ErrOutcomeUnknown: the write was sent but its commit was never
	// confirmed (the connection was lost during COMMIT, the server
	// restarted): it may or may not have happened. Retrying with the same
	// call id resolves it exactly once (R5.6): the stored record comes back
	// (ErrCallExists) if it happened, the write is made if it did not.
	// Never retry it with a fresh call id.
	ErrOutcomeUnknown = errors.New("outcome unknown: the commit may or may not have happened; retry with the same call id")
)

// Any, as the expected length of an Append, skips the length check.
// Any other negative expected length is an error.
const Any int64 = -1

// Entry is one element of a log. Seq numbers start at 1 and have no gaps.
type Entry struct {
	Seq  int64
	Data []byte
}

// CallRecord is the stored outcome of one method call, keyed by (log, ID).
// Revision is the log length the call observed (a query) or produced (a
// command that appended).
type CallRecord struct {
	ID       string
	Input    []byte
	Result   []byte
	Revision int64
}

// CallExistsError is returned (wrapping ErrCallExists) when an Append names
// a call id already recorded for that log with the same input. Record is the
// stored record, Result and Revision included, so the caller can answer the
// retried call without reading the log again (R5.6).
type CallExistsError struct{ Record CallRecord }

func (e *CallExistsError) Error() string { return "call id " + e.Record.ID + " already recorded" }
func (e *CallExistsError) Unwrap() error { return ErrCallExists }

// Lazy is implemented by stores that can append without waiting for the
// disk: what a journal written behind its caller needs, durable only at
// the next boundary. AppendLazy is Append, but what it appended may be lost
// by a power loss (not by the end of the process) until a later Sync, or
// any later durable write of the store, returns; a log never keeps a lazy
// append without the appends before it. Sync makes every append made so
// far durable.
type Lazy interface {
	AppendLazy(ctx context.Context, log string, expected int64, entries [][]byte, call *CallRecord) (int64, error)
	Sync(ctx context.Context) error
}

// Gater is implemented by stores that several processes share (Postgres):
// Gate waits until no other caller, in this process or another, holds the
// gate of log, and returns the function that lets the next one in. A gate
// is advice between writers, not a lock on the log: appends of callers
// that hold no gate still go through Append's checks. A writer whose
// optimistic append went stale takes the gate before it tries again, so
// writers that keep meeting at one revision queue instead of retrying in
// vain. The gate is let go when its connection is lost.
type Gater interface {
	Gate(ctx context.Context, log string) (release func(), err error)
}

// Store is the persistence contract. Log names and record keys are opaque
// strings chosen by the engine (for example "owner/project/default/tasks").
type Store interface {
	// PutBlob stores data under its sha256 (lower-case hex) and returns that hash.
	PutBlob(ctx context.Context, data []byte) (string, error)
	// GetBlob returns the blob with that hash, or ErrNotFound.
	GetBlob(ctx context.Context, sha string) ([]byte, error)
	// DeleteBlob removes a blob; removing a missing blob is not an error.
	DeleteBlob(ctx context.Context, sha string) error

	// GetRecord returns the record (kind, key), or ErrNotFound.
	GetRecord(ctx context.Context, kind, key string) ([]byte, error)
	// PutRecord creates or replaces a record.
	PutRecord(ctx context.Context, kind, key string, value []byte) error
	// PutRecordIfAbsent creates the record unless one exists; it returns the
	// record now stored and whether this call created it. Atomic across hosts.
	PutRecordIfAbsent(ctx context.Context, kind, key string, value []byte) (stored []byte, created bool, err error)
	// DeleteRecord removes a record; removing a missing one is not an error.
	DeleteRecord(ctx context.Context, kind, key string) error
	// ListRecords returns the keys of one kind that start with prefix, sorted.
	ListRecords(ctx context.Context, kind, prefix string) ([]string, error)

	// Append adds entries to the end of a log, atomically and durably, when
	// the log's length is expected (or expected is Any); otherwise it returns
	// ErrStale and appends nothing. When call is not nil its record is stored
	// in the same transaction, with Revision set to the new length; if the
	// call id is already recorded for this log, nothing is appended and the
	// error is ErrCallConflict (another input) or a *CallExistsError (the
	// same input). Appending no entries with a call record stores the record
	// (with the current length as Revision) under the same checks.
	// It returns the log's new length.
	//
	// The call id is checked before the length, so a retried call is
	// recognised even when the log has moved on since (R5.6). The Revision of
	// call is ignored and *call is not changed. A call record needs an ID.
	Append(ctx context.Context, log string, expected int64, entries [][]byte, call *CallRecord) (int64, error)
	// Read returns the entries with Seq > after, in order (at most limit;
	// limit <= 0 means all). A log never written reads as no entries.
	Read(ctx context.Context, log string, after int64, limit int) ([]Entry, error)
	// Length returns the number of entries in a log (0 for a log never written).
	Length(ctx context.Context, log string) (int64, error)
	// Truncate keeps the first n entries of a log and drops the rest, with
	// the call records whose Revision is greater than n. Used by session
	// rollback; never called on shared owners. Truncating to n >= the length
	// drops no entry; n < 0 is an error.
	Truncate(ctx context.Context, log string, n int64) error
	// DeleteLog removes a log and its call records.
	DeleteLog(ctx context.Context, log string) error

	// GetCall returns the call record (log, id), or ErrNotFound.
	GetCall(ctx context.Context, log, id string) (CallRecord, error)

	// Close releases the store. A closed store is not used again.
	Close() error
}
