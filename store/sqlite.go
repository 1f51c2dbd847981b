package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite is the embedded Store: one SQLite file (with its -wal and -shm
// companions, which stay between processes) in WAL mode; every write
// flushes the WAL to disk before it returns (R5.10), outside the writer's
// lock (wal.go). Opening an existing store writes and syncs nothing and
// checks the schema with one read; closing it neither checkpoints nor
// syncs (sqliteConnector). A durable write costs one fdatasync of the WAL
// (shared by the writes committed together), and a commit that takes the
// WAL past its bound copies it into the database file (two more syncs,
// and one for the WAL's restarted header at the next write).
//
// Writes go through a single connection and begin with BEGIN IMMEDIATE: in
// one process they queue for that connection, and across processes sharing
// the file they wait for the write lock (up to the busy timeout), so two
// appenders at the same expected length serialize and the second sees
// ErrStale. Appends waiting at the same moment share one transaction and
// one commit, so one fsync (group commit, see group.go); each still
// succeeds or fails on its own. A read runs on the writer's connection
// while no write holds it, else on a small pool of read-only connections
// that WAL lets run beside the writer (readStmt). A read may see an
// append whose flush is still under way (the append has not returned yet);
// an append that depends on it is flushed after it, so a crash never
// keeps the later without the earlier.
//
// A SQLite is safe for concurrent use, also by several processes.
type SQLite struct {
	path string
	w    *sql.DB   // one connection; every write
	wc   *sql.Conn // that connection, held while the store is open
	r    *sql.DB   // read-only connections

	// Prepared on wc, at first use (lazyStmt): the appends' own
	// transaction (group.go) and what runs in it.
	wBegin, wCommit, wRollback lazyStmt
	wLength, wGetCall          lazyStmt
	// wEntries[k] inserts 1<<k entries (of any logs) in one statement,
	// wCalls[k] 1<<k call records.
	wEntries [insertSizes]lazyStmt
	wCalls   [callSizes]lazyStmt
	// The reads, prepared at first use on r and on wc (readStmt).
	rRead, rLength, rGetCall, rGetBlob, rGetRecord, rList, rListRange readStmt

	group committer // appends waiting together, committed together
	wal   walSync   // flushes of the WAL
	shm   shmFile   // the WAL-index header: has anything committed?
	cache readCache // what was read or written, while nothing committed
}

var _ Store = (*SQLite)(nil)

const (
	// sqliteApplicationID marks a SQLite file as an attune store
	// (PRAGMA application_id, "attu").
	sqliteApplicationID = 0x61747475
	// sqliteSchemaVersion is the schema this code reads and writes
	// (PRAGMA user_version).
	sqliteSchemaVersion = 1
	// sqliteBusyTimeoutMS is how long a connection waits for a lock another
	// process holds before giving up.
	sqliteBusyTimeoutMS = 30000
	// sqliteCheckpointFrames is how long the WAL grows (in pages, of 4 KiB)
	// before the writer copies it into the database file: SQLite's own
	// default is 1000. The copy runs inside a commit, holding the write
	// lock, and flushes the database file, so every group commit waits
	// for it; doing it every 8000 pages (a WAL of up to ~32 MiB) stalls
	// the writers eight times less often.
	sqliteCheckpointFrames = 256
)

var sqliteSchema = []string{
	`CREATE TABLE blobs (
		sha  TEXT PRIMARY KEY,
		data BLOB NOT NULL
	) STRICT`,
	`CREATE TABLE records (
		kind  TEXT NOT NULL,
		key   TEXT NOT NULL,
		value BLOB NOT NULL,
		PRIMARY KEY (kind, key)
	) STRICT`,
	`CREATE TABLE logs (
		log  TEXT NOT NULL,
		seq  INTEGER NOT NULL,
		data BLOB NOT NULL,
		PRIMARY KEY (log, seq)
	) STRICT`,
	`CREATE TABLE calls (
		log      TEXT NOT NULL,
		id       TEXT NOT NULL,
		input    BLOB NOT NULL,
		result   BLOB NOT NULL,
		revision INTEGER NOT NULL,
		PRIMARY KEY (log, id)
	) STRICT`,
}

// sqliteMagic opens every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// OpenSQLite opens the SQLite store at path, creating the file (mode 0600)
// and its parent folders (mode 0700) when missing, and the schema when the
// file is new. A file that is not an attune store (not SQLite at all, or the
// database of another program) is refused with an error that says so, and
// is left as it was.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	// Opening takes locks the busy timeout does not always wait for:
	// SQLite answers SQLITE_BUSY at once where waiting could deadlock (a
	// connection that changes the journal mode or recovers the WAL index
	// while many processes open the store together: 1 of 30 in
	// TestSQLiteConcurrentFirstOpen). Such an open is tried again, with a
	// short jittered pause, for up to the busy timeout.
	deadline := time.Now().Add(sqliteBusyTimeoutMS * time.Millisecond)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		s, err := openSQLite(ctx, path)
		if err == nil || !sqliteBusy(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return s, err
		}
		time.Sleep(pause + time.Duration(rand.Int64N(int64(pause))))
	}
}

