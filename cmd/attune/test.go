package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"

	"github.com/attune-dev/attune/scenario"
)

// testCmd runs scenario files (R9.3): one line per scenario as it
// finishes, every failure in full, then "N passed, N failed" last. Exit 1
// when any failed (or coverage is below --cover-min), 2 when a file cannot
// be read as a scenario or the flags are wrong. docs/testing.md has every
// flag.
func testCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attune test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jobs := fs.Int("j", 0, "scenarios run at once (default: one per CPU)")
	run := fs.String("run", "", "run only the scenarios whose name or file path matches this regular expression")
	verbose := fs.Bool("v", false, "print every step with its observed outcome")
	failFast := fs.Bool("fail-fast", false, "start no scenario after the first failure")
	junit := fs.String("junit", "", "write a JUnit XML report to this file")
	jsonOut := fs.Bool("json", false, "print one JSON object a line (failed steps, scenarios, coverage, summary) instead of text")
	cover := fs.Bool("cover", false, "report which registrations of each program ran and which never did")
	coverMin := fs.Float64("cover-min", 0, "fail the run when behavior coverage is below this percentage (implies --cover)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: attune test [flags] PATH...\n\nRuns scenario files; a folder means every *.toml below it but attune.toml. Flags may come before or after the paths.")
		fs.PrintDefaults()
	}
	paths, code, ok := parseInterleaved(fs, args)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		fs.Usage()
		return 2
	}
	o := scenario.Options{Jobs: *jobs, Verbose: *verbose, FailFast: *failFast, CoverMin: *coverMin}
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			fmt.Fprintf(stderr, "attune test: --run %q: %v\n", *run, err)
			return 2
		}
		o.Filter = re
	}
	if *coverMin < 0 || *coverMin > 100 {
		fmt.Fprintf(stderr, "attune test: --cover-min %g: want a percentage from 0 to 100\n", *coverMin)
		return 2
	}
	if *cover || *coverMin > 0 {
		o.Cover = scenario.NewCoverage()
	}
	files, err := scenario.Discover(paths)
	if err != nil {
		fmt.Fprintln(stderr, "attune test:", err)
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "attune test: no scenario files (*.toml) under", paths)
		return 2
	}
	if *junit != "" { // a report that cannot be written is said before the run
		if err := writable(*junit); err != nil {
			fmt.Fprintln(stderr, "attune test: --junit:", err)
			return 2
		}
	}
	progressTo := stdout
	if *jsonOut {
		o.JSON = stdout
		progressTo = stderr
	} else {
		o.Out = stdout
	}
	o.Progress = &scenario.Progress{W: progressTo, Live: isTerminal(progressTo)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sum := scenario.RunSuite(ctx, files, o)
	if *junit != "" {
		if err := writeJUnit(*junit, sum); err != nil {
			fmt.Fprintln(stderr, "attune test: --junit:", err)
			return 2
		}
	}
	switch {
	case len(sum.LoadErrors) > 0:
		return 2
	case sum.Failed > 0, sum.CoverageLow, sum.Interrupted:
		return 1
	}
	return 0
}

// writeJUnit writes the report, truncating FILE only once the run is done.
func writeJUnit(file string, sum scenario.Summary) error {
	f, err := createFile(file)
	if err != nil {
		return err
	}
	if err := scenario.WriteJUnit(f, sum); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writable checks that a file can be written (creating the folders above
// it), leaving a file that is there as it is.
func writable(name string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// createFile creates (or truncates) a file a command writes, and the
// folders above it that do not exist yet.
func createFile(name string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	return os.Create(name)
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
