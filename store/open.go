package store

import (
	"context"
	"fmt"
)

// Open opens a store of one kind:
//
//   - "memory": a new Memory store; target is ignored.
//   - "sqlite": the SQLite file at target (see OpenSQLite).
//   - "postgres": the PostgreSQL database at the URL target (see OpenPostgres).
func Open(ctx context.Context, kind, target string) (Store, error) {
	switch kind {
	case "memory":
		return NewMemory(), nil
	case "sqlite":
		return OpenSQLite(ctx, target)
	case "postgres":
		return OpenPostgres(ctx, target)
	}
	return nil, fmt.Errorf("store: unknown store kind %q (want memory, sqlite or postgres)", kind)
}
