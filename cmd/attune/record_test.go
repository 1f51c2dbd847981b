package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// demoDir copies the demo into a folder of its own.
func demoDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"attune.toml", "demo.toml", "pack/scribe.scm"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A session of the demo, recorded, replays green; with goal's round-end
// note made ambient (it no longer asks for another round) the scenario
// fails at the first round end, where the behavior decides differently.
func TestRecordDemo(t *testing.T) {
	dir := demoDir(t)
	cfg := filepath.Join(dir, "attune.toml")
	var out, errs bytes.Buffer
	for range 2 { // the second run continues the session: both runs are recorded
		if code := dispatch([]string{"run", cfg}, &out, &errs); code != 0 {
			t.Fatalf("run: exit %d: %s", code, errs.String())
		}
	}
	file := filepath.Join(dir, "main.toml")
	code, _, errOut := run("record", "demo-main", "--config", cfg, "--out", file)
	if code != 0 || !strings.Contains(errOut, "recorded session demo-main/") {
		t.Fatalf("record: exit %d: %s", code, errOut)
	}
	data, _ := os.ReadFile(file)
	text := string(data)
	for _, want := range []string{`"goal.scm" = '''`, `[host.tools."tree/list"]`, `[host.read_answers]`, `[owners."offload@project"]`, `op = "command"`, `name = "plan"`, `expect = {continue = true, notes = [`} {
		if !strings.Contains(text, want) {
			t.Errorf("the recording lacks %s", want)
		}
	}
	code, outText, _ := run("test", file)
	if code != 0 || !strings.HasSuffix(outText, "1 passed, 0 failed\n") {
		t.Fatalf("the recorded scenario: exit %d\n%s", code, outText)
	}
	changed := strings.Replace(text, `" loops left)")
                  "activating")`, `" loops left)")
                  "ambient")`, 1)
	if changed == text {
		t.Fatal("goal.scm's round-end note is not where the test looks for it")
	}
	os.WriteFile(file, []byte(changed), 0o644)
	code, outText, _ = run("test", "--json", file)
	if code != 1 {
		t.Fatalf("the changed behavior passed:\n%s", outText)
	}
	var firstRoundEnd int
	for n, ln := range strings.Split(changed, "\n") {
		if ln == `op = "round-end"` {
			firstRoundEnd = n // the header is the line above: n is its 1-based number
			break
		}
	}
	stepLine := `"line":` + strconv.Itoa(firstRoundEnd) + `,`
	if !strings.Contains(outText, `"type":"step"`) || !strings.Contains(outText, `"op":"round-end"`) || !strings.Contains(outText, stepLine) || !strings.Contains(outText, `"key":"notes"`) {
		t.Errorf("not failed at the first round end (line %d):\n%s", firstRoundEnd, outText)
	}
}

func TestRecordErrors(t *testing.T) {
	dir := demoDir(t)
	cfg := filepath.Join(dir, "attune.toml")
	var out, errs bytes.Buffer
	if code := dispatch([]string{"run", cfg}, &out, &errs); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs.String())
	}
	code, _, errOut := run("record", "nobody", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, `session "nobody": no such session`) || !strings.Contains(errOut, "demo-main/") {
		t.Errorf("a session that does not exist: exit %d: %s", code, errOut)
	}
	if code, _, _ := run("record", "--config", cfg); code != 2 {
		t.Errorf("no session: exit %d", code)
	}
	if code, _, errOut := run("record", "demo-main", "--config", filepath.Join(dir, "none.toml")); code != 2 || !strings.Contains(errOut, "none.toml") {
		t.Errorf("no config: exit %d: %s", code, errOut)
	}
	code, text, _ := run("record", "demo-scout", "--config", cfg) // to standard output
	if code != 0 || !strings.HasPrefix(text, "# Recorded by `attune record` from session demo-scout/") {
		t.Errorf("stdout: exit %d\n%s", code, text)
	}
}

// --out into a folder that does not exist yet creates it, and the line that
// says how to run the recording quotes a path a shell would split; two
// sessions at once are refused with a message saying so.
func TestRecordOutPaths(t *testing.T) {
	dir := demoDir(t)
	cfg := filepath.Join(dir, "attune.toml")
	var out, errs bytes.Buffer
	if code := dispatch([]string{"run", cfg}, &out, &errs); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs.String())
	}
	file := filepath.Join(dir, "recorded scenarios", "ünï", "main.toml")
	code, _, errOut := run("record", "demo-main", "--config", cfg, "--out", file)
	if code != 0 || !strings.Contains(errOut, "run it with: attune test '"+file+"'") {
		t.Fatalf("record: exit %d: %s", code, errOut)
	}
	if code, text, _ := run("test", file); code != 0 {
		t.Errorf("the recording: exit %d\n%s", code, text)
	}
	code, _, errOut = run("record", "demo-main", "demo-scout", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, `one SESSION, got 2: "demo-main" "demo-scout"`) {
		t.Errorf("two sessions: exit %d: %s", code, errOut)
	}
}

// A configuration whose store is "memory:" has no sessions to record once
// the process that ran them ended: the error says so.
func TestRecordMemoryStore(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "attune.toml", "[engine]\nstore = \"memory:\"\n[bots.main]\nceiling = []\n")
	code, _, errOut := run("record", "s1", "--config", filepath.Join(dir, "attune.toml"))
	if code != 2 || !strings.Contains(errOut, "no such session") || !strings.Contains(errOut, `store = "memory:"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
