package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is the server Store: several hosts that share project and global
// owners share one PostgreSQL database (R5.10). Its tables are attune_meta,
// attune_blobs, attune_records, attune_logs and attune_calls, in the first
// schema of the connection's search_path; they are created when missing.
//
// Appends, truncations and deletions of one log take a transaction-scoped
// advisory lock on that log before they read its length, so appenders at the
// same expected length serialize across hosts and the later ones see
// ErrStale. Names and keys sort in byte order (COLLATE "C"), as in the other
// stores; being PostgreSQL text, they must be valid UTF-8 without NUL.
//
// A Postgres keeps a small pool of connections (at most max(4, GOMAXPROCS),
// or the URL's pool_max_conns); pgx prepares and caches each statement per
// connection. A Postgres is safe for concurrent use.
type Postgres struct {
	pool *pgPool
}

var _ Store = (*Postgres)(nil)

const (
	// pgSchemaVersion is the schema this code reads and writes (the
	// schema_version row of attune_meta).
	pgSchemaVersion = 1
	// pgLockClass is the first key of attune's advisory locks ("attu"); the
	// second is 0 for schema creation and hashtext(log) for a log.
	pgLockClass = 0x61747475
)

var pgSchema = []string{
	`CREATE TABLE IF NOT EXISTS attune_meta (
		name  text PRIMARY KEY,
		value text NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS attune_blobs (
		sha  text PRIMARY KEY,
		data bytea NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS attune_records (
		kind  text COLLATE "C" NOT NULL,
		key   text COLLATE "C" NOT NULL,
		value bytea NOT NULL,
		PRIMARY KEY (kind, key)
	)`,
	`CREATE TABLE IF NOT EXISTS attune_logs (
		log  text COLLATE "C" NOT NULL,
		seq  bigint NOT NULL,
		data bytea NOT NULL,
		PRIMARY KEY (log, seq)
	)`,
	`CREATE TABLE IF NOT EXISTS attune_calls (
		log      text COLLATE "C" NOT NULL,
		id       text COLLATE "C" NOT NULL,
		input    bytea NOT NULL,
		result   bytea NOT NULL,
		revision bigint NOT NULL,
		PRIMARY KEY (log, id)
	)`,
	`INSERT INTO attune_meta (name, value) VALUES ('schema_version', '1') ON CONFLICT (name) DO NOTHING`,
}

// OpenPostgres connects to the PostgreSQL database at url (a postgres://
// URL or a keyword/value string, as pgx reads them) and creates attune's
// tables when they are missing.
func OpenPostgres(ctx context.Context, url string) (*Postgres, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	size := max(4, runtime.GOMAXPROCS(0))
	if v, ok := cfg.RuntimeParams["pool_max_conns"]; ok {
		delete(cfg.RuntimeParams, "pool_max_conns")
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("store: postgres: pool_max_conns %q is not a positive number", v)
		}
		size = n
	}
	p := &Postgres{pool: newPGPool(cfg, size)}
	if err := p.init(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Postgres) init(ctx context.Context) error {
	return p.tx(ctx, "open", func(tx pgx.Tx) error {
		// Hosts starting together would race on CREATE TABLE IF NOT EXISTS.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, pgLockClass); err != nil {
			return err
		}
		for _, stmt := range pgSchema {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		var v string
		if err := tx.QueryRow(ctx, `SELECT value FROM attune_meta WHERE name = 'schema_version'`).Scan(&v); err != nil {
			return err
		}
		if v != strconv.Itoa(pgSchemaVersion) {
			return fmt.Errorf("schema version %s, which this attune cannot read (it reads %d)", v, pgSchemaVersion)
		}
		return nil
	})
}

// pgErr names the operation in an error from PostgreSQL.
func pgErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: postgres: %s: %w", op, err)
}

