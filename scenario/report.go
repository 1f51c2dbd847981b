package scenario

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The records of --json, one a line. Field "type" says which.

// StepRecord is a failed step.
type StepRecord struct {
	Type     string           `json:"type"` // "step"
	Scenario string           `json:"scenario"`
	File     string           `json:"file"`
	Line     int              `json:"line"` // the [[step]] header
	Step     int              `json:"step"`
	Op       string           `json:"op"`
	Failures []MismatchRecord `json:"failures"`
}

// MismatchRecord is one expectation of a failed step.
type MismatchRecord struct {
	Key      string   `json:"key"`
	Line     int      `json:"line"` // the expect key
	Want     string   `json:"want"`
	Got      string   `json:"got"`
	Expected any      `json:"expected,omitempty"` // plain data (result, state)
	Observed any      `json:"observed,omitempty"`
	Diff     []string `json:"diff,omitempty"`
}

// ScenarioRecord is a scenario that ran, or a file that cannot be read.
type ScenarioRecord struct {
	Type     string  `json:"type"` // "scenario"
	Name     string  `json:"name,omitempty"`
	File     string  `json:"file"`
	Status   string  `json:"status"` // "pass", "fail" or "error" (cannot be read)
	Seconds  float64 `json:"seconds"`
	Steps    int     `json:"steps"`
	Failure  string  `json:"failure,omitempty"`
	Expected string  `json:"expected_failure,omitempty"` // a fails_with scenario's
}

// SummaryRecord is the last line.
type SummaryRecord struct {
	Type     string   `json:"type"` // "summary"
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`
	Skipped  int      `json:"not_run,omitempty"`
	Filtered int      `json:"filtered,omitempty"`
	Seconds  float64  `json:"seconds"`
	Coverage *float64 `json:"coverage,omitempty"`
	// CoverageLow: the coverage is below --cover-min (the run fails).
	CoverageLow bool `json:"coverage_low,omitempty"`
	// Interrupted: the run was cut short (Ctrl-C); not_run were never started.
	Interrupted bool `json:"interrupted,omitempty"`
}

// CoverageRecord is the behavior coverage of the run.
type CoverageRecord struct {
	Type     string            `json:"type"` // "coverage"
	Ran      int               `json:"ran"`
	Total    int               `json:"total"`
	Percent  float64           `json:"percent"`
	Programs []ProgramCoverage `json:"programs"`
}

func stepRecord(r Result) StepRecord {
	f := r.Fail
	rec := StepRecord{Type: "step", Scenario: r.Name, File: f.File, Line: f.Line, Step: f.Index, Op: f.Op}
	for _, m := range f.Mismatches {
		rec.Failures = append(rec.Failures, MismatchRecord{Key: m.Key, Line: m.Line, Want: m.Want, Got: m.Got,
			Expected: jsonable(m.Expected), Observed: jsonable(m.Observed), Diff: m.Diff})
	}
	return rec
}

// jsonable returns v when encoding/json can write it (plain data can hold
// NaN, which it cannot), else its Format.
func jsonable(v any) any {
	if v == nil {
		return nil
	}
	if _, err := json.Marshal(v); err != nil {
		return Format(v)
	}
	return v
}

func scenarioRecord(r Result) ScenarioRecord {
	status := "pass"
	if !r.Passed {
		status = "fail"
	}
	return ScenarioRecord{Type: "scenario", Name: r.Name, File: r.File, Status: status, Seconds: r.Duration.Seconds(),
		Steps: r.Steps, Failure: r.Failure, Expected: r.Expected}
}

func unreadableRecord(file string, err error) ScenarioRecord {
	return ScenarioRecord{Type: "scenario", File: file, Status: "error", Failure: err.Error()}
}

func summaryRecord(s Summary) SummaryRecord {
	return SummaryRecord{Type: "summary", Passed: s.Passed, Failed: s.Failed, Skipped: s.Skipped, Filtered: s.Filtered, Seconds: s.Duration.Seconds(),
		CoverageLow: s.CoverageLow, Interrupted: s.Interrupted}
}

func coverageRecord(c *Coverage) CoverageRecord {
	ran, total := c.Totals()
	return CoverageRecord{Type: "coverage", Ran: ran, Total: total, Percent: c.Percent(), Programs: c.Programs()}
}

func writeJSON(w io.Writer, v any) {
	if w == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"type": "error", "error": err.Error()})
	}
	w.Write(append(b, '\n'))
}

// JUnit XML: the shape CI systems read (Jenkins, GitLab, GitHub
// reporters): one testsuite, one testcase per scenario.

// JUnitSuites is the document root.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is the run's one suite.
type JUnitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []JUnitCase `xml:"testcase"`
}

// JUnitCase is one scenario.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitFailure `xml:"failure,omitempty"`
	Error     *JUnitFailure `xml:"error,omitempty"`
}

// JUnitFailure is a failed scenario: Message names the step and the first
// expectation; Text has the whole report.
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit builds the JUnit document of a run.
func JUnit(s Summary) JUnitSuites {
	suite := JUnitSuite{Name: "attune scenarios", Time: secs(s.Duration.Seconds())}
	for _, r := range s.Results {
		c := JUnitCase{Name: r.Name, Classname: strings.TrimSuffix(r.File, ".toml"), File: r.File, Time: secs(r.Duration.Seconds())}
		if !r.Passed {
			msg := firstLine(r.Failure)
			line := 0
			if f := r.Fail; f != nil && len(f.Mismatches) > 0 {
				m := f.Mismatches[0]
				line = m.Line
				msg = fmt.Sprintf("%s:%d: step %d (%s): %s", f.File, m.Line, f.Index, f.Op, m)
			}
			c.Line = line
			c.Failure = &JUnitFailure{Message: msg, Type: "expectation", Text: r.Failure}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	for _, u := range s.Unreadable {
		suite.Cases = append(suite.Cases, JUnitCase{Name: u.File, Classname: strings.TrimSuffix(u.File, ".toml"), File: u.File, Time: "0",
			Error: &JUnitFailure{Message: "cannot be read as a scenario", Type: "load", Text: u.Err.Error()}})
		suite.Errors++
	}
	suite.Tests = len(suite.Cases)
	suite.Skipped = s.Skipped
	return JUnitSuites{Name: "attune test", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Skipped: suite.Skipped, Time: suite.Time, Suites: []JUnitSuite{suite}}
}

func secs(f float64) string { return fmt.Sprintf("%.3f", f) }

// WriteJUnit writes the JUnit XML of a run.
func WriteJUnit(w io.Writer, s Summary) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(JUnit(s)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
