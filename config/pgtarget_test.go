package config

import (
	"strings"
	"testing"
)

// [engine] pool_max_conns, connect_timeout and statement_timeout reach a
// postgres store's URL, which wins where it sets them; bad values are
// errors at their key.
func TestPostgresSettings(t *testing.T) {
	cfg, err := Parse("attune.toml", []byte("[engine]\npool_max_conns = 8\nconnect_timeout = \"5s\"\nstatement_timeout = \"30s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Engine.PostgresTarget("postgres://u@db/attune?sslmode=require&connect_timeout=2")
	for _, want := range []string{"pool_max_conns=8", "connect_timeout=2", "statement_timeout=30000", "sslmode=require"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
	if got := cfg.Engine.PostgresTarget("/tmp/x.db"); got != "/tmp/x.db" {
		t.Errorf("a sqlite target changed: %s", got)
	}
	for _, bad := range []string{"pool_max_conns = 0", "pool_max_conns = \"8\"", "connect_timeout = 5", "statement_timeout = \"-1s\""} {
		if _, err := Parse("attune.toml", []byte("[engine]\n"+bad+"\n")); err == nil || !strings.Contains(err.Error(), "engine."+strings.Fields(bad)[0]) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