// sqliteBusy reports an error of SQLite's SQLITE_BUSY class.
func sqliteBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

func openSQLite(ctx context.Context, path string) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("store: no SQLite file named")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	hdr, err := sqliteCheckFile(path, abs)
	if err != nil {
		return nil, err
	}
	if !hdr.current() {
		// not (yet) a current attune store in WAL mode: an empty file, a
		// store made before stores were made in WAL mode, another
		// program's database (refused), or a schema of another version
		if err := sqliteInit(ctx, path, abs); err != nil {
			return nil, err
		}
	}

	s := &SQLite{path: path}
	s.wal.path, s.shm.path = abs, abs
	s.group.wake = make(chan struct{}, 1)
	s.wal.idle = s.group.nudge
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()

	drv := &sqlite.Driver{}
	s.w = sql.OpenDB(sqliteConnector{dsn: sqliteDSN(abs, "NORMAL", fmt.Sprintf("&_txlock=immediate&_pragma=wal_autocheckpoint(%d)", sqliteCheckpointFrames)), drv: drv})
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	// wc is held while the store is open: SQLite resets the -shm file when
	// a process's last connection to it closed and a new one opens, and
	// shm.go maps that file (the check below maps it for wc).
	if s.wc, err = s.w.Conn(ctx); err != nil {
		return nil, s.openError(err)
	}
	// The schema's one check: the header's word, read again through
	// SQLite (a migration's new header may still be in the WAL).
	// (Two PRAGMA statements, not one SELECT of the two pragma tables:
	// each table-valued pragma declares a virtual table, which SQLite
	// parses, on every open.)
	var appID, version int64
	if err := s.wc.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return nil, s.openError(err)
	}
	if err := s.wc.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return nil, s.openError(err)
	}
	if err := s.schemaError(appID, version); err != nil {
		return nil, err
	}

	s.r = sql.OpenDB(sqliteConnector{dsn: sqliteDSN(abs, "NORMAL", sqliteReadPragmas), drv: drv})
	readers := max(4, runtime.GOMAXPROCS(0))
	s.r.SetMaxOpenConns(readers)
	s.r.SetMaxIdleConns(readers)
	s.prepare()
	ok = true
	return s, nil
}

// sqliteDSN is the modernc.org/sqlite data source for the file at abs: a
// URI (so that no character of the path is taken for a parameter) with the
// per-connection settings. The writer runs with synchronous=NORMAL and
// flushes the WAL itself after each commit (wal.go).
func sqliteDSN(abs, sync, extra string) string {
	u := url.URL{Path: filepath.ToSlash(abs)}
	return "file:" + u.EscapedPath() +
		fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=synchronous(%s)", sqliteBusyTimeoutMS, sync) + extra
}

// sqliteReadPragmas are the read-only connections' own settings: they
// write nothing. (A memory-mapped file, mmap_size, spared a read of 100k
// entries its preads but no measurable time, and turns an I/O error or a
// file shrunk by another process into a signal, so it is not used.)
const sqliteReadPragmas = "&_pragma=query_only(1)"

// sqliteHeader is what the first 100 bytes of a SQLite file, its
// database header, say of it (sqlite.org/fileformat.html).
type sqliteHeader struct {
	read    bool   // false for a file just created empty
	wal     bool   // file format versions 2 (bytes 18 and 19): WAL mode
	appID   uint32 // PRAGMA application_id (byte 68)
	version uint32 // PRAGMA user_version (byte 60)
}

// current: the header is a current attune store's in WAL mode, which
// opens with one check and nothing written.
func (h sqliteHeader) current() bool {
	return h.read && h.wal && h.appID == sqliteApplicationID && h.version == sqliteSchemaVersion
}

