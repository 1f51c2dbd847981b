package scenario

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/attune-dev/attune/config"
)

// Discover lists the scenario files named by paths: a file as given, a
// folder as every *.toml below it (sorted) but the configuration files
// (attune.toml) it holds, so a project folder tests as its scenarios. A
// path that does not exist is an error.
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
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".toml") && d.Name() != config.DefaultFile {
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
	// Unreadable are those files, in file order, with their errors.
	Unreadable []Unreadable
	Passed     int
	Failed     int // failed scenarios and files that could not be loaded
	// Skipped counts scenarios --fail-fast or an interruption never started.
	Skipped int
	// Interrupted is set when the run's ctx ended before it did (Ctrl-C):
	// it started no scenario after that.
	Interrupted bool
	// Filtered counts scenarios --run left out.
	Filtered int
	// CoverageLow is set when the coverage is below Options.CoverMin.
	CoverageLow bool
	Duration    time.Duration
}

// Unreadable is a file that cannot be read as a scenario.
type Unreadable struct {
	File string
	Err  error
}

// Options tune a suite run. The zero value runs everything one per CPU and
// writes nothing.
type Options struct {
	// Jobs is how many scenarios run at once (<= 0: one per CPU).
	Jobs int
	// Filter, when set, keeps the scenarios whose name or file path it
	// matches (--run). Files that cannot be read are always kept.
	Filter *regexp.Regexp
	// Out receives the human report: a line per scenario as it finishes,
	// every failure in full, "N passed, N failed" last. nil: none.
	Out io.Writer
	// Verbose adds every step with its observed outcome (-v) to Out.
	Verbose bool
	// FailFast starts no scenario after the first failure; those running
	// finish (--fail-fast).
	FailFast bool
	// JSON receives one JSON object a line: each failed step, each
	// scenario, the coverage when counted, and a summary last (--json).
	JSON io.Writer
	// Progress shows done/total, failures and elapsed time as scenarios
	// finish; nil: none.
	Progress *Progress
	// Cover, when set, counts behavior coverage across the run (--cover).
	Cover *Coverage
	// CoverMin, when above 0, fails the run when Cover's percentage is
	// below it (--cover-min).
	CoverMin float64
}

// RunFiles loads and runs scenario files, jobs at a time (<= 0: one per
// CPU), and writes a progress line to w as each scenario finishes
// ("ok   NAME (1.2s)" or "FAIL NAME (0.3s)"), then every failure in full,
// then "N passed, N failed" alone on the last line.
func RunFiles(ctx context.Context, w io.Writer, files []string, jobs int) Summary {
	return RunSuite(ctx, files, Options{Jobs: jobs, Out: w})
}

