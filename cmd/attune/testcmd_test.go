package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/scenario"
)

// suite writes three scenarios: a and c pass, b fails at step 2.
func suite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "s/a.toml", scenarioText("alpha", "3"))
	write(t, dir, "s/b.toml", scenarioText("beta", "{n = 4}"))
	write(t, dir, "s/c.toml", scenarioText("gamma", "3"))
	return filepath.Join(dir, "s")
}

func TestTestRunFilter(t *testing.T) {
	dir := suite(t)
	code, out, _ := run("test", "--run", "^(alpha|gamma)$", dir)
	if code != 0 || !strings.HasSuffix(out, "2 passed, 0 failed\n") || strings.Contains(out, "beta") {
		t.Errorf("by name: exit %d\n%s", code, out)
	}
	code, out, _ = run("test", dir, "--run", "b\\.toml") // flags after the path, a file path
	if code != 1 || !strings.HasSuffix(out, "0 passed, 1 failed\n") || !strings.Contains(out, "FAIL beta") {
		t.Errorf("by path: exit %d\n%s", code, out)
	}
	if code, _, errOut := run("test", "--run", "(", dir); code != 2 || !strings.Contains(errOut, "--run") {
		t.Errorf("bad regexp: exit %d %s", code, errOut)
	}
}

func TestTestVerbose(t *testing.T) {
	dir := suite(t)
	code, out, _ := run("test", "-v", "-j", "1", dir)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{
		"=== RUN  alpha (",
		"a.toml:8: step 1 (start main): ok, result = {bot = \"main\"",
		"a.toml:10: step 2 (tool calc/add): ok, result = 3, core_calls = 1",
		"b.toml:10: step 2 (tool calc/add): ok, result = 3, core_calls = 1",
		"b.toml:13: step 2 (tool): result: want {n = 4}, got 3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("-v output lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasSuffix(out, "2 passed, 1 failed\n") {
		t.Errorf("last line:\n%s", out)
	}
}

func TestTestFailFast(t *testing.T) {
	dir := suite(t)
	write(t, dir, "0.toml", scenarioText("first-fails", "4"))
	code, out, _ := run("test", "--fail-fast", "-j", "1", dir)
	if code != 1 || !strings.HasSuffix(out, "--fail-fast: 3 scenario(s) not run\n0 passed, 1 failed\n") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if strings.Contains(out, "alpha") {
		t.Errorf("a scenario ran after the first failure:\n%s", out)
	}
}

func TestTestJUnit(t *testing.T) {
	dir := suite(t)
	write(t, dir, "z.toml", "name = \"broken\"\n[[step]]\nop = \"tol\"\n")
	report := filepath.Join(t.TempDir(), "report.xml")
	code, _, _ := run("test", "--junit", report, dir)
	if code != 2 {
		t.Errorf("exit %d, want 2 (a file cannot be read)", code)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var doc scenario.JUnitSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the report is not XML: %v\n%s", err, data)
	}
	if doc.Tests != 4 || doc.Failures != 1 || doc.Errors != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 4 {
		t.Fatalf("counts: tests %d failures %d errors %d\n%s", doc.Tests, doc.Failures, doc.Errors, data)
	}
	var failed, errored, passed int
	for _, c := range doc.Suites[0].Cases {
		switch {
		case c.Failure != nil:
			failed++
			if c.Name != "beta" || !strings.Contains(c.Failure.Message, "b.toml:13: step 2 (tool): result: want {n = 4}, got 3") || c.Line != 13 {
				t.Errorf("failure: %+v", c)
			}
			if !strings.Contains(c.Failure.Text, ".n: want 4, got 3") && !strings.Contains(c.Failure.Text, "want {n = 4}, got 3") {
				t.Errorf("failure text: %s", c.Failure.Text)
			}
		case c.Error != nil:
			errored++
			if !strings.Contains(c.Error.Text, "unknown op") {
				t.Errorf("error: %+v", c.Error)
			}
		default:
			passed++
		}
	}
	if failed != 1 || errored != 1 || passed != 2 {
		t.Errorf("cases: %d failed, %d errored, %d passed", failed, errored, passed)
	}
}

func TestTestJSON(t *testing.T) {
	dir := suite(t)
	code, out, _ := run("test", "--json", dir)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	kinds := map[string]int{}
	var step scenario.StepRecord
	var sum scenario.SummaryRecord
	for _, ln := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var rec struct{ Type string }
		if err := json.Unmarshal([]byte(ln), &rec); err != nil {
			t.Fatalf("a line that is not JSON: %q: %v", ln, err)
		}
		kinds[rec.Type]++
		switch rec.Type {
		case "step":
			json.Unmarshal([]byte(ln), &step)
		case "summary":
			json.Unmarshal([]byte(ln), &sum)
		}
	}
	if kinds["scenario"] != 3 || kinds["step"] != 1 || kinds["summary"] != 1 {
		t.Errorf("records %v\n%s", kinds, out)
	}
	if step.Scenario != "beta" || step.Step != 2 || step.Op != "tool" || len(step.Failures) != 1 {
		t.Fatalf("step record %+v", step)
	}
	f := step.Failures[0]
	if f.Key != "result" || f.Line != 13 || f.Observed != 3.0 || f.Expected.(map[string]any)["n"] != 4.0 {
		t.Errorf("failure %+v", f)
	}
	if sum.Passed != 2 || sum.Failed != 1 {
		t.Errorf("summary %+v", sum)
	}
}

