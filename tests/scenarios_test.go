// Package tests runs the project's scenarios: every *.toml below this
// folder is one subtest (docs/scenarios.md). A scenario with fails_with must fail
// the way it says (tests/scenario-selftest proves the matcher catches
// mismatches).
package tests

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/scenario"
)

func TestScenarios(t *testing.T) {
	files, err := scenario.Discover([]string{"."})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenario files under tests/")
	}
	names := map[string]string{}
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if prev, dup := names[sc.Name]; dup {
			t.Errorf("%s: scenario name %q is also the name of %s", file, sc.Name, prev)
			continue
		}
		names[sc.Name] = file
		if strings.HasPrefix(filepath.ToSlash(file), "engine/") && len(sc.Rules) == 0 {
			t.Errorf("%s: a scenario under tests/engine names the spec rules it exercises (rules = [...])", file)
		}
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res := scenario.Run(ctx, sc)
			if !res.Passed {
				t.Errorf("%s\n%s", file, res.Failure)
			}
		})
	}
}
