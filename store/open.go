package store

import (
	"context"
	"fmt"
	"strings"
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

// ParseSpec reads a store setting (engine.store) into the kind and target
// that Open takes:
//
//	memory: or memory               → "memory", ""
//	postgres://… or postgresql://…  → "postgres", the whole URL
//	sqlite:PATH                     → "sqlite", PATH
//	anything else                   → "sqlite", the setting as a path
func ParseSpec(spec string) (kind, target string) {
	switch {
	case spec == "memory" || spec == "memory:":
		return "memory", ""
	case strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://"):
		return "postgres", spec
	case strings.HasPrefix(spec, "sqlite:"):
		return "sqlite", strings.TrimPrefix(spec, "sqlite:")
	}
	return "sqlite", spec
}