// sqliteCheckFile refuses, before SQLite touches it, a file that exists and
// does not start as a SQLite database does, and creates a missing file with
// mode 0600 (SQLite gives its -wal and -shm files the same mode). It
// returns the file's header.
//
// A new store is created whole: its schema is written into a file of
// another name, in WAL mode, which is then linked to the store's name,
// which fails if the name exists. So processes opening a new store at
// once never see it empty (each either links its own or opens the one
// linked first), and an empty file at the name is never one attune left.
func sqliteCheckFile(path, abs string) (sqliteHeader, error) {
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		if _, err := sqliteCreate(abs); err != nil {
			return sqliteHeader{}, err
		}
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return sqliteHeader{}, f.Close() // no links here (sqliteCreate): the old way
	}
	if !errors.Is(err, fs.ErrExist) {
		return sqliteHeader{}, fmt.Errorf("store: %w", err)
	}
	f, err = os.Open(abs)
	if err != nil {
		return sqliteHeader{}, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return sqliteHeader{}, fmt.Errorf("store: %w", err)
	}
	if info.IsDir() {
		return sqliteHeader{}, notAttuneStore(path, "a directory")
	}
	head := make([]byte, 100)
	n, err := io.ReadFull(f, head)
	if n == 0 && (err == io.EOF || err == nil) {
		// attune creates its file above and writes its schema at once: an
		// empty file it did not just create is someone else's (or a store
		// whose first open was cut short), never silently a new store.
		return sqliteHeader{}, fmt.Errorf("store: %s is an empty file that attune did not create; remove it to start a new store, or set engine.store to the store you meant", path)
	}
	if !bytes.Equal(head[:min(n, len(sqliteMagic))], sqliteMagic) {
		return sqliteHeader{}, notAttuneStore(path, "file is not a database")
	}
	if n < len(head) {
		return sqliteHeader{}, nil // SQLite's to judge
	}
	return sqliteHeader{
		read:    true,
		wal:     head[18] == 2 && head[19] == 2,
		version: binary.BigEndian.Uint32(head[60:]),
		appID:   binary.BigEndian.Uint32(head[68:]),
	}, nil
}

// sqliteCreate writes a new store's schema into a file beside abs, turns
// WAL on in it, and links it to abs: linked is false when abs exists by
// then (another process made it) or the file system has no links (then the
// caller creates the file; concurrent first opens are then as safe as that
// file system allows).
func sqliteCreate(abs string) (linked bool, err error) {
	dir := filepath.Dir(abs)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(abs)+".new-*")
	if err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	name := tmp.Name()
	tmp.Close()
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(name + suffix)
		}
	}()
	db, err := sql.Open("sqlite", sqliteDSN(name, "FULL", ""))
	if err != nil {
		return false, fmt.Errorf("store: create %s: %w", abs, err)
	}
	err = func() error {
		defer db.Close() // the last connection: nothing is left in a WAL
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := sqliteSchemaTx(context.Background(), tx); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		return sqliteWAL(db)
	}()
	if err != nil {
		return false, fmt.Errorf("store: create %s: %w", abs, err)
	}
	// abs exists by now (another process linked first), or the file
	// system has no links (FAT, some shares): either way the caller opens
	// or creates abs the old way
	if os.Link(name, abs) != nil {
		return false, nil
	}
	return true, syncDir(dir) // the new name survives power loss
}

// sqliteWAL turns WAL on (a change of the file's header, made once).
func sqliteWAL(db *sql.DB) error {
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("cannot use WAL (journal mode is %s)", mode)
	}
	return nil
}

// sqliteSchemaTx writes attune's schema, application id and version.
func sqliteSchemaTx(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range sqliteSchema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, sqliteApplicationID)); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, sqliteSchemaVersion))
	return err
}

func notAttuneStore(path, why string) error {
	return fmt.Errorf("store: %s is not an attune SQLite store (%s); move it away or set engine.store to another file", path, why)
}

// openError turns an error met while opening into one that names the file,
// and SQLite's SQLITE_NOTADB into the refusal sqliteCheckFile gives.
func (s *SQLite) openError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB {
		return notAttuneStore(s.path, "file is not a database")
	}
	return fmt.Errorf("store: open %s: %w", s.path, err)
}

