package hostreads

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/attune-dev/attune/config"
)

// file/realpath resolves symbolic links (so a policy sees that notes.txt
// is .env), keeps a path that does not exist yet, and is off until enabled.
func TestRealpath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".env"), []byte("K=1"), 0o644)
	if err := os.Symlink(".env", filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "link"))
	h := New(&config.Reads{Keys: map[string]config.ReadLimit{"file/realpath": {}}}, dir)
	ctx := context.Background()
	for arg, want := range map[string]string{
		"notes.txt":        filepath.Join(dir, ".env"),
		"link/new/file.go": filepath.Join(dir, "real", "new", "file.go"),
		dir + "/./real/..": dir,
	} {
		got, err := h.Read(ctx, "file/realpath", arg, true, dir)
		if err != nil || got != want {
			t.Errorf("file/realpath %s = %v, %v; want %s", arg, got, err, want)
		}
	}
	if _, err := New(&config.Reads{}, dir).Read(ctx, "file/realpath", "x", true, dir); err == nil {
		t.Error("file/realpath answered without being enabled")
	}
}
