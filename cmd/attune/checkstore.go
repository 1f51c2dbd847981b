package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

// storeFlag takes --store out of args.
func storeFlag(args []string) ([]string, bool) {
	out, on := args[:0:0], false
	for _, a := range args {
		if a == "--store" {
			on = true
			continue
		}
		out = append(out, a)
	}
	return out, on
}

// checkStoreFile runs SQLite's integrity check on the configured store
// (attune check --store). A store file that does not exist yet is not a
// problem; a store that is not SQLite is said to be skipped.
func checkStoreFile(cfg *config.Config, stdout io.Writer) []error {
	kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir)
	if err != nil {
		return []error{cfg.Errorf("engine.store", "%v", err)}
	}
	if kind != config.StoreSQLite {
		fmt.Fprintf(stdout, "%s: store: the integrity check is for SQLite stores; %s skipped\n", cfg.File, kind)
		return nil
	}
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "%s: store: %s does not exist yet\n", cfg.File, target)
		return nil
	}
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, target)
	if err != nil {
		return []error{err}
	}
	defer s.Close()
	if err := s.IntegrityCheck(ctx); err != nil {
		return []error{err}
	}
	fmt.Fprintf(stdout, "%s: store: %s passes SQLite's integrity check\n", cfg.File, target)
	return nil
}