// conn runs fn on a pooled connection.
func (p *Postgres) conn(ctx context.Context, op string, fn func(c *pgx.Conn) error) error {
	c, err := p.pool.acquire(ctx)
	if err != nil {
		return pgErr(op, err)
	}
	defer p.pool.release(c)
	return fn(c)
}

// tx runs fn in a transaction (READ COMMITTED) and commits when it returns
// nil. The commit does not heed ctx: once the work is done, a cancellation
// must not leave the caller unsure whether it was committed. Errors that fn
// returns from the store's own checks pass through unchanged.
func (p *Postgres) tx(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	return p.conn(ctx, op, func(c *pgx.Conn) error {
		tx, err := c.Begin(ctx)
		if err != nil {
			return pgErr(op, err)
		}
		if err := fn(tx); err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			tx.Rollback(rctx)
			if isStoreError(err) {
				return err
			}
			return pgErr(op, err)
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		return pgErr(op, tx.Commit(cctx))
	})
}

// storeError marks an error the store made itself (a stale length, a call
// record), which needs no further wrapping.
type storeError struct{ error }

func (e storeError) Unwrap() error { return e.error }

func isStoreError(err error) bool {
	var se storeError
	return errors.As(err, &se)
}

// lockLog takes the advisory lock that serializes the writers of one log
// until the transaction ends.
func lockLog(ctx context.Context, tx pgx.Tx, log string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, pgLockClass, log)
	return err
}

func pgLength(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, log string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM attune_logs WHERE log = $1`, log).Scan(&n)
	return n, err
}

// PutBlob implements Store.
func (p *Postgres) PutBlob(ctx context.Context, data []byte) (string, error) {
	sha := blobHash(data)
	err := p.conn(ctx, "put blob", func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO attune_blobs (sha, data) VALUES ($1, $2) ON CONFLICT (sha) DO NOTHING`, sha, nonNil(data))
		return pgErr("put blob", err)
	})
	if err != nil {
		return "", err
	}
	return sha, nil
}

// GetBlob implements Store.
func (p *Postgres) GetBlob(ctx context.Context, sha string) ([]byte, error) {
	var data []byte
	err := p.conn(ctx, "get blob", func(c *pgx.Conn) error {
		err := c.QueryRow(ctx, `SELECT data FROM attune_blobs WHERE sha = $1`, sha).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			return blobNotFound(sha)
		}
		return pgErr("get blob", err)
	})
	if err != nil {
		return nil, err
	}
	return nonNil(data), nil
}

// DeleteBlob implements Store.
func (p *Postgres) DeleteBlob(ctx context.Context, sha string) error {
	return p.conn(ctx, "delete blob", func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, `DELETE FROM attune_blobs WHERE sha = $1`, sha)
		return pgErr("delete blob", err)
	})
}

// GetRecord implements Store.
func (p *Postgres) GetRecord(ctx context.Context, kind, key string) ([]byte, error) {
	var v []byte
	err := p.conn(ctx, "get record", func(c *pgx.Conn) error {
		err := c.QueryRow(ctx, `SELECT value FROM attune_records WHERE kind = $1 AND key = $2`, kind, key).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return recordNotFound(kind, key)
		}
		return pgErr("get record", err)
	})
	if err != nil {
		return nil, err
	}
	return nonNil(v), nil
}

