package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// Durability of SQLite writes. The writer connection runs with
// synchronous=NORMAL: a commit writes its frames to the WAL and returns
// without waiting for the disk (SQLite still syncs around checkpoints).
// Every write of the store then flushes the WAL file itself, outside the
// writer's lock, before it returns: the same flush synchronous=FULL makes
// inside the commit, so what returned is on disk as before (it survives
// kill -9 of the process and power loss), while the writer serves the next
// transaction during the flush.
//
// The WAL is written in order, so a flush that started after a commit
// covers it and every commit before it. Each write transaction takes the
// next number of a commit counter; a write returns once a flush that
// started after its commit has finished (synced >= its number). One flush
// runs at a time: a write that finds one running waits for it, and the
// next flush, started as soon as it ends, covers every commit made
// meanwhile, so under load one fsync serves every writer that committed
// during the previous one. An answer that reads state (a stale length, a
// known call id, a record already there) also waits for the commits it
// may have seen.
type walSync struct {
	mu        sync.Mutex // held across a write transaction and its number
	committed atomic.Int64
	synced    atomic.Int64

	smu      sync.Mutex  // guards flushing's changes; done waits on it
	flushing atomic.Bool // a flush is under way
	idle     func()      // called when a flush ends
	done     *sync.Cond  // broadcast when a flush ends

	flushes atomic.Int64 // fdatasyncs made, for the tests

	fmu  sync.Mutex // guards f
	f    *os.File   // the WAL, opened on the first flush
	path string     // the database file; the WAL is path + "-wal"
}

// syncThrough makes every commit numbered up to seq durable.
func (w *walSync) syncThrough(seq int64) error {
	if w.synced.Load() >= seq {
		return nil
	}
	w.smu.Lock()
	defer w.smu.Unlock()
	if w.done == nil {
		w.done = sync.NewCond(&w.smu)
	}
	for w.synced.Load() < seq {
		if w.flushing.Load() {
			w.done.Wait()
			continue
		}
		// Every commit numbered up to target has finished: a flush
		// started now covers them all.
		target := w.committed.Load()
		w.flushing.Store(true)
		w.smu.Unlock()
		err := w.flush()
		w.smu.Lock()
		w.flushing.Store(false)
		if w.idle != nil {
			w.idle()
		}
		if err == nil && target > w.synced.Load() {
			w.synced.Store(target)
		}
		w.done.Broadcast()
		if err != nil {
			return err
		}
	}
	return nil
}

// flush fsyncs the WAL file (the database file when there is no WAL).
func (w *walSync) flush() error {
	f, held, err := w.file()
	if err != nil {
		return err
	}
	if !held {
		defer f.Close()
	}
	w.flushes.Add(1)
	return syncData(f)
}

// file returns the open WAL, opening it again when the file on disk is no
// longer the one held (the store's connections never remove it, see
// sqliteConnector, but another program's last connection may). Its
// folder is not flushed here: SQLite flushes the folder of a WAL it
// opened for creating at that connection's first sync of it, which comes
// with the WAL header every new or restarted WAL gets before its first
// frame, inside that first commit. held is false for a file the caller
// closes.
func (w *walSync) file() (f *os.File, held bool, err error) {
	w.fmu.Lock()
	defer w.fmu.Unlock()
	// The common case in one system call: the WAL held still has a name
	// (SQLite never renames a WAL, it only removes it), so it is the one
	// the name names.
	if w.f != nil {
		if cur, err := w.f.Stat(); err == nil && linked(cur) {
			return w.f, true, nil
		}
	}
	name := w.path + "-wal"
	info, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		// No WAL: everything was checkpointed into the database file.
		f, err := os.OpenFile(w.path, os.O_RDWR, 0)
		return f, false, err
	}
	if err != nil {
		return nil, false, err
	}
	if w.f != nil {
		if cur, err := w.f.Stat(); err == nil && os.SameFile(cur, info) {
			return w.f, true, nil
		}
		w.f.Close() // a flush under way keeps its own reference
		w.f = nil
	}
	f, err = os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, false, err
	}
	w.f = f
	return f, true, nil
}

func (w *walSync) close() error {
	w.fmu.Lock()
	defer w.fmu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// syncDir flushes a folder's entries (where the platform can).
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeTx runs fn in one write transaction of the store (BEGIN IMMEDIATE:
// the write lock is held from the start) and commits it, moving the read
// cache over the commit (readcache.go): fn reports whether it changed
// anything and what the cache takes from it. It returns once what it
// committed, and what it read, is durable.
func (s *SQLite) writeTx(ctx context.Context, fn func(tx *sql.Tx) (wrote bool, apply func(), err error)) error {
	s.wal.mu.Lock()
	err := s.commitTx(ctx, fn)
	seq := s.wal.committed.Add(1)
	s.wal.mu.Unlock()
	if serr := s.wal.syncThrough(seq); serr != nil && err == nil {
		err = serr
	}
	return err
}

// commitTx runs fn in a transaction and commits it; s.wal.mu is held.
func (s *SQLite) commitTx(ctx context.Context, fn func(tx *sql.Tx) (wrote bool, apply func(), err error)) error {
	tx, err := s.wc.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	h0, ok0 := s.shm.header()
	wrote, apply, err := fn(tx)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		s.cache.invalidate()
		return err
	}
	h1, ok1 := s.shm.header()
	s.cache.committed(h0, ok0, h1, ok1, wrote, apply)
	return nil
}

// wroteRows is the report of a one-statement write for writeTx: whether
// it changed a row, and apply when it did.
func wroteRows(res sql.Result, err error, apply func()) (bool, func(), error) {
	if err != nil {
		return false, nil, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, nil, err
	}
	return n > 0, apply, nil
}
