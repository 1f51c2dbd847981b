package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/harness"
	"github.com/attune-dev/attune/session"
)

const mainBot = `
[bots.main]
behaviors = ["p"]
ceiling = ["read", "write", "exec"]
`

func decision(m map[string]any) (string, string) {
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	d, _ := hs["permissionDecision"].(string)
	r, _ := hs["permissionDecisionReason"].(string)
	return d, r
}

// captured is an event the real CLI sent (testdata/captured/FILE), with
// the top-level fields of set replaced, as JSON.
func captured(t testing.TB, file string, set map[string]any) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "captured", file))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for k, v := range set {
		ev[k] = v
	}
	out, _ := json.Marshal(ev)
	return string(out)
}

// reachFile is the reach file of an instance in the lock folder dir
// (harness/quick.go).
func reachFile(dir, instance string) string {
	sum := sha256.Sum256([]byte(instance))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".reach")
}

// journalOf reads the journal of Claude Code session sess's main instance
// as the store of the configuration at cfgPath keeps it, after the hook
// processes have exited.
func journalOf(t *testing.T, cfgPath, sess string) []session.Entry {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	r, err := harness.New(context.Background(), cfg, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inst, err := r.Engine().Start(context.Background(), engine.StartOptions{ID: "claude/" + sess})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop()
	entries, err := session.OpenJournal(r.Engine().Store(), inst.Session(), inst.ID()).Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
