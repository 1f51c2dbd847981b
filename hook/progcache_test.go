package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/attune-dev/attune/engine"
)

// TestHookProcessProgramCache: fresh hook processes share the compiled
// programs beside the SQLite store (docs/program-cache.md): the first
// event stores the program under .attune/cache/programs (0700, 0600, named
// by the source's sha256), a later one whose entry was spoiled answers the
// same and writes it again, and ATTUNE_NO_PROGRAM_CACHE=1 writes nothing.
func TestHookProcessProgramCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the key, for the child processes
	const src = "(guard/tool \"claude/Bash\"\n  (lambda (call invoke)\n    (refuse \"no shell here\")))\n"
	sum := sha256.Sum256([]byte(src))
	ev := func(id string) map[string]any {
		return map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": "/w", "tool_name": "Bash",
			"tool_use_id": id, "tool_input": map[string]any{"command": "ls"}}
	}
	denied := func(answer map[string]any) bool {
		b, _ := json.Marshal(answer)
		return strings.Contains(string(b), `"deny"`) && strings.Contains(string(b), "no shell here")
	}
	cfg := benchProject(t, `"g"`, map[string]string{"g.scm": src})
	dir := filepath.Join(filepath.Dir(cfg), ".attune", "cache", "programs")
	if a := runHook(t, cfg, ev("t1")); !denied(a) {
		t.Fatalf("first event: %v", a)
	}
	list, _ := os.ReadDir(dir)
	if len(list) != 1 || !strings.HasPrefix(list[0].Name(), hex.EncodeToString(sum[:])+"-") {
		t.Fatalf("entries in %s: %v", dir, list)
	}
	name := filepath.Join(dir, list[0].Name())
	if runtime.GOOS != "windows" {
		for f, want := range map[string]os.FileMode{dir: 0o700, name: 0o600} {
			if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: %v %v, want mode %04o", f, fi.Mode(), err, want)
			}
		}
	}
	good, _ := os.ReadFile(name)
	os.WriteFile(name, good[:len(good)/3], 0o600)
	if a := runHook(t, cfg, ev("t2")); !denied(a) {
		t.Fatalf("after a truncated entry: %v", a)
	}
	if again, _ := os.ReadFile(name); !bytes.Equal(again, good) {
		t.Fatal("the truncated entry was not written again")
	}
	if a := runHook(t, cfg, ev("t3")); !denied(a) {
		t.Fatalf("from the cache: %v", a)
	}

	t.Setenv(engine.NoProgramCacheEnv, "1")
	cfg = benchProject(t, `"g"`, map[string]string{"g.scm": src})
	if a := runHook(t, cfg, ev("t1")); !denied(a) {
		t.Fatalf("cache off: %v", a)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), ".attune", "cache")); !os.IsNotExist(err) {
		t.Fatalf("cache off, yet %v", err)
	}
}