// sqliteInit brings a file that is not yet a current attune store in WAL
// mode there, or refuses it: an empty database gets the schema, a store
// made before stores were made in WAL mode gets WAL turned on, another
// program's database or another schema version is refused. It runs on a
// connection of its own with synchronous=FULL (each commit synced by
// SQLite), closed before the store's own open.
func sqliteInit(ctx context.Context, path, abs string) error {
	s := &SQLite{path: path} // for its errors
	db, err := sql.Open("sqlite", sqliteDSN(abs, "FULL", "&_txlock=immediate"))
	if err != nil {
		return s.openError(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return s.openError(err)
	}
	defer tx.Rollback()
	var appID, version, objects int64
	if err := tx.QueryRowContext(ctx, `SELECT application_id, user_version FROM pragma_application_id, pragma_user_version`).Scan(&appID, &version); err != nil {
		return s.openError(err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&objects); err != nil {
		return s.openError(err)
	}
	if appID == 0 && version == 0 && objects == 0 {
		if err := sqliteSchemaTx(ctx, tx); err != nil {
			return s.openError(err)
		}
		if err := tx.Commit(); err != nil {
			return s.openError(err)
		}
	} else if err := s.schemaError(appID, version); err != nil {
		return err
	}
	tx.Rollback() // WAL cannot be turned on inside a transaction
	if err := sqliteWAL(db); err != nil {
		return fmt.Errorf("store: open %s: %w", path, err)
	}
	return nil
}

// schemaError is nil for a current attune store's application id and
// schema version, else the refusal.
func (s *SQLite) schemaError(appID, version int64) error {
	switch {
	case appID == sqliteApplicationID && version == sqliteSchemaVersion:
		return nil
	case appID == sqliteApplicationID && version > sqliteSchemaVersion:
		return fmt.Errorf("store: %s has schema version %d, newer than this attune reads (%d)", s.path, version, sqliteSchemaVersion)
	case appID == sqliteApplicationID:
		return fmt.Errorf("store: %s has schema version %d, which this attune cannot read", s.path, version)
	}
	return notAttuneStore(s.path, "the database of another program")
}

// prepare names the statements the store runs; each is prepared at its
// first use.
func (s *SQLite) prepare() {
	for _, p := range []struct {
		on    preparer
		stmt  *lazyStmt
		query string
	}{
		{s.wc, &s.wBegin, `BEGIN IMMEDIATE`},
		{s.wc, &s.wCommit, `COMMIT`},
		{s.wc, &s.wRollback, `ROLLBACK`},
		{s.wc, &s.wLength, `SELECT coalesce(max(seq), 0) FROM logs WHERE log = ?`},
		{s.wc, &s.wGetCall, `SELECT input, result, revision FROM calls WHERE log = ? AND id = ?`},
	} {
		p.stmt.init(p.on, p.query)
	}
	for _, p := range []struct {
		stmt  *readStmt
		query string
	}{
		{&s.rRead, `SELECT seq, data FROM logs WHERE log = ? AND seq > ? ORDER BY seq LIMIT ?`},
		{&s.rLength, `SELECT coalesce(max(seq), 0) FROM logs WHERE log = ?`},
		{&s.rGetCall, `SELECT input, result, revision FROM calls WHERE log = ? AND id = ?`},
		{&s.rGetBlob, `SELECT data FROM blobs WHERE sha = ?`},
		{&s.rGetRecord, `SELECT value FROM records WHERE kind = ? AND key = ?`},
		// Keys compare as bytes (SQLite's BINARY collation), so the keys
		// with a prefix are a range of the primary key.
		{&s.rList, `SELECT key FROM records WHERE kind = ? AND key >= ? ORDER BY key`},
		{&s.rListRange, `SELECT key FROM records WHERE kind = ? AND key >= ? AND key < ? ORDER BY key`},
	} {
		p.stmt.r.init(s.r, p.query)
		p.stmt.w.init(s.wc, p.query)
	}
	for k := range s.wEntries {
		s.wEntries[k].init(s.wc, `INSERT INTO logs (log, seq, data) VALUES `+strings.Repeat(", (?, ?, ?)", 1<<k)[2:])
	}
	for k := range s.wCalls {
		s.wCalls[k].init(s.wc, `INSERT INTO calls (log, id, input, result, revision) VALUES `+strings.Repeat(", (?, ?, ?, ?, ?)", 1<<k)[2:])
	}
}

// insertSizes and callSizes are how many multi-row inserts are prepared:
// of 1, 2, 4, ... rows. A batch of rows is inserted in as few of them as
// its size takes, so a long batch costs a statement per 1<<(sizes-1) rows.
const (
	insertSizes = 7
	callSizes   = 5
)

// Columns of one row of the multi-row inserts.
const (
	entryColumns = 3 // log, seq, data
	callColumns  = 5 // log, id, input, result, revision
)

// insertRows runs the multi-row insert stmts (stmts[k] inserting 1<<k
// rows of width values each) over args, a whole number of rows, in as few
// statements as it takes.
func insertRows(ctx context.Context, stmts []lazyStmt, width int, args []any) error {
	for len(args) > 0 {
		k := min(bits.Len(uint(len(args)/width))-1, len(stmts)-1) // the largest size that fits
		chunk := args[:width<<k]
		args = args[len(chunk):]
		if _, err := stmts[k].ExecContext(ctx, chunk...); err != nil {
			return err
		}
	}
	return nil
}

// Path returns the file name the store was opened with.
func (s *SQLite) Path() string { return s.path }

// err names the operation and the file in an error from SQLite.
func (s *SQLite) err(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: %s %s: %w", op, s.path, err)
}

// PutBlob implements Store.
//
// A blob the store holds already is not written again, so storing it
// flushes nothing: only PutBlob writes blobs, and one seen here was
// flushed before its PutBlob returned, or else that writer stopped between
// its commit and its flush, and then the blob's frames are in the WAL
// before anything this store writes next, so the next durable write's
// flush covers them (or a checkpoint, which syncs the database file, has
// copied them).
func (s *SQLite) PutBlob(ctx context.Context, data []byte) (string, error) {
	sha := blobHash(data)
	if _, err := s.GetBlob(ctx, sha); err == nil {
		return sha, nil
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) (bool, func(), error) {
		res, err := tx.ExecContext(ctx, `INSERT INTO blobs (sha, data) VALUES (?, ?) ON CONFLICT (sha) DO NOTHING`, sha, nonNil(data))
		return wroteRows(res, err, func() { s.cache.setBlobLocked(sha, cached{data: data}) })
	})
	if err != nil {
		return "", s.err("put blob in", err)
	}
	return sha, nil
}

// GetBlob implements Store.
func (s *SQLite) GetBlob(ctx context.Context, sha string) ([]byte, error) {
	h, ok := s.shm.header()
	if ok {
		if c, hit := s.cache.getBlob(h, sha); hit {
			if c.missing {
				return nil, blobNotFound(sha)
			}
			return c.data, nil
		}
	}
	var data []byte
	st, done := s.reading(&s.rGetBlob)
	err := st.QueryRowContext(ctx, sha).Scan(&data)
	done()
	missing := errors.Is(err, sql.ErrNoRows)
	if err != nil && !missing {
		return nil, s.err("get blob from", err)
	}
	if s.unchanged(h, ok) {
		s.cache.learnBlob(h, sha, cached{data: data, missing: missing})
	}
	if missing {
		return nil, blobNotFound(sha)
	}
	return nonNil(data), nil
}

// DeleteBlob implements Store.
func (s *SQLite) DeleteBlob(ctx context.Context, sha string) error {
	return s.err("delete blob from", s.writeTx(ctx, func(tx *sql.Tx) (bool, func(), error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE sha = ?`, sha)
		return wroteRows(res, err, func() { s.cache.setBlobLocked(sha, cached{missing: true}) })
	}))
}

// GetRecord implements Store.
func (s *SQLite) GetRecord(ctx context.Context, kind, key string) ([]byte, error) {
	h, ok := s.shm.header()
	if ok {
		if c, hit := s.cache.getRecord(h, kind, key); hit {
			if c.missing {
				return nil, recordNotFound(kind, key)
			}
			return c.data, nil
		}
	}
	var v []byte
	st, done := s.reading(&s.rGetRecord)
	err := st.QueryRowContext(ctx, kind, key).Scan(&v)
	done()
	missing := errors.Is(err, sql.ErrNoRows)
	if err != nil && !missing {
		return nil, s.err("get record from", err)
	}
	if s.unchanged(h, ok) {
		s.cache.learnRecord(h, kind, key, cached{data: v, missing: missing})
	}
	if missing {
		return nil, recordNotFound(kind, key)
	}
	return nonNil(v), nil
}

// PutRecord implements Store.
func (s *SQLite) PutRecord(ctx context.Context, kind, key string, value []byte) error {
	return s.err("put record in", s.writeTx(ctx, func(tx *sql.Tx) (bool, func(), error) {
		res, err := tx.ExecContext(ctx, `INSERT INTO records (kind, key, value) VALUES (?, ?, ?)
		ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value`, kind, key, nonNil(value))
		return wroteRows(res, err, func() { s.cache.setRecordLocked(kind, key, cached{data: value}) })
	}))
}

// PutRecordIfAbsent implements Store.
func (s *SQLite) PutRecordIfAbsent(ctx context.Context, kind, key string, value []byte) (stored []byte, created bool, err error) {
	err = s.writeTx(ctx, func(tx *sql.Tx) (bool, func(), error) {
		stored, created, err = s.putRecordIfAbsent(ctx, tx, kind, key, value)
		return created, func() { s.cache.setRecordLocked(kind, key, cached{data: stored}) }, err
	})
	if err != nil {
		return nil, false, s.err("put record in", err)
	}
	return stored, created, nil
}

func (s *SQLite) putRecordIfAbsent(ctx context.Context, tx *sql.Tx, kind, key string, value []byte) ([]byte, bool, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO records (kind, key, value) VALUES (?, ?, ?)
		ON CONFLICT (kind, key) DO NOTHING`, kind, key, nonNil(value))
	if err != nil {
		return nil, false, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, false, err
	} else if n == 1 {
		return clone(value), true, nil
	}
	var stored []byte
	if err := tx.QueryRowContext(ctx, `SELECT value FROM records WHERE kind = ? AND key = ?`, kind, key).Scan(&stored); err != nil {
		return nil, false, err
	}
	return nonNil(stored), false, nil
}

// DeleteRecord implements Store.
func (s *SQLite) DeleteRecord(ctx context.Context, kind, key string) error {
	return s.err("delete record from", s.writeTx(ctx, func(tx *sql.Tx) (bool, func(), error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM records WHERE kind = ? AND key = ?`, kind, key)
		return wroteRows(res, err, func() { s.cache.setRecordLocked(kind, key, cached{missing: true}) })
	}))
}

// ListRecords implements Store.
func (s *SQLite) ListRecords(ctx context.Context, kind, prefix string) ([]string, error) {
	q, args := &s.rList, []any{kind, prefix}
	if end, ok := prefixEnd(prefix); ok {
		q, args = &s.rListRange, append(args, end)
	}
	st, done := s.reading(q)
	defer done()
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, s.err("list records in", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, s.err("list records in", err)
		}
		keys = append(keys, k)
	}
	return keys, s.err("list records in", rows.Err())
}

// Append implements Store. Appends waiting at the same moment share one
// transaction and one commit (group commit, see appendGroup).
func (s *SQLite) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *CallRecord) (int64, error) {
	if err := checkAppend(expected, call); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, s.err("append to", err)
	}
	return s.group.append(ctx, s, &appendReq{log: log, expected: expected, entries: entries, call: call})
}

var _ Lazy = (*SQLite)(nil)

// AppendLazy implements Lazy: Append, answered once committed, before the
// WAL is flushed (a process crash keeps it, a power loss may not until the
// next flush).
func (s *SQLite) AppendLazy(ctx context.Context, log string, expected int64, entries [][]byte, call *CallRecord) (int64, error) {
	if err := checkAppend(expected, call); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, s.err("append to", err)
	}
	return s.group.append(ctx, s, &appendReq{log: log, expected: expected, entries: entries, call: call, lazy: true})
}

// Sync implements Lazy: every commit made so far is flushed to disk.
func (s *SQLite) Sync(ctx context.Context) error {
	return s.err("flush", s.wal.syncThrough(s.wal.committed.Load()))
}

// appendTx runs one append inside the open transaction tx; ok is false
// when it was refused (stale, call id known) and wrote nothing.
func (s *SQLite) appendTx(ctx context.Context, q *appendReq) (n int64, err error) {
	if err := s.wLength.QueryRowContext(ctx, q.log).Scan(&n); err != nil {
		return 0, s.err("append to", err)
	}
	if r, err := s.knownCall(ctx, q); err != nil { // R5.6: the call id first
		return 0, err
	} else if r != nil {
		return n, r
	}
	if q.expected != Any && q.expected != n { // R5.5
		return n, &refusal{staleError(q.log, n, q.expected)}
	}
	rows := entryRows(nil, q, n)
	if err := insertRows(ctx, s.wEntries[:], entryColumns, rows); err != nil {
		return 0, s.err("append to", err)
	}
	n += int64(len(q.entries))
	if q.call != nil {
		if err := insertRows(ctx, s.wCalls[:], callColumns, callRow(nil, q, n)); err != nil {
			return 0, s.err("append to", err)
		}
	}
	return n, nil
}

// knownCall reads the call record q names, when it has one: the refusal
// its append gets when the call id is known (R5.6), else nil.
func (s *SQLite) knownCall(ctx context.Context, q *appendReq) (*refusal, error) {
	call := q.call
	if call == nil {
		return nil, nil
	}
	var stored CallRecord
	err := s.wGetCall.QueryRowContext(ctx, q.log, call.ID).Scan(&stored.Input, &stored.Result, &stored.Revision)
	switch {
	case err == nil:
		stored.ID, stored.Input, stored.Result = call.ID, nonNil(stored.Input), nonNil(stored.Result)
		return &refusal{checkCall(q.log, stored, call)}, nil
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	default:
		return nil, s.err("append to", err)
	}
}

// entryRows appends to args the rows of q's entries, the log being n long
// before them.
func entryRows(args []any, q *appendReq, n int64) []any {
	for _, e := range q.entries {
		n++
		args = append(args, q.log, n, nonNil(e))
	}
	return args
}

// callRow appends to args the row of q's call record, revision n.
func callRow(args []any, q *appendReq, n int64) []any {
	c := q.call
	return append(args, q.log, c.ID, nonNil(c.Input), nonNil(c.Result), n)
}

// Read implements Store.
func (s *SQLite) Read(ctx context.Context, log string, after int64, limit int) ([]Entry, error) {
	after = max(after, 0)
	h, ok := s.shm.header()
	if ok {
		if es, hit := s.cache.read(h, log, after, limit); hit {
			return es, nil
		}
	}
	out, err := s.read(ctx, log, after, limit)
	if err != nil {
		return nil, err
	}
	// Learn the tail when the read went to the end of the log: it returned
	// fewer entries than asked, and at least one (or the log is empty), so
	// its length is known.
	if (limit <= 0 || len(out) < limit) && (len(out) > 0 || after == 0) && s.unchanged(h, ok) {
		n := after
		if len(out) > 0 {
			n = out[len(out)-1].Seq
		}
		s.cache.learnTail(h, log, after, n, out)
	}
	return out, nil
}

func (s *SQLite) read(ctx context.Context, log string, after int64, limit int) ([]Entry, error) {
	lim := int64(-1) // SQLite: a negative LIMIT is none
	if limit > 0 {
		lim = int64(limit)
	}
	st, done := s.reading(&s.rRead)
	defer done()
	rows, err := st.QueryContext(ctx, log, after, lim)
	if err != nil {
		return nil, s.err("read", err)
	}
	defer rows.Close()
	// A journal is read in chunks of thousands of entries: the entries'
	// slice is made once, at the size asked (up to readPrealloc), and
	// their bytes are scanned as sql.RawBytes (no copy by database/sql,
	// valid until the next row) and copied into a few large blocks
	// (entryArena) instead of one allocation per entry.
	out := make([]Entry, 0, min(max(limit, 0), readPrealloc))
	var arena entryArena
	var data sql.RawBytes
	for rows.Next() {
		var e Entry
		if err := rows.Scan(&e.Seq, &data); err != nil {
			return nil, s.err("read", err)
		}
		e.Data = arena.copy(data)
		out = append(out, e)
	}
	return out, s.err("read", rows.Err())
}

// readPrealloc bounds the entries a read makes room for before it knows
// how many there are.
const readPrealloc = 1 << 14

// entryArena holds the bytes of the entries of one read, in blocks that
// double from entryBlockMin up to entryBlockMax bytes (the largest of the
// allocator's small size classes: a larger block is a fresh span of the
// heap, zeroed, and costs more than the allocations it saves). Each entry's Data
// is a slice of a block with its capacity cut at its length, so that an
// append to one never writes into the next; a caller that keeps one entry
// keeps its block (at most entryBlockMax bytes, or the entry alone when
// larger).
type entryArena struct {
	block []byte
	next  int // size of the next block
}

const (
	entryBlockMin = 4 << 10
	entryBlockMax = 32 << 10
)

// copy returns a copy of b, never nil.
func (a *entryArena) copy(b []byte) []byte {
	if a.block == nil || len(b) > cap(a.block)-len(a.block) {
		if a.next == 0 {
			a.next = entryBlockMin
		}
		if len(b) > entryBlockMax/4 {
			return append(make([]byte, 0, len(b)), b...) // a block of its own
		}
		a.block = make([]byte, 0, max(a.next, len(b)))
		a.next = min(2*a.next, entryBlockMax)
	}
	n := len(a.block)
	a.block = append(a.block, b...)
	return a.block[n:len(a.block):len(a.block)]
}

// Length implements Store.
func (s *SQLite) Length(ctx context.Context, log string) (int64, error) {
	h, ok := s.shm.header()
	if ok {
		if n, hit := s.cache.length(h, log); hit {
			return n, nil
		}
	}
	var n int64
	st, done := s.reading(&s.rLength)
	err := st.QueryRowContext(ctx, log).Scan(&n)
	done()
	if err != nil {
		return 0, s.err("read the length of a log in", err)
	}
	if s.unchanged(h, ok) {
		s.cache.learnTail(h, log, n, n, nil)
	}
	return n, nil
}

// unchanged reports whether the WAL-index header is still h (read, with
// ok, before a read of SQLite): the read saw the state at h.
func (s *SQLite) unchanged(h walHeader, ok bool) bool {
	if !ok {
		return false
	}
	h2, ok2 := s.shm.header()
	return ok2 && h2 == h
}

// Truncate implements Store.
func (s *SQLite) Truncate(ctx context.Context, log string, n int64) error {
	if err := checkTruncate(n); err != nil {
		return err
	}
	return s.err("truncate a log in", s.writeTx(ctx, func(tx *sql.Tx) (bool, func(), error) {
		return true, func() { s.cache.droppedLocked(log) }, s.truncate(ctx, tx, log, n)
	}))
}

func (s *SQLite) truncate(ctx context.Context, tx *sql.Tx, log string, n int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM logs WHERE log = ? AND seq > ?`, log, n); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM calls WHERE log = ? AND revision > ?`, log, n); err != nil { // R5.9
		return err
	}
	return nil
}

// DeleteLog implements Store.
func (s *SQLite) DeleteLog(ctx context.Context, log string) error {
	return s.err("delete a log from", s.writeTx(ctx, func(tx *sql.Tx) (bool, func(), error) {
		return true, func() { s.cache.droppedLocked(log) }, s.deleteLog(ctx, tx, log)
	}))
}

func (s *SQLite) deleteLog(ctx context.Context, tx *sql.Tx, log string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM logs WHERE log = ?`, log); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM calls WHERE log = ?`, log); err != nil {
		return err
	}
	return nil
}

// GetCall implements Store.
func (s *SQLite) GetCall(ctx context.Context, log, id string) (CallRecord, error) {
	c := CallRecord{ID: id}
	st, done := s.reading(&s.rGetCall)
	err := st.QueryRowContext(ctx, log, id).Scan(&c.Input, &c.Result, &c.Revision)
	done()
	if errors.Is(err, sql.ErrNoRows) {
		return CallRecord{}, callNotFound(log, id)
	}
	if err != nil {
		return CallRecord{}, s.err("get a call record from", err)
	}
	c.Input, c.Result = nonNil(c.Input), nonNil(c.Result)
	return c, nil
}

// Close implements Store: it closes the readers, then the writer. Nothing
// is checkpointed, synced or removed (sqliteConnector): the -wal and -shm
// files stay for the next process.
func (s *SQLite) Close() error {
	errs := []error{s.shm.close()} // before any connection closes
	for _, st := range []*readStmt{&s.rRead, &s.rLength, &s.rGetCall, &s.rGetBlob, &s.rGetRecord, &s.rList, &s.rListRange} {
		errs = append(errs, st.r.close(), st.w.close())
	}
	for _, st := range []*lazyStmt{&s.wBegin, &s.wCommit, &s.wRollback, &s.wLength, &s.wGetCall} {
		errs = append(errs, st.close())
	}
	for k := range s.wEntries {
		errs = append(errs, s.wEntries[k].close())
	}
	for k := range s.wCalls {
		errs = append(errs, s.wCalls[k].close())
	}
	if s.wc != nil {
		errs = append(errs, s.wc.Close())
	}
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	errs = append(errs, s.wal.close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}
