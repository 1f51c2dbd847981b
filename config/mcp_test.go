package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// [harness.mcp]: defaults, values, effects by exact path or the longest
// pattern, and errors with the line and the key path.
func TestHarnessMCP(t *testing.T) {
	cfg, err := Parse("attune.toml", []byte("[engine]\nstore = 'memory:'\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.MCP; m.CallTimeout != DefaultMCPCallTimeout || m.StartTimeout != DefaultMCPStartTimeout || m.MaxMessage != DefaultMCPMaxMessage || m.JournalDelay != DefaultMCPJournalDelay || len(m.Tools) != 0 {
		t.Errorf("defaults: %+v", m)
	}
	cfg, err = Parse("attune.toml", []byte(`
[harness.mcp]
call_timeout = "250ms"
start_timeout = "2m"
max_message = 1024
journal_delay = "0s"
[harness.mcp.tools]
"mcp/fs/write_file" = ["write"]
"mcp/fs/*" = ["read"]
"mcp/**" = ["net"]
`))
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.MCP
	if m.CallTimeout != 250*time.Millisecond || m.StartTimeout != 2*time.Minute || m.MaxMessage != 1024 || m.JournalDelay != 0 {
		t.Errorf("values: %+v", m)
	}
	for path, want := range map[string][]string{
		"mcp/fs/write_file": {"write"},
		"mcp/fs/read_file":  {"read"},
		"mcp/ev/echo":       {"net"},
		"other/x":           nil,
	} {
		if got := m.Effects(path); !slices.Equal(got, want) {
			t.Errorf("Effects(%s) = %v, want %v", path, got, want)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"[harness.mcp]\ncall_timeout = 30\n", `attune.toml:2: harness.mcp.call_timeout: want a duration like "30s", got integer 30`},
		{"[harness.mcp]\ncall_timeout = '-1s'\n", `attune.toml:2: harness.mcp.call_timeout: want a duration > 0, got "-1s"`},
		{"[harness.mcp]\nstart_timeout = true\n", `attune.toml:2: harness.mcp.start_timeout: want a duration like "30s", got boolean true`},
		{"[harness.mcp]\nmax_message = 0\n", `attune.toml:2: harness.mcp.max_message: want a number of bytes between 1 and 1073741824, got 0`},
		{"[harness.mcp]\njournal_delay = 5\n", `attune.toml:2: harness.mcp.journal_delay: want a duration like "10ms" (or "0s": at once), got integer 5`},
		{"[harness.mcp]\njournal_delay = '1m'\n", `attune.toml:2: harness.mcp.journal_delay: want a duration between "0s" and "10s", got "1m"`},
		{"[harness.mcp]\ncall_timout = '1s'\n", `attune.toml:2: harness.mcp.call_timout: unknown key; did you mean "call_timeout"?`},
		{"[harness.mcp.tools]\n'mcp/*/x' = ['read']\n", `attune.toml:2: harness.mcp.tools."mcp/*/x": pattern "mcp/*/x": a * may only end a pattern, as /* or /**`},
		{"[harness.mcp.tools]\n'mcp/fs/x' = 'read'\n", `attune.toml:2: harness.mcp.tools."mcp/fs/x": want a list of strings, got string`},
		{"[harness]\nmpc = {}\n", `attune.toml:2: harness.mpc: unknown key; did you mean "mcp"?`},
	} {
		_, err := Parse("attune.toml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s", c.src, err, c.want)
		}
	}
}
