package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Postgres is the server Store: several hosts that share project and global
// owners share one PostgreSQL database (R5.10). Its tables are attune_meta,
// attune_blobs, attune_records, attune_logs and attune_calls, in the first
// schema of the connection's search_path. `attune store migrate`
// (MigratePostgres) creates and upgrades them; an open only reads the
// schema version, creating the tables only in a database that has none
// and a role that may.
//
// Appends, truncations and deletions of one log take a transaction-scoped
// advisory lock on that log before they read its length, so appenders at the
// same expected length serialize across hosts and the later ones see
// ErrStale. An append checks the length once before it asks for the lock
// too: one that is already stale fails at once instead of queueing. An
// append is one round trip (Append); appends to owner logs are announced
// to watchers (Watch: LISTEN/NOTIFY on channel attune_log). Instance
// leases are records of kind "lease" (Lease). Names and keys sort in byte order (COLLATE "C"), as in the other
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
}

// OpenPostgres connects to the PostgreSQL database at url (a postgres://
// URL or a keyword/value string, as pgx reads them) and creates attune's
// tables when they are missing.
func OpenPostgres(ctx context.Context, url string) (*Postgres, error) {
	p, err := openPostgresPool(url)
	if err != nil {
		return nil, err
	}
	if err := p.init(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// openPostgresPool reads url and makes the pool, connecting to nothing yet.
func openPostgresPool(url string) (*Postgres, error) {
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
	return &Postgres{pool: newPGPool(cfg, size)}, nil
}

// init opens the schema: it reads the schema version with no DDL, so a
// role with only DML rights opens a migrated store. A database with no
// attune tables is migrated here when the role may create tables (as
// `attune store migrate` would); otherwise, or on an older schema, the
// error says to run `attune store migrate`.
func (p *Postgres) init(ctx context.Context) error {
	v, err := p.schemaVersion(ctx)
	switch {
	case err != nil:
		return err
	case v == 0:
		if err := p.migrate(ctx); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
				return fmt.Errorf("store: postgres: the database has no attune schema and this role may not create it: run `attune store migrate --store URL` as a role that may (docs/team.md): %w", err)
			}
			return err
		}
		return nil
	case v < pgSchemaVersion:
		return fmt.Errorf("store: postgres: schema version %d is older than this attune's (%d): run `attune store migrate` (docs/team.md)", v, pgSchemaVersion)
	case v > pgSchemaVersion:
		return fmt.Errorf("store: postgres: schema version %d, which this attune cannot read (it reads %d): upgrade attune", v, pgSchemaVersion)
	}
	return nil
}

// schemaVersion is the schema_version of attune_meta, 0 when attune's
// tables are missing.
func (p *Postgres) schemaVersion(ctx context.Context) (int, error) {
	var v string
	err := p.conn(ctx, "open", func(c *pgx.Conn) error {
		var present bool
		if err := c.QueryRow(ctx, `SELECT to_regclass('attune_meta') IS NOT NULL`).Scan(&present); err != nil {
			return pgErr("open", err)
		}
		if !present {
			return nil
		}
		err := c.QueryRow(ctx, `SELECT value FROM attune_meta WHERE name = 'schema_version'`).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return pgErr("open", err)
	})
	if err != nil || v == "" {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("store: postgres: schema version %q is not a number", v)
	}
	return n, nil
}

// pgMigrations are the schema's versions, forward only: pgMigrations[k]
// takes the schema from version k to k+1. A new version appends a step
// and raises pgSchemaVersion; a step never changes once released.
var pgMigrations = [][]string{
	pgSchema, // v1
}

// MigratePostgres creates or upgrades attune's schema in the database at
// url to the version this attune reads, and returns the versions it found
// and left. Run it as a role that may create tables (`attune store
// migrate`); hosts may then connect as a role with only DML rights.
func MigratePostgres(ctx context.Context, url string) (from, to int, err error) {
	p, err := openPostgresPool(url)
	if err != nil {
		return 0, 0, err
	}
	defer p.Close()
	from, err = p.schemaVersion(ctx)
	if err != nil {
		return 0, 0, err
	}
	if from > pgSchemaVersion {
		return from, from, fmt.Errorf("store: postgres: schema version %d is newer than this attune's (%d): upgrade attune", from, pgSchemaVersion)
	}
	if err := p.migrate(ctx); err != nil {
		return from, from, err
	}
	return from, pgSchemaVersion, nil
}