// PutRecord implements Store.
func (p *Postgres) PutRecord(ctx context.Context, kind, key string, value []byte) error {
	return p.conn(ctx, "put record", func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO attune_records (kind, key, value) VALUES ($1, $2, $3)
			ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value`, kind, key, nonNil(value))
		return pgErr("put record", err)
	})
}

// PutRecordIfAbsent implements Store.
func (p *Postgres) PutRecordIfAbsent(ctx context.Context, kind, key string, value []byte) ([]byte, bool, error) {
	var stored []byte
	var created bool
	err := p.conn(ctx, "put record", func(c *pgx.Conn) error {
		for {
			// ON CONFLICT DO NOTHING waits for a concurrent insert of the
			// same key to commit or roll back: exactly one creates.
			tag, err := c.Exec(ctx, `INSERT INTO attune_records (kind, key, value) VALUES ($1, $2, $3)
				ON CONFLICT (kind, key) DO NOTHING`, kind, key, nonNil(value))
			if err != nil {
				return pgErr("put record", err)
			}
			if tag.RowsAffected() == 1 {
				stored, created = clone(value), true
				return nil
			}
			err = c.QueryRow(ctx, `SELECT value FROM attune_records WHERE kind = $1 AND key = $2`, kind, key).Scan(&stored)
			if errors.Is(err, pgx.ErrNoRows) {
				continue // deleted in between: try again
			}
			return pgErr("put record", err)
		}
	})
	if err != nil {
		return nil, false, err
	}
	return nonNil(stored), created, nil
}

// DeleteRecord implements Store.
func (p *Postgres) DeleteRecord(ctx context.Context, kind, key string) error {
	return p.conn(ctx, "delete record", func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, `DELETE FROM attune_records WHERE kind = $1 AND key = $2`, kind, key)
		return pgErr("delete record", err)
	})
}

// ListRecords implements Store.
func (p *Postgres) ListRecords(ctx context.Context, kind, prefix string) ([]string, error) {
	var keys []string
	err := p.conn(ctx, "list records", func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT key FROM attune_records
			WHERE kind = $1 AND key >= $2 AND starts_with(key, $2) ORDER BY key`, kind, prefix)
		if err != nil {
			return pgErr("list records", err)
		}
		keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return pgErr("list records", err)
	})
	if err != nil {
		return nil, err
	}
	return keys, nil
}

