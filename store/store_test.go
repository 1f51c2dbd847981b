package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/attune-dev/attune/store"
	"github.com/attune-dev/attune/store/storetest"
)

// R5.10: one conformance suite, every store.

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemory() })
}

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openSQLite(t, sqlitePath(t)) })
}

func sqlitePath(t testing.TB) string {
	return filepath.Join(t.TempDir(), ".attune", "state.db")
}

func openSQLite(t testing.TB, path string) *store.SQLite {
	t.Helper()
	s, err := store.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOpen(t *testing.T) {
	ctx := t.Context()
	m, err := store.Open(ctx, "memory", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*store.Memory); !ok {
		t.Fatalf("Open(memory) = %T", m)
	}
	m.Close()

	path := sqlitePath(t)
	s, err := store.Open(ctx, "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if sq, ok := s.(*store.SQLite); !ok || sq.Path() != path {
		t.Fatalf("Open(sqlite) = %T %v", s, s)
	}
	s.Close()

	if _, err := store.Open(ctx, "mysql", "x"); err == nil || !strings.Contains(err.Error(), `unknown store kind "mysql"`) {
		t.Fatalf("Open(mysql) = %v, want an unknown-kind error", err)
	}
	if _, err := store.Open(ctx, "sqlite", ""); err == nil {
		t.Fatal(`Open(sqlite, "") succeeded`)
	}
	if _, err := store.Open(ctx, "postgres", "postgres://%zz"); err == nil {
		t.Fatal("Open(postgres) of a malformed URL succeeded")
	}
}

// R5.5 across processes: SQLite stores opened separately on one file.
func TestSQLiteTwoHandles(t *testing.T) {
	path := sqlitePath(t)
	stores := make([]store.Store, 3)
	for i := range stores {
		stores[i] = openSQLite(t, path)
		defer stores[i].Close()
	}
	raceHosts(t, stores)
}

// raceHosts has 4 appenders per store race at the same expected length.
func raceHosts(t *testing.T, stores []store.Store) {
	t.Helper()
	const perStore = 4
	for round := range 4 {
		var wg sync.WaitGroup
		errs := make([]error, len(stores)*perStore)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = stores[i%len(stores)].Append(context.Background(), "owner/project/p/shared", int64(round),
					[][]byte{fmt.Appendf(nil, "%d", i)}, &store.CallRecord{ID: fmt.Sprintf("r%d-%d", round, i)})
			})
		}
		wg.Wait()
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrStale):
				t.Fatalf("round %d, appender %d: %v", round, i, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d appenders won, want 1", round, wins)
		}
		for _, s := range stores {
			if n, err := s.Length(context.Background(), "owner/project/p/shared"); err != nil || n != int64(round+1) {
				t.Fatalf("round %d: Length = %d, %v; want %d", round, n, err, round+1)
			}
		}
	}
}