// migrate runs, under the schema lock, every step from the stored version
// up to pgSchemaVersion, each in the one transaction that records it.
func (p *Postgres) migrate(ctx context.Context) error {
	return p.tx(ctx, "migrate", func(tx pgx.Tx) error {
		// Hosts starting together would race on CREATE TABLE.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, pgLockClass); err != nil {
			return err
		}
		v := 0
		var present bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('attune_meta') IS NOT NULL`).Scan(&present); err != nil {
			return err
		}
		if present {
			var s string
			err := tx.QueryRow(ctx, `SELECT value FROM attune_meta WHERE name = 'schema_version'`).Scan(&s)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if s != "" {
				if v, err = strconv.Atoi(s); err != nil {
					return fmt.Errorf("schema version %q is not a number", s)
				}
			}
		}
		for ; v < pgSchemaVersion; v++ {
			for _, stmt := range pgMigrations[v] {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("migration to version %d: %w", v+1, err)
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO attune_meta (name, value) VALUES ('schema_version', $1)
				ON CONFLICT (name) DO UPDATE SET value = excluded.value`, strconv.Itoa(v+1)); err != nil {
				return err
			}
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
// must not leave the caller unsure whether it was committed.
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
			return pgErr(op, err)
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		return pgErr(op, tx.Commit(cctx))
	})
}