const coverScenario = `name = "NAME"
[config.bots.main]
behaviors = ["watch"]
ceiling = ["read"]
[programs]
"watch.lua" = '''
guard.tool("calc/*", function(c, invoke) return invoke() end)
hook.tool("calc/add", {post = function(c, out) return nil end})
hook.round("end", function(b) end)
'''
[host.tools."calc/add"]
effect = ["read"]
result = 3
[[step]]
op = "start"
[[step]]
op = "tool"
path = "calc/add"
`

func TestTestCover(t *testing.T) {
	dir := t.TempDir()
	// the suite never ends a round: exactly the round hook never runs
	write(t, dir, "a.toml", strings.Replace(coverScenario, "NAME", "cover", 1))
	code, out, _ := run("test", "--cover", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var never []string
	for _, ln := range strings.Split(out, "\n") {
		if strings.HasSuffix(ln, "never ran") {
			never = append(never, strings.Join(strings.Fields(ln), " "))
		}
	}
	if len(never) != 1 || never[0] != "watch.lua:3 hook/round never ran" {
		t.Errorf("never ran: %q\n%s", never, out)
	}
	for _, want := range []string{"watch.lua:1 guard/tool ran 1 time(s)", "watch.lua:2 hook/tool ran 1 time(s)",
		"watch (watch.lua, inline in", "coverage: 2 of 3 registrations ran (66.7%)"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("coverage lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasSuffix(out, "1 passed, 0 failed\n") {
		t.Errorf("last line:\n%s", out)
	}
	code, out, _ = run("test", "--cover-min", "70", dir)
	if code != 1 || !strings.Contains(out, "FAIL coverage 66.7% is below --cover-min 70%") || !strings.HasSuffix(out, "1 passed, 0 failed\n") {
		t.Errorf("--cover-min 70: exit %d\n%s", code, out)
	}
	if code, out, _ = run("test", "--cover-min", "60", dir); code != 0 {
		t.Errorf("--cover-min 60: exit %d\n%s", code, out)
	}
}

func TestTestCoverJSON(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.toml", strings.Replace(coverScenario, "NAME", "cover", 1))
	code, out, _ := run("test", "--cover", "--json", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var cov scenario.CoverageRecord
	for _, ln := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(ln, `"type":"coverage"`) {
			if err := json.Unmarshal([]byte(ln), &cov); err != nil {
				t.Fatal(err)
			}
		}
	}
	if cov.Ran != 2 || cov.Total != 3 || len(cov.Programs) != 1 || cov.Programs[0].Registrations[2].Runs != 0 || cov.Programs[0].Registrations[2].Pos != "watch.lua:3" {
		t.Errorf("coverage record %+v\n%s", cov, out)
	}
	if !strings.Contains(out, `"registrations":[{"form":"guard/tool","pos":"watch.lua:1","runs":1}`) {
		t.Errorf("snake_case fields:\n%s", out)
	}
	// below --cover-min the summary says why the run failed
	code, out, _ = run("test", "--cover-min", "70", "--json", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || !strings.Contains(lines[len(lines)-1], `"coverage_low":true`) {
		t.Errorf("--cover-min: exit %d\n%s", code, out)
	}
}

// --junit into a folder that does not exist yet (reports/junit.xml in a
// fresh CI checkout) creates the folder, as CI tools expect; a report that
// cannot be written at all is said before anything runs.
func TestTestJUnitNewFolder(t *testing.T) {
	dir := suite(t)
	report := filepath.Join(t.TempDir(), "reports dir", "ünï", "junit.xml")
	if code, _, errOut := run("test", "--junit", report, dir); code != 1 {
		t.Errorf("exit %d, want 1: %s", code, errOut)
	}
	var doc scenario.JUnitSuites
	if data, err := os.ReadFile(report); err != nil {
		t.Fatal(err)
	} else if err := xml.Unmarshal(data, &doc); err != nil || doc.Tests != 3 {
		t.Errorf("report: %v, %d tests", err, doc.Tests)
	}
	blocker := filepath.Join(t.TempDir(), "file")
	write(t, filepath.Dir(blocker), "file", "")
	code, out, errOut := run("test", "--junit", filepath.Join(blocker, "junit.xml"), dir)
	if code != 2 || !strings.Contains(errOut, "--junit") || strings.Contains(out, "passed") {
		t.Errorf("unwritable report: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// What behaviors print and log is shown under the step that ran them (-v).
func TestTestVerbosePrints(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "p.toml", `name = "prints"

[config.bots.main]
behaviors = ["talk"]
ceiling = ["read"]

[programs]
"talk.lua" = '''
hook.turn("start", function(b)
  print("turn", 1)
  log("warn", "no plan yet")
end)
define.tool("probe/x", function(ctx, args) log("debug", "probe ran") return 1 end, {effect = {"read"}})
'''

[[step]]
op = "start"

[[step]]
op = "turn-begin"

[[step]]
op = "tool"
path = "probe/x"
expect.result = 1
`)
	code, out, _ := run("test", "-v", filepath.Join(dir, "p.toml"))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	want := "p.toml:19: step 2 (turn-begin): ok\n        [print] talk: turn\t1\n        [warn] talk: no plan yet\n"
	if !strings.Contains(out, want) || !strings.Contains(out, "step 3 (tool probe/x): ok, result = 1\n        [debug] talk: probe ran\n") {
		t.Fatalf("-v output:\n%s", out)
	}
	if code, out, _ := run("test", filepath.Join(dir, "p.toml")); code != 0 || strings.Contains(out, "no plan yet") {
		t.Fatalf("without -v: exit %d\n%s", code, out)
	}
}
