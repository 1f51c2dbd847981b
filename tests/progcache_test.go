package tests

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/attune-dev/attune/scenario"
)

// TestScenariosFromProgramCache: every scenario under tests/ passes when
// its programs come from the program cache. The scenarios run twice with
// a fresh cache: the first run compiles their programs from source and
// stores them, the second runs every program from the stored protos (no
// entry is written again, none is added), with the same results.
func TestScenariosFromProgramCache(t *testing.T) {
	if os.Getenv("ATTUNE_NO_PROGRAM_CACHE") != "" {
		t.Fatal("ATTUNE_NO_PROGRAM_CACHE is set: this test needs the program cache")
	}
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home) // memory stores keep their programs here
	dir := filepath.Join(home, "attune", "programs")
	files, err := scenario.Discover([]string{"."})
	if err != nil {
		t.Fatal(err)
	}
	var scs []*scenario.Scenario
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			t.Fatalf("%v", err)
		}
		scs = append(scs, sc)
	}
	runAll := func(pass string) {
		t.Run(pass, func(t *testing.T) {
			for k, sc := range scs {
				t.Run(sc.Name, func(t *testing.T) {
					t.Parallel()
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					if res := scenario.Run(ctx, sc); !res.Passed {
						t.Errorf("%s\n%s", files[k], res.Failure)
					}
				})
			}
		})
	}
	stat := func() map[string]os.FileInfo {
		out := map[string]os.FileInfo{}
		list, _ := os.ReadDir(dir)
		for _, e := range list {
			if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
				out[e.Name()] = fi
			}
		}
		return out
	}
	runAll("from-source")
	made := stat()
	if len(made) < 50 {
		t.Fatalf("%d programs cached in %s after the first run", len(made), dir)
	}
	runAll("from-cache")
	after := stat()
	for name, fi := range after {
		if was, ok := made[name]; !ok {
			t.Errorf("entry %s added by the second run: a program was compiled again", name)
		} else if !os.SameFile(fi, was) {
			t.Errorf("entry %s written again by the second run", name)
		}
	}
	if len(after) != len(made) {
		t.Errorf("%d entries after the second run, %d after the first", len(after), len(made))
	}
}
