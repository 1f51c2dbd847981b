package store

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The writer runs with the settings durability rests on (R5.10).
func TestSQLiteSettings(t *testing.T) {
	ctx := t.Context()
	s, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "2"}, // FULL
		{"busy_timeout", "30000"},
		{"application_id", strconv.Itoa(sqliteApplicationID)},
		{"user_version", "1"},
	} {
		var got string
		if err := s.w.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("writer PRAGMA %s = %s, want %s", tc.pragma, got, tc.want)
		}
	}
	var qo string
	if err := s.r.QueryRowContext(ctx, "PRAGMA query_only").Scan(&qo); err != nil || qo != "1" {
		t.Errorf("reader PRAGMA query_only = %s, %v; want 1", qo, err)
	}
	// The length of a log is one descent of the primary key, not a scan.
	rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN SELECT coalesce(max(seq), 0) FROM logs WHERE log = ?", "l")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); !strings.Contains(p, "SEARCH logs USING COVERING INDEX") {
		t.Errorf("Length's query plan: %s", p)
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct {
		prefix, end string
		ok          bool
	}{
		{"", "", false},
		{"a", "b", true},
		{"p/", "p0", true},
		{"a\xff", "b", true},
		{"\xff\xff", "", false},
		{"é", "\xc3\xaa", true},
	} {
		end, ok := prefixEnd(tc.prefix)
		if end != tc.end || ok != tc.ok {
			t.Errorf("prefixEnd(%q) = %q, %v; want %q, %v", tc.prefix, end, ok, tc.end, tc.ok)
		}
	}
}
