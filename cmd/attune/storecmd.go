package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

const storeUsage = "usage: attune store migrate [--store URL] [--config FILE]   (creates or upgrades the store's schema; default: the configuration's engine.store)"

// storeCmd is `attune store migrate`: it creates or upgrades the schema of
// the store named by --store or by the configuration's engine.store. For
// PostgreSQL, run it as a role that may create tables; hosts may then use
// a role with only DML rights (docs/team.md).
func storeCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "migrate" {
		fmt.Fprintln(stderr, storeUsage)
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 2
	}
	spec, file := "", config.DefaultFile
	rest := args[1:]
	for len(rest) > 0 {
		a := rest[0]
		var val string
		switch {
		case a == "-h" || a == "--help":
			fmt.Fprintln(stdout, storeUsage)
			return 0
		case (a == "--store" || a == "--config") && len(rest) > 1:
			val, rest = rest[1], rest[2:]
		case strings.HasPrefix(a, "--store="), strings.HasPrefix(a, "--config="):
			a, val, _ = strings.Cut(a, "=")
			rest = rest[1:]
		default:
			fmt.Fprintf(stderr, "attune store migrate: unexpected argument %q\n%s\n", a, storeUsage)
			return 2
		}
		if a == "--store" {
			spec = val
		} else {
			file = val
		}
	}
	dir := "."
	if spec == "" {
		cfg, err := config.Load(file)
		if err != nil {
			fmt.Fprintf(stderr, "attune store migrate: %v\n", err)
			return 1
		}
		spec, dir = cfg.Engine.Store, cfg.Dir
	}
	kind, target, err := config.ParseStore(spec, dir)
	if err != nil {
		fmt.Fprintf(stderr, "attune store migrate: --store: %v\n", err)
		return 2
	}
	ctx := context.Background()
	switch kind {
	case config.StorePostgres:
		from, to, err := store.MigratePostgres(ctx, target)
		if err != nil {
			fmt.Fprintf(stderr, "attune store migrate: %v\n", err)
			return 1
		}
		if from == to {
			fmt.Fprintf(stdout, "store: postgres: schema version %d, up to date\n", to)
		} else {
			fmt.Fprintf(stdout, "store: postgres: schema version %d -> %d\n", from, to)
		}
	case config.StoreSQLite:
		st, err := store.OpenSQLite(ctx, target) // creates and upgrades its schema on open
		if err != nil {
			fmt.Fprintf(stderr, "attune store migrate: %v\n", err)
			return 1
		}
		st.Close()
		fmt.Fprintf(stdout, "store: sqlite: %s is up to date\n", target)
	default:
		fmt.Fprintf(stderr, "attune store migrate: a %s store has no schema to migrate\n", kind)
		return 2
	}
	return 0
}
