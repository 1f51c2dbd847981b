package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// R9.2: attune run drives a demo session on the embedded SQLite store; a
// second run continues from the stored pins and state and says so.
func TestRunDemoTwice(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"attune.toml", "demo.toml", "pack/scribe.scm"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "attune.toml")
	var out1, out2, errs bytes.Buffer
	if code := dispatch([]string{"run", cfg}, &out1, &errs); code != 0 {
		t.Fatalf("first run: exit %d: %s\n%s", code, errs.String(), out1.String())
	}
	first := out1.String()
	for _, want := range []string{"started demo-main", "refused by ceiling", "refused by guard: scribe: a memory needs a citation", "a behavior's guard (scribe.scm:", "the tool never ran", "[activating] Goal:", "Recalled: Deploys", "tasks.stamp (host authority) → ok", "final states"} {
		if !strings.Contains(first, want) {
			t.Errorf("first run lacks %q:\n%s", want, first)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".attune", "state.db")); err != nil {
		t.Fatalf("no SQLite store: %v", err)
	}
	if code := dispatch([]string{"run", cfg}, &out2, &errs); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errs.String())
	}
	second := out2.String()
	if !strings.Contains(second, "continuing demo-main") || !strings.Contains(second, "1 turns so far") || !strings.Contains(second, "turn 2 begins") {
		t.Errorf("second run does not continue:\n%s", second)
	}
	var js bytes.Buffer
	if code := dispatch([]string{"run", cfg, "--json"}, &js, &errs); code != 0 {
		t.Fatalf("json run: exit %d: %s", code, errs.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		if !strings.HasPrefix(line, "{") || !strings.Contains(line, `"event"`) {
			t.Fatalf("not a JSON event line: %s", line)
		}
	}
}
