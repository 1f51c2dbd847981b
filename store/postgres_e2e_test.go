//go:build e2e

// The PostgreSQL tests need a real server: they are end-to-end tests, built
// with -tags e2e (the full suite, scripts/test, which starts one with
// .ci/postgres.sh when ATTUNE_TEST_POSTGRES is not set), and they fail,
// never skip, without it.

package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/attune-dev/attune/store"
	"github.com/attune-dev/attune/store/storetest"
)

func TestPostgres(t *testing.T) {
	storetest.Run(t, openPostgres)
}

// postgresURL is the database named by ATTUNE_TEST_POSTGRES, in which each
// test store gets a schema of its own; without it the test fails.
func postgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("ATTUNE_TEST_POSTGRES")
	if u == "" {
		t.Fatal(`ATTUNE_TEST_POSTGRES is not set: the PostgreSQL store's tests need a server; eval "$(bash .ci/postgres.sh)" starts one and sets it (scripts/test does)`)
	}
	return u
}

// postgresSchema creates an empty schema, dropped when the test ends, and
// returns the URL of the test database with that schema as its search_path.
func postgresSchema(t testing.TB) string {
	t.Helper()
	base := postgresURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("ATTUNE_TEST_POSTGRES: %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "attune_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping the test schema: %v", err)
		}
		conn.Close(ctx)
	})
	if strings.Contains(base, "://") {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return base + " search_path=" + schema
}