// lockLog takes the advisory lock that serializes the writers of one log
// until the transaction ends.
func lockLog(ctx context.Context, tx pgx.Tx, log string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, pgLockClass, log)
	return err
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
			WHERE kind = $1 AND key >= $2 COLLATE "C" AND starts_with(key, $2) ORDER BY key COLLATE "C"`, kind, prefix)
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

// Append implements Store in one round trip: BEGIN, the log's lock, the
// call record, the conditional inserts and COMMIT go in one pipelined
// batch. The length is checked before the lock: an append that is
// already stale takes no lock and waits for no holder, so stale attempts
// do not queue behind the one that wins. Each statement takes its own
// snapshot (READ COMMITTED), so the inserts, which run after the lock is
// held, see what the previous holder committed, and insert only when the
// log is still at the expected length and the call id is not recorded;
// otherwise the transaction commits nothing.
func (p *Postgres) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *CallRecord) (int64, error) {
	if err := checkAppend(expected, call); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, pgErr("append", err)
	}
	var n int64
	err := p.conn(ctx, "append", func(c *pgx.Conn) error {
		var callID, callIn, callRes any // NULL: no call record
		if call != nil {
			callID, callIn, callRes = call.ID, nonNil(call.Input), nonNil(call.Result)
		}
		b := &pgx.Batch{}
		b.Queue(`BEGIN`)
		b.Queue(`SELECT s.n, CASE WHEN $3::bigint < 0 OR s.n = $3::bigint
				THEN (SELECT true FROM pg_advisory_xact_lock($1, hashtext($2))) ELSE false END
			FROM (SELECT coalesce(max(seq), 0) AS n FROM attune_logs WHERE log = $2) s`, pgLockClass, log, expected)
		if call != nil {
			b.Queue(`SELECT input, result, revision FROM attune_calls WHERE log = $1 AND id = $2`, log, call.ID)
		}
		b.Queue(`WITH cur AS (SELECT coalesce(max(seq), 0) AS n FROM attune_logs WHERE log = $1),
			ok AS (SELECT n FROM cur WHERE ($2::bigint < 0 OR n = $2::bigint)
				AND ($4::text IS NULL OR NOT EXISTS (SELECT 1 FROM attune_calls WHERE log = $1 AND id = $4::text))
				AND (coalesce(cardinality($3::bytea[]), 0) > 0 OR $4::text IS NOT NULL)),
			e AS (INSERT INTO attune_logs (log, seq, data)
				SELECT $1, ok.n + t.ord, t.data FROM ok, unnest($3::bytea[]) WITH ORDINALITY AS t(data, ord) RETURNING 1),
			k AS (INSERT INTO attune_calls (log, id, input, result, revision)
				SELECT $1, $4::text, $5::bytea, $6::bytea, ok.n + coalesce(cardinality($3::bytea[]), 0) FROM ok WHERE $4::text IS NOT NULL RETURNING 1)
			SELECT (SELECT n FROM cur), EXISTS (SELECT 1 FROM ok), (SELECT count(*) FROM e) + (SELECT count(*) FROM k)`,
			log, expected, nonNilAll(entries), callID, callIn, callRes)
		b.Queue(`COMMIT`)
		announce := len(entries) > 0 && strings.HasPrefix(log, FeedPrefix)
		if announce {
			// After the COMMIT, in a transaction of its own that does not
			// wait for the disk: a NOTIFY inside the append's transaction
			// would hold the database-wide notification lock through the
			// commit's flush, serializing the appends of every owner. A
			// notice lost to a crash between the two is made up by the
			// watchers' periodic catch-up. The payload is the length the
			// log had at the COMMIT.
			b.Queue(`SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, (SELECT coalesce(max(seq), 0) FROM attune_logs WHERE log = $2)::text || ' ' || $2)`,
				pgFeedChannel, log)
		}
		// From here on ctx is not heeded: once the inserts are sent, a
		// cancellation must not leave the caller unsure of the commit.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		br := c.SendBatch(wctx, b)
		var pre, cur int64
		var locked, ok bool
		var wrote int64
		var stored *CallRecord
		committed := false
		_, err := br.Exec()
		if err == nil {
			err = br.QueryRow().Scan(&pre, &locked)
		}
		if err == nil && call != nil {
			rec := CallRecord{ID: call.ID}
			err = br.QueryRow().Scan(&rec.Input, &rec.Result, &rec.Revision)
			if err == nil {
				rec.Input, rec.Result = nonNil(rec.Input), nonNil(rec.Result)
				stored = &rec
			} else if errors.Is(err, pgx.ErrNoRows) {
				err = nil
			}
		}
		if err == nil {
			err = br.QueryRow().Scan(&cur, &ok, &wrote)
		}
		if err == nil {
			_, err = br.Exec()
			committed = err == nil
		}
		if announce && committed {
			br.Exec() // a notice not sent is made up by the catch-up
		}
		if cerr := br.Close(); err == nil && !announce {
			err = cerr
		}
		if err != nil {
			rollback(ctx, c)
			// Only the COMMIT or a lost connection can leave an insert
			// in doubt; an ERROR of a statement aborted the transaction.
			if commitInDoubt(err) && (len(entries) > 0 || call != nil) {
				return pgErr("append", fmt.Errorf("%w (%v)", ErrOutcomeUnknown, err))
			}
			return pgErr("append", err)
		}
		if !locked {
			cur = pre // stale before the lock: report what was seen
		}
		n = cur
		switch {
		case stored != nil: // R5.6: the call id first
			return checkCall(log, *stored, call)
		case expected != Any && expected != cur: // R5.5
			return staleError(log, cur, expected)
		case !ok:
			if call != nil { // recorded by a concurrent append after our look
				rec, gerr := p.GetCall(ctx, log, call.ID)
				if gerr != nil {
					return gerr
				}
				return checkCall(log, rec, call)
			}
			return nil // nothing to append
		}
		n = cur + int64(len(entries))
		return nil
	})
	if err != nil && !errors.Is(err, ErrStale) && !errors.Is(err, ErrCallExists) && !errors.Is(err, ErrCallConflict) {
		return 0, err
	}
	return n, err
}

// commitInDoubt reports whether an error from the batch that ends with
// COMMIT leaves its outcome unknown: anything but an ERROR the server
// reported for a statement (which aborts the transaction: nothing was
// committed) — a lost connection, a timeout, a FATAL or PANIC from a server
// going down.
func commitInDoubt(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Severity == "FATAL" || pe.Severity == "PANIC"
	}
	return true
}

// rollback ends the transaction a failed or refused append left open; a
// connection it cannot be done on is closed when it goes back to the pool.
func rollback(ctx context.Context, c *pgx.Conn) {
	if c.IsClosed() || c.PgConn().TxStatus() == 'I' {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	c.Exec(rctx, `ROLLBACK`)
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
		err := c.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM attune_logs WHERE log = $1`, log).Scan(&n)
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

// pgGateClass is the first key of the writers' gates (Gate); the second is
// hashtext(log). Another class than the logs' locks: a gate holder's own
// appends take the log's lock on another connection.
const pgGateClass = pgLockClass + 1