// RunSuite loads and runs scenario files as Options say.
func RunSuite(ctx context.Context, files []string, o Options) Summary {
	start := time.Now()
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	var sum Summary
	type item struct {
		file string
		sc   *Scenario
		err  error
	}
	var items []item
	names := map[string]string{}
	for _, f := range files {
		it := item{file: f}
		it.sc, it.err = Load(f)
		if sc := it.sc; sc != nil {
			if o.Filter != nil && !o.Filter.MatchString(sc.Name) && !o.Filter.MatchString(filepath.ToSlash(f)) {
				sum.Filtered++
				continue
			}
			if prev, dup := names[sc.Name]; dup {
				it.sc, it.err = nil, &LoadError{File: f, Key: "name", Msg: fmt.Sprintf("%q is also the name of %s; scenario names are unique", sc.Name, prev)}
			} else {
				names[sc.Name] = f
			}
		}
		items = append(items, it)
	}
	total := len(items)
	results := make([]*Result, len(items))
	var mu sync.Mutex // out, JSON, progress and the counters below
	done, failed := 0, 0
	stop := false
	prog := o.Progress
	if prog != nil {
		prog.start(total, start)
	}
	finish := func(lines string, ok bool) {
		done++
		if !ok {
			failed++
			if o.FailFast {
				stop = true
			}
		}
		if prog != nil {
			prog.clear()
		}
		fmt.Fprint(out, lines)
		if prog != nil {
			prog.update(done, failed)
		}
	}
	ticking := make(chan struct{})
	if prog != nil && prog.Live {
		go func() {
			t := time.NewTicker(prog.tickEvery())
			defer t.Stop()
			for {
				select {
				case <-ticking:
					return
				case <-t.C:
					mu.Lock()
					select {
					case <-ticking: // the run ended while this tick waited
					default:
						prog.tick()
					}
					mu.Unlock()
				}
			}
		}()
	}
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	started := make([]bool, len(items))
	for i, it := range items {
		mu.Lock()
		halt := stop || ctx.Err() != nil
		mu.Unlock()
		if halt {
			break
		}
		if it.err != nil {
			started[i] = true
			mu.Lock()
			writeJSON(o.JSON, unreadableRecord(it.file, it.err))
			finish(fmt.Sprintf("FAIL %s (cannot be read as a scenario)\n", it.file), false)
			mu.Unlock()
			continue
		}
		sem <- struct{}{}
		mu.Lock()
		halt = stop || ctx.Err() != nil
		mu.Unlock()
		if halt {
			<-sem
			break
		}
		started[i] = true
		wg.Add(1)
		go func(i int, sc *Scenario) {
			defer wg.Done()
			defer func() { <-sem }()
			res := RunWith(ctx, sc, RunOptions{Trace: o.Verbose, Cover: o.Cover})
			var b strings.Builder
			if o.Verbose {
				writeTrace(&b, res)
			}
			b.WriteString(ProgressLine(res))
			b.WriteByte('\n')
			mu.Lock()
			results[i] = &res
			if res.Fail != nil && !res.Passed {
				writeJSON(o.JSON, stepRecord(res))
			}
			writeJSON(o.JSON, scenarioRecord(res))
			finish(b.String(), res.Passed)
			mu.Unlock()
		}(i, it.sc)
	}
	wg.Wait()
	mu.Lock()
	close(ticking)
	if prog != nil {
		prog.clear()
	}
	mu.Unlock()
	var failures []string
	for i, it := range items {
		switch {
		case !started[i]:
			sum.Skipped++
		case it.err != nil:
			sum.LoadErrors = append(sum.LoadErrors, it.err)
			sum.Unreadable = append(sum.Unreadable, Unreadable{File: it.file, Err: it.err})
			sum.Failed++
			failures = append(failures, fmt.Sprintf("--- FAIL: %s (cannot be read as a scenario)\n%s", it.file, indent(it.err.Error())))
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
	sum.Duration = time.Since(start)
	sum.Interrupted = ctx.Err() != nil
	if len(failures) > 0 {
		fmt.Fprintln(out)
		for _, f := range failures {
			fmt.Fprintln(out, f)
		}
	}
	if o.Cover != nil {
		o.Cover.WriteReport(out)
		writeJSON(o.JSON, coverageRecord(o.Cover))
		if pct := o.Cover.Percent(); o.CoverMin > 0 && pct < o.CoverMin {
			sum.CoverageLow = true
			fmt.Fprintf(out, "FAIL coverage %.1f%% is below --cover-min %g%%\n", pct, o.CoverMin)
		}
	}
	switch {
	case sum.Interrupted:
		fmt.Fprintf(out, "interrupted: %d scenario(s) not run\n", sum.Skipped)
	case sum.Skipped > 0:
		fmt.Fprintf(out, "--fail-fast: %d scenario(s) not run\n", sum.Skipped)
	}
	writeJSON(o.JSON, summaryRecord(sum))
	fmt.Fprintf(out, "%d passed, %d failed\n", sum.Passed, sum.Failed)
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

// writeTrace writes every step of a run with its observed outcome (-v).
func writeTrace(b *strings.Builder, r Result) {
	fmt.Fprintf(b, "=== RUN  %s (%s)\n", r.Name, r.File)
	for _, t := range r.Trace {
		fmt.Fprintf(b, "    %s:%d: step %d (%s): %s\n", r.File, t.Line, t.Index, t.Label, t.Observed)
		for _, p := range t.Printed {
			fmt.Fprintf(b, "        %s\n", strings.ReplaceAll(p, "\n", "\n        "))
		}
	}
	if !r.Passed && r.Failure != "" {
		b.WriteString(indent(r.Failure))
		b.WriteByte('\n')
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