func openPostgres(t *testing.T) store.Store {
	s, err := store.OpenPostgres(context.Background(), postgresSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOpenPostgres(t *testing.T) {
	u := postgresSchema(t)
	s, err := store.Open(t.Context(), "postgres", u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*store.Postgres); !ok {
		t.Fatalf("Open(postgres) = %T", s)
	}
}

// R5.5 across hosts: stores opened separately on one database (as two hosts
// would) serialize their appends, and create the schema together safely.
func TestPostgresTwoHosts(t *testing.T) {
	u := postgresSchema(t)
	stores := make([]store.Store, 4)
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = store.OpenPostgres(context.Background(), u) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("host %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	raceHosts(t, stores)
}

// The pool honours pool_max_conns: one connection serves many goroutines.
func TestPostgresPoolSize(t *testing.T) {
	u := postgresSchema(t)
	sep := "&"
	if !strings.Contains(u, "?") {
		sep = "?"
	}
	if !strings.Contains(u, "://") {
		sep = " "
	}
	if _, err := store.OpenPostgres(t.Context(), u+sep+"pool_max_conns=zero"); err == nil {
		t.Fatal("pool_max_conns=zero was accepted")
	}
	s, err := store.OpenPostgres(t.Context(), u+sep+"pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			for range 10 {
				if _, err := s.Append(t.Context(), "l", store.Any, [][]byte{[]byte("x")}, nil); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Length(t.Context(), "l"); err != nil || n != 80 {
		t.Fatalf("Length = %d, %v; want 80", n, err)
	}
}

// A store that cannot be reached fails at open, naming the problem.
func TestPostgresUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := store.OpenPostgres(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err == nil || !strings.HasPrefix(err.Error(), "store: postgres: ") {
		t.Fatalf("OpenPostgres of a closed port: %v", err)
	}
}
func BenchmarkAppendPostgres(b *testing.B) {
	s, err := store.OpenPostgres(context.Background(), postgresSchema(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchAppend(b, s)
}

// Writers of one log queue at its gate across hosts (two stores on one
// database); the gate of another log is free; a released gate lets the
// next one in.
func TestPostgresGate(t *testing.T) {
	url := postgresSchema(t)
	ctx := context.Background()
	var gs []store.Gater
	for range 2 {
		st, err := store.OpenPostgres(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		gs = append(gs, st)
	}
	release, err := gs[0].Gate(ctx, "owner/project/p/ledger")
	if err != nil {
		t.Fatal(err)
	}
	other, err := gs[1].Gate(ctx, "owner/project/p/other")
	if err != nil {
		t.Fatal(err)
	}
	other()
	got := make(chan func(), 1)
	go func() {
		r, err := gs[1].Gate(ctx, "owner/project/p/ledger")
		if err != nil {
			t.Error(err)
			r = func() {}
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("a second host passed a held gate")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	select {
	case r := <-got:
		r()
	case <-time.After(10 * time.Second):
		t.Fatal("the gate was not let go")
	}
}

// A lease is one holder's until it expires; its holder renews it; a
// second store handle (another host) is refused with the holder named.
func TestPostgresLease(t *testing.T) {
	u := postgresSchema(t)
	ctx := context.Background()
	a, err := store.OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const ttl = 400 * time.Millisecond
	if err := a.Lease(ctx, "instance/x", "m1", ttl); err != nil {
		t.Fatal(err)
	}
	err = b.Lease(ctx, "instance/x", "m2", ttl)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || !errors.Is(err, store.ErrLeaseHeld) || held.Holder != "m1" || held.Key != "instance/x" ||
		held.Expires.Before(time.Now().Add(-time.Minute)) {
		t.Fatalf("m2 while m1 holds it: %v", err)
	}
	if err := b.Lease(ctx, "instance/y", "m2", ttl); err != nil {
		t.Fatalf("another key: %v", err)
	}
	for range 3 { // renewed by its holder, from any handle
		time.Sleep(ttl / 2)
		if err := b.Lease(ctx, "instance/x", "m1", ttl); err != nil {
			t.Fatalf("renewal: %v", err)
		}
	}
	if err := b.Lease(ctx, "instance/x", "m2", ttl); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("m2 after renewals: %v", err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	if err := b.Lease(ctx, "instance/x", "m2", ttl); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if err := a.Lease(ctx, "instance/x", "m1", ttl); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("m1 after m2 took it: %v", err)
	}
}

// `attune store migrate` (MigratePostgres) creates the schema; a role with
// only DML rights then opens the store and uses it, and on a database with
// no schema it is told to run the migration instead of failing on CREATE.
func TestPostgresMigrateThenDMLRole(t *testing.T) {
	ctx := context.Background()
	target := postgresSchema(t)
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	conn, err := pgx.Connect(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var b [4]byte
	rand.Read(b[:])
	role := "attune_dml_" + hex.EncodeToString(b[:])
	for _, q := range []string{"CREATE ROLE " + role + " LOGIN", "GRANT USAGE ON SCHEMA " + schema + " TO " + role} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		conn.Exec(context.Background(), "DROP OWNED BY "+role)
		conn.Exec(context.Background(), "DROP ROLE "+role)
	})
	asRole := *u
	asRole.User = url.User(role)
	dml := asRole.String()
	// no schema yet, no right to create it: told what to do
	if _, err := store.OpenPostgres(ctx, dml); err == nil || !strings.Contains(err.Error(), "run `attune store migrate") {
		t.Fatalf("open as the DML role on an empty database: %v", err)
	}
	from, to, err := store.MigratePostgres(ctx, target)
	if err != nil || from != 0 || to != 1 {
		t.Fatalf("migrate: %d -> %d, %v", from, to, err)
	}
	if from, to, err := store.MigratePostgres(ctx, target); err != nil || from != 1 || to != 1 {
		t.Fatalf("migrate again: %d -> %d, %v", from, to, err)
	}
	if _, err := conn.Exec(ctx, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "+schema+" TO "+role); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenPostgres(ctx, dml)
	if err != nil {
		t.Fatalf("open as the DML role: %v", err)
	}
	defer st.Close()
	if _, err := st.Append(ctx, "l", 0, [][]byte{[]byte("a")}, &store.CallRecord{ID: "c", Input: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	// a schema newer than this attune's is refused
	if _, err := conn.Exec(ctx, "UPDATE attune_meta SET value = '99' WHERE name = 'schema_version'"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenPostgres(ctx, target); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Fatalf("newer schema: %v", err)
	}
}
