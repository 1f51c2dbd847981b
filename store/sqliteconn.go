package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteConnector opens the store's connections: each one, once open, is
// told not to checkpoint when it closes (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE).
//
// SQLite's last connection to a WAL database checkpoints the WAL into the
// database file when it closes, syncing both, and then deletes the -wal and
// -shm files; the next process creates them again and syncs the folder.
// Under `attune hook`, where every event is a process, that was six of the
// eight fsyncs an event cost. With this setting nothing is copied, synced or
// deleted at close: the WAL and its index stay for the next process, and
// the WAL is copied into the database file only when it reaches its bound
// (wal_autocheckpoint, sqliteCheckpointFrames), by the commit that crosses
// it, as while the store is open.
type sqliteConnector struct {
	dsn string
	drv *sqlite.Driver
}

func (c sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	if err := noCheckpointOnClose(conn); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func (c sqliteConnector) Driver() driver.Driver { return c.drv }

// noCheckpointOnClose sets SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE on a
// modernc.org/sqlite connection. The driver has no method for it, so the
// connection's handle is read from the driver's connection (its fields db,
// the sqlite3 pointer, and tls, the C thread state of the connection); a
// driver whose connection lacks them is refused with an error, and
// TestSQLiteOpenSyncs fails, before any store depends on it.
func noCheckpointOnClose(conn driver.Conn) error {
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("store: the SQLite driver's connection is a %T, not the struct this store knows", conn)
	}
	db, tls := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || !tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() {
		return errors.New("store: the SQLite driver's connection has no db and tls fields: this store cannot turn off the checkpoint at close")
	}
	handle := uintptr(db.Uint())
	t := (*libc.TLS)(tls.UnsafePointer())
	// sqlite3_db_config(db, op, int onoff, int *pRes): two arguments of
	// 8 bytes each (libc.VaList's slot on every target).
	const vaSlot = 8
	va := libc.Xmalloc(t, 2*vaSlot)
	if va == 0 {
		return errors.New("store: out of memory setting up a SQLite connection")
	}
	defer libc.Xfree(t, va)
	if rc := sqlite3.Xsqlite3_db_config(t, handle, sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, libc.VaList(va, int32(1), uintptr(0))); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("store: sqlite3_db_config(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE) returned %d", rc)
	}
	return nil
}

// preparer is a *sql.DB or a *sql.Conn.
type preparer interface {
	PrepareContext(context.Context, string) (*sql.Stmt, error)
}

// lazyStmt is a statement prepared at its first use: a process that opens
// the store for one hook event prepares (parses) only what that event runs.
// A failed prepare is tried again at the next use.
type lazyStmt struct {
	on    preparer
	query string
	mu    sync.Mutex
	stmt  atomic.Pointer[sql.Stmt]
}

func (l *lazyStmt) init(on preparer, query string) { l.on, l.query = on, query }

func (l *lazyStmt) get(ctx context.Context) (*sql.Stmt, error) {
	if st := l.stmt.Load(); st != nil {
		return st, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st := l.stmt.Load(); st != nil {
		return st, nil
	}
	st, err := l.on.PrepareContext(ctx, l.query)
	if err != nil {
		return nil, err
	}
	l.stmt.Store(st)
	return st, nil
}

func (l *lazyStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	st, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (l *lazyStmt) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	st, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext is sql.Stmt's, with the prepare's error kept for Scan.
func (l *lazyStmt) QueryRowContext(ctx context.Context, args ...any) lazyRow {
	st, err := l.get(ctx)
	if err != nil {
		return lazyRow{err: err}
	}
	return lazyRow{row: st.QueryRowContext(ctx, args...)}
}

// close closes the statement if it was prepared.
func (l *lazyStmt) close() error {
	if st := l.stmt.Swap(nil); st != nil {
		return st.Close()
	}
	return nil
}

type lazyRow struct {
	row *sql.Row
	err error
}

func (r lazyRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.row.Scan(dest...)
}

// readStmt is a read prepared on both sides: r on the pool of read-only
// connections, w on the writer's connection.
type readStmt struct{ r, w lazyStmt }

// reading picks the side a read runs on: the writer's connection while no
// write holds it (s.wal.mu is held across every write transaction, so no
// transaction is open on it then; done releases it), else a read-only
// connection. A process that makes one event's reads and writes one after
// the other (a hook) thus never opens a read-only connection, each of
// which opens the file, reads and parses the schema; reads beside a write
// (a server's) go to the pool.
func (s *SQLite) reading(st *readStmt) (_ *lazyStmt, done func()) {
	if s.wal.mu.TryLock() {
		return &st.w, s.wal.mu.Unlock
	}
	return &st.r, func() {}
}
