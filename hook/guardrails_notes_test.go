package hook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// `go run ./cmd/attune hook install claude` would write hook commands that
// run go run's temporary build, which is deleted when go run ends: Claude
// Code would then fail every hook as a non-blocking error, the guards off.
// install refuses such a binary and says how to build one.
func TestHookInstallRefusesGoRunBinary(t *testing.T) {
	for _, bin := range []string{"/tmp/go-build2845938837/b001/exe/attune", `C:\Users\u\AppData\Local\Temp\go-build123\b001\exe\attune.exe`} {
		if err := installableBinary(bin); err == nil || !strings.Contains(err.Error(), "go build -o") {
			t.Errorf("%s: %v", bin, err)
		}
	}
	if err := installableBinary("/home/u/go/bin/attune"); err != nil {
		t.Errorf("an installed binary: %v", err)
	}
}
