package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// hook install says which guardrails policies each bot turns on: the
// policies whose tables are present and not enabled = false.
func TestGuardrailsNotes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "attune.toml")
	os.WriteFile(file, []byte(`
[bots.main]
behaviors = ["guardrails"]
ceiling = ["read"]
[bots.main.config.guardrails.secrets]
[bots.main.config.guardrails.protected_paths]
[bots.main.config.guardrails.test_gate]
enabled = false

[bots.bare]
behaviors = ["guardrails"]
ceiling = ["read"]

[bots.other]
behaviors = []
ceiling = ["read"]
`), 0o644)
	got := guardrailsNotes(file)
	want := []string{
		"guardrails (bot bare): no policy on; add [bots.bare.config.guardrails.POLICY] tables",
		"guardrails (bot main): protected_paths, secrets",
	}
	if !slices.Equal(got, want) {
		t.Errorf("guardrailsNotes = %q; want %q", got, want)
	}
	if got := guardrailsNotes(filepath.Join(t.TempDir(), "none.toml")); got != nil {
		t.Errorf("no configuration: %q", got)
	}
}
