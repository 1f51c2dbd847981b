package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"attune/scenario"
)

// testCmd runs scenario files (SPEC R9.3): one line per scenario as it
// finishes, every failure in full, then "N passed, N failed" last. Exit 1
// when any failed, 2 when a file cannot be read as a scenario.
func testCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attune test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jobs := fs.Int("j", 0, "scenarios run at once (default: one per CPU)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: attune test [-j N] PATH...\n\nRuns scenario files; a folder means every *.toml below it.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	files, err := scenario.Discover(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "attune test:", err)
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "attune test: no scenario files (*.toml) under", fs.Args())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sum := scenario.RunFiles(ctx, stdout, files, *jobs)
	switch {
	case len(sum.LoadErrors) > 0:
		return 2
	case sum.Failed > 0:
		return 1
	}
	return 0
}