// Append implements Store.
func (p *Postgres) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *CallRecord) (int64, error) {
	if err := checkAppend(expected, call); err != nil {
		return 0, err
	}
	var n int64
	err := p.tx(ctx, "append", func(tx pgx.Tx) error {
		if err := lockLog(ctx, tx, log); err != nil {
			return err
		}
		// Read after the lock: in READ COMMITTED each statement sees what
		// the previous holder of the lock committed.
		var err error
		if n, err = pgLength(ctx, tx, log); err != nil {
			return err
		}
		if call != nil { // R5.6: the call id first
			var stored CallRecord
			err := tx.QueryRow(ctx, `SELECT input, result, revision FROM attune_calls WHERE log = $1 AND id = $2`,
				log, call.ID).Scan(&stored.Input, &stored.Result, &stored.Revision)
			switch {
			case err == nil:
				stored.ID, stored.Input, stored.Result = call.ID, nonNil(stored.Input), nonNil(stored.Result)
				return storeError{checkCall(log, stored, call)}
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
		}
		if expected != Any && expected != n { // R5.5
			return storeError{staleError(log, n, expected)}
		}
		if len(entries) == 0 && call == nil {
			return nil
		}
		if len(entries) > 0 {
			_, err := tx.Exec(ctx, `INSERT INTO attune_logs (log, seq, data)
				SELECT $1, $2 + t.ord, t.data FROM unnest($3::bytea[]) WITH ORDINALITY AS t(data, ord)`,
				log, n, nonNilAll(entries))
			if err != nil {
				return err
			}
			n += int64(len(entries))
		}
		if call != nil {
			_, err := tx.Exec(ctx, `INSERT INTO attune_calls (log, id, input, result, revision) VALUES ($1, $2, $3, $4, $5)`,
				log, call.ID, nonNil(call.Input), nonNil(call.Result), n)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		var se storeError
		if errors.As(err, &se) {
			return n, se.error
		}
		return 0, err
	}
	return n, nil
}

// Read implements Store.
func (p *Postgres) Read(ctx context.Context, log string, after int64, limit int) ([]Entry, error) {
	var lim *int64 // NULL: no limit
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	var out []Entry
	err := p.conn(ctx, "read", func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT seq, data FROM attune_logs WHERE log = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
			log, max(after, 0), lim)
		if err != nil {
			return pgErr("read", err)
		}
		defer rows.Close()
		for rows.Next() {
			var e Entry
			if err := rows.Scan(&e.Seq, &e.Data); err != nil {
				return pgErr("read", err)
			}
			e.Data = nonNil(e.Data)
			out = append(out, e)
		}
		return pgErr("read", rows.Err())
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Length implements Store.
func (p *Postgres) Length(ctx context.Context, log string) (int64, error) {
	var n int64
	err := p.conn(ctx, "length", func(c *pgx.Conn) error {
		var err error
		n, err = pgLength(ctx, c, log)
		return pgErr("length", err)
	})
	return n, err
}

// Truncate implements Store.
func (p *Postgres) Truncate(ctx context.Context, log string, n int64) error {
	if err := checkTruncate(n); err != nil {
		return err
	}
	return p.tx(ctx, "truncate", func(tx pgx.Tx) error {
		if err := lockLog(ctx, tx, log); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM attune_logs WHERE log = $1 AND seq > $2`, log, n); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM attune_calls WHERE log = $1 AND revision > $2`, log, n) // R5.9
		return err
	})
}

// DeleteLog implements Store.
func (p *Postgres) DeleteLog(ctx context.Context, log string) error {
	return p.tx(ctx, "delete log", func(tx pgx.Tx) error {
		if err := lockLog(ctx, tx, log); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM attune_logs WHERE log = $1`, log); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM attune_calls WHERE log = $1`, log)
		return err
	})
}

// GetCall implements Store.
func (p *Postgres) GetCall(ctx context.Context, log, id string) (CallRecord, error) {
	rec := CallRecord{ID: id}
	err := p.conn(ctx, "get call", func(c *pgx.Conn) error {
		err := c.QueryRow(ctx, `SELECT input, result, revision FROM attune_calls WHERE log = $1 AND id = $2`,
			log, id).Scan(&rec.Input, &rec.Result, &rec.Revision)
		if errors.Is(err, pgx.ErrNoRows) {
			return callNotFound(log, id)
		}
		return pgErr("get call", err)
	})
	if err != nil {
		return CallRecord{}, err
	}
	rec.Input, rec.Result = nonNil(rec.Input), nonNil(rec.Result)
	return rec, nil
}

// Close implements Store: it closes the idle connections at once and the
// busy ones when they are given back.
func (p *Postgres) Close() error {
	p.pool.close()
	return nil
}

// pgPool is a small pool of pgx connections: at most size open at once,
// idle ones kept for reuse, broken ones (closed, or left inside a
// transaction) dropped. Safe for concurrent use.
type pgPool struct {
	cfg   *pgx.ConnConfig
	slots chan struct{} // one token per open or opening connection

	mu     sync.Mutex
	idle   []*pgx.Conn
	closed bool
}

func newPGPool(cfg *pgx.ConnConfig, size int) *pgPool {
	return &pgPool{cfg: cfg, slots: make(chan struct{}, size)}
}

var errPoolClosed = errors.New("store closed")

func (p *pgPool) acquire(ctx context.Context) (*pgx.Conn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, errPoolClosed
	}
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !c.IsClosed() {
			p.mu.Unlock()
			return c, nil
		}
	}
	p.mu.Unlock()
	c, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return c, nil
}

func (p *pgPool) release(c *pgx.Conn) {
	defer func() { <-p.slots }()
	p.mu.Lock()
	keep := !p.closed && !c.IsClosed() && c.PgConn().TxStatus() == 'I'
	if keep {
		p.idle = append(p.idle, c)
	}
	p.mu.Unlock()
	if !keep {
		closeConn(c)
	}
}

func (p *pgPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		closeConn(c)
	}
}

func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.Close(ctx)
}
