package scenario

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const calc = header + `
[host.tools."calc/add"]
effect = ["read"]
result = {n = 3}

[[step]]
op = "start"

[[step]]
op = "tool"
path = "calc/add"
`

func parse(t *testing.T, file, src string) *Scenario {
	t.Helper()
	sc, err := Parse(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestRunReportsTheFailingStep(t *testing.T) {
	res := Run(context.Background(), parse(t, "calc.toml", calc+"expect.result = {n = 4}\nexpect.core_calls = 2\n"))
	if res.Passed {
		t.Fatal("a wrong result passed")
	}
	for _, want := range []string{
		"calc.toml:16: step 2 (tool): result: want {n = 4}, got {n = 3}",
		"calc.toml:17: step 2 (tool): core_calls: want 2, got 1",
	} {
		if !strings.Contains(res.Failure, want) {
			t.Errorf("failure does not contain %q:\n%s", want, res.Failure)
		}
	}
	if res.Steps != 2 {
		t.Errorf("steps %d, want 2", res.Steps)
	}
}

func TestRunStopsAtTheFirstFailingStep(t *testing.T) {
	res := Run(context.Background(), parse(t, "calc.toml", calc+`expect.result = 4

[[step]]
op = "tool"
path = "calc/none"
`))
	if res.Passed || res.Steps != 2 {
		t.Fatalf("passed %v after %d steps", res.Passed, res.Steps)
	}
}

func TestRunInstanceNotRunning(t *testing.T) {
	res := Run(context.Background(), parse(t, "x.toml", header+`
[[step]]
op = "tool"
instance = "ghost"
path = "calc/add"
expect = {status = "failed", error = "instance ghost is not running"}
`))
	if !res.Passed {
		t.Fatal(res.Failure)
	}
}

func TestFailsWith(t *testing.T) {
	passing := strings.Replace(calc, `name = "t"`, `name = "t"
fails_with = ["result"]`, 1)
	res := Run(context.Background(), parse(t, "x.toml", passing))
	if res.Passed || !strings.Contains(res.Failure, "the scenario passed") {
		t.Errorf("a passing fails_with scenario: passed %v, %s", res.Passed, res.Failure)
	}
	res = Run(context.Background(), parse(t, "x.toml", passing+"expect.result = 4\n"))
	if !res.Passed || !strings.Contains(res.Expected, "result: want 4") {
		t.Errorf("a failing fails_with scenario: passed %v, %s", res.Passed, res.Failure)
	}
	res = Run(context.Background(), parse(t, "x.toml", passing+"expect.core_calls = 4\n"))
	if res.Passed || !strings.Contains(res.Failure, "not with \"result\"") {
		t.Errorf("a fails_with scenario failing otherwise: passed %v, %s", res.Passed, res.Failure)
	}
}

func TestRunFilesOutput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.toml", strings.Replace(calc, `name = "t"`, `name = "good"`, 1))
	write("b.toml", strings.Replace(calc, `name = "t"`, `name = "bad"`, 1)+"expect.result = 4\n")
	write("c.toml", "name = \"broken\"\n[[step]]\nop = \"tol\"\n")
	files, err := Discover([]string{dir})
	if err != nil || len(files) != 3 {
		t.Fatalf("Discover: %v %v", files, err)
	}
	var out bytes.Buffer
	sum := RunFiles(context.Background(), &out, files, 2)
	if sum.Passed != 1 || sum.Failed != 2 || len(sum.LoadErrors) != 1 {
		t.Errorf("summary %+v", sum)
	}
	text := out.String()
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "1 passed, 2 failed" {
		t.Errorf("last line %q", last)
	}
	for _, want := range []string{"ok   good (", "FAIL bad (", "--- FAIL: bad", "step 2 (tool): result: want 4", "c.toml:3: step[1].op: unknown op"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

func TestRunFilesDuplicateNames(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.toml", "b.toml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(calc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := Discover([]string{dir})
	var out bytes.Buffer
	sum := RunFiles(context.Background(), &out, files, 1)
	if len(sum.LoadErrors) != 1 || !strings.Contains(out.String(), "b.toml: name: \"t\" is also the name of") {
		t.Errorf("duplicate names: %+v\n%s", sum, out.String())
	}
}
