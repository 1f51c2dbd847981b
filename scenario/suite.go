package scenario

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// Discover lists the scenario files named by paths: a file as given, a
// folder as every *.toml below it (sorted). A path that does not exist is
// an error.
func Discover(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			add(p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".toml") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		for _, f := range found {
			add(f)
		}
	}
	return out, nil
}

// Summary is the outcome of a suite run.
type Summary struct {
	Results    []Result // in file order; a file that could not be loaded has none
	LoadErrors []error  // files that cannot be read as scenarios
	Passed     int
	Failed     int // failed scenarios and files that could not be loaded
}

// RunFiles loads and runs scenario files, jobs at a time (<= 0: one per
// CPU), and writes a progress line to w as each scenario finishes
// ("ok   NAME (1.2s)" or "FAIL NAME (0.3s)"), then every failure in full,
// then "N passed, N failed" alone on the last line.
func RunFiles(ctx context.Context, w io.Writer, files []string, jobs int) Summary {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	var sum Summary
	type item struct {
		sc  *Scenario
		err error
	}
	items := make([]item, len(files))
	names := map[string]string{}
	for i, f := range files {
		items[i].sc, items[i].err = Load(f)
		if sc := items[i].sc; sc != nil {
			if prev, dup := names[sc.Name]; dup {
				items[i].sc, items[i].err = nil, &LoadError{File: f, Key: "name", Msg: fmt.Sprintf("%q is also the name of %s; scenario names are unique", sc.Name, prev)}
				continue
			}
			names[sc.Name] = f
		}
	}
	results := make([]*Result, len(files))
	var mu sync.Mutex
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, it := range items {
		if it.err != nil {
			mu.Lock()
			fmt.Fprintf(w, "FAIL %s (cannot be read as a scenario)\n", files[i])
			mu.Unlock()
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, sc *Scenario) {
			defer wg.Done()
			defer func() { <-sem }()
			res := Run(ctx, sc)
			mu.Lock()
			results[i] = &res
			fmt.Fprintln(w, ProgressLine(res))
			mu.Unlock()
		}(i, it.sc)
	}
	wg.Wait()
	var failures []string
	for i, it := range items {
		switch {
		case it.err != nil:
			sum.LoadErrors = append(sum.LoadErrors, it.err)
			sum.Failed++
			failures = append(failures, fmt.Sprintf("--- FAIL: %s (cannot be read as a scenario)\n%s", files[i], indent(it.err.Error())))
		case results[i] != nil:
			res := *results[i]
			sum.Results = append(sum.Results, res)
			if res.Passed {
				sum.Passed++
				continue
			}
			sum.Failed++
			failures = append(failures, fmt.Sprintf("--- FAIL: %s (%s)\n%s", res.Name, res.File, indent(res.Failure)))
		}
	}
	if len(failures) > 0 {
		fmt.Fprintln(w)
		for _, f := range failures {
			fmt.Fprintln(w, f)
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", sum.Passed, sum.Failed)
	return sum
}

// ProgressLine is the line attune test prints when a scenario finishes.
func ProgressLine(r Result) string {
	word := "ok  "
	if !r.Passed {
		word = "FAIL"
	}
	return fmt.Sprintf("%s %s (%s)", word, r.Name, r.Duration.Round(time.Millisecond))
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
