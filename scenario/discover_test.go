package scenario

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A folder's scenarios are its *.toml files but its configuration files
// (attune.toml): a project folder tests as its scenarios. A configuration
// named as a file is still read (and reported if it is no scenario).
func TestDiscoverSkipsConfiguration(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"attune.toml", "tests/a.toml", "tests/sub/attune.toml", "b.toml", "notes.txt"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Discover([]string{dir, filepath.Join(dir, "attune.toml")})
	want := []string{filepath.Join(dir, "b.toml"), filepath.Join(dir, "tests", "a.toml"), filepath.Join(dir, "attune.toml")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Discover = %v, %v; want %v", got, err, want)
	}
}
