package scenario

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: a scenario file that cannot be read is an error with a place,
// never a panic (QA feeds the runner whatever it has).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../tests/engine/*/*.toml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("name = 1\n[[step]]\nop = []\n"))
	f.Add([]byte("[config]\nengine = 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("fuzz.toml", data)
		if err == nil && sc == nil {
			t.Fatal("no scenario and no error")
		}
	})
}
