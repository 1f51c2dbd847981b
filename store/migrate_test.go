package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/attune-dev/attune/store"
)

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