// Gate implements Gater with a session-level advisory lock held on a
// connection of the pool until release (at least two connections are
// needed: with a pool of one, Gate lets the caller in at once).
func (p *Postgres) Gate(ctx context.Context, log string) (func(), error) {
	if cap(p.pool.slots) < 2 {
		return func() {}, nil
	}
	c, err := p.pool.acquire(ctx)
	if err != nil {
		return nil, pgErr("gate", err)
	}
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, pgGateClass, log); err != nil {
		closeConn(c) // a lock maybe taken on a connection in doubt: drop it
		p.pool.drop()
		return nil, pgErr("gate", err)
	}
	return func() {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.Exec(rctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, pgGateClass, log); err != nil {
			closeConn(c) // the session ends, and its lock with it
			p.pool.drop()
			return
		}
		p.pool.release(c)
	}, nil
}

// Close implements Store: it closes the idle connections at once and the
// busy ones when they are given back.
func (p *Postgres) Close() error {
	p.pool.close()
	return nil
}

// pgPool is a small pool of pgx connections: at most size open at once,
// idle ones kept for reuse, broken ones (closed, or left inside a
// transaction) dropped. (pgxpool would need a module attune does not
// otherwise require.) Safe for concurrent use.
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
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

// drop gives back the slot of a connection closed instead of released.
func (p *pgPool) drop() { <-p.slots }

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

// pgFeedChannel is the channel of the appends' notices: the payload is
// the log's new length, a space, and the log's name.
const pgFeedChannel = "attune_log"

var _ Watcher = (*Postgres)(nil)

// pgFeedQuiet is how long the feed waits for a notice before it asks its
// watcher to catch up anyway (a notice lost with a writer's crash).
const pgFeedQuiet = 5 * time.Second

// Watch implements Watcher with LISTEN on a connection of its own (not
// one of the pool's). When the connection is lost the feed connects again,
// waiting 50 ms at first and doubling up to 1 s between tries, and after
// every (re)connection asks its watcher to catch up from the log.
func (p *Postgres) Watch(ctx context.Context, fn func(log string, n int64)) error {
	go p.listen(ctx, fn)
	return nil
}

func (p *Postgres) listen(ctx context.Context, fn func(string, int64)) {
	wait := 50 * time.Millisecond
	for ctx.Err() == nil {
		c, err := pgx.ConnectConfig(ctx, p.pool.cfg)
		if err == nil {
			if _, err = c.Exec(ctx, `LISTEN `+pgFeedChannel); err != nil {
				closeConn(c)
			}
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, time.Second)
			continue
		}
		wait = 50 * time.Millisecond
		fn("", 0) // what was appended while no one listened
		for {
			wctx, cancel := context.WithTimeout(ctx, pgFeedQuiet)
			n, err := c.WaitForNotification(wctx)
			cancel()
			if ctx.Err() != nil {
				closeConn(c)
				return
			}
			if err != nil {
				if c.IsClosed() || !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
					closeConn(c)
					break
				}
				fn("", 0)
				continue
			}
			size, log, ok := strings.Cut(n.Payload, " ")
			if l, perr := strconv.ParseInt(size, 10, 64); ok && perr == nil {
				fn(log, l)
			}
		}
	}
}

var _ Leaser = (*Postgres)(nil)

// Lease implements Leaser: one statement that takes the record of kind
// "lease" when it is missing, expired or already the holder's. The value
// is the holder, a newline and the expiry in Unix milliseconds, by the
// server's clock (hosts' clocks may differ).
func (p *Postgres) Lease(ctx context.Context, key, holder string, ttl time.Duration) error {
	var won bool
	var value []byte
	err := p.conn(ctx, "lease", func(c *pgx.Conn) error {
		err := c.QueryRow(ctx, `WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms),
			ins AS (
				INSERT INTO attune_records (kind, key, value)
				SELECT 'lease', $1, convert_to($2 || E'\n' || (now.ms + $3)::text, 'UTF8') FROM now
				ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value
				WHERE split_part(convert_from(attune_records.value, 'UTF8'), E'\n', 1) = $2
				   OR split_part(convert_from(attune_records.value, 'UTF8'), E'\n', 2)::bigint < (SELECT ms FROM now)
				RETURNING true)
			SELECT EXISTS (SELECT 1 FROM ins), (SELECT value FROM attune_records WHERE kind = 'lease' AND key = $1)`,
			key, holder, ttl.Milliseconds()).Scan(&won, &value)
		return pgErr("lease", err)
	})
	if err != nil || won {
		return err
	}
	h, exp, _ := strings.Cut(string(value), "\n")
	ms, _ := strconv.ParseInt(exp, 10, 64)
	return &LeaseHeldError{Key: key, Holder: h, Expires: time.UnixMilli(ms)}
}
