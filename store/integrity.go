package store

import (
	"context"
	"fmt"
	"strings"
)

// IntegrityCheck runs SQLite's integrity check on the whole file (every
// page, index and constraint) and returns an error listing what it found,
// or nil when the file is sound. `attune check --store` runs it.
func (s *SQLite) IntegrityCheck(ctx context.Context) error {
	failed := func(err error) error {
		return fmt.Errorf("store: %s fails SQLite's integrity check: %w; restore it from a backup", s.path, err)
	}
	rows, err := s.r.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return failed(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return failed(err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return failed(err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("store: %s fails SQLite's integrity check (%d problem(s)): %s; restore it from a backup", s.path, len(problems), strings.Join(problems, "; "))
	}
	return nil
}
