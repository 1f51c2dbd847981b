package scenario

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDiff(t *testing.T) {
	want := map[string]any{"tools": []any{map[string]any{"status": "ok"}, map[string]any{"status": "ok", "result": 2.0}}, "n": 1.0, "gone": "x"}
	got := map[string]any{"tools": []any{map[string]any{"status": "ok"}, map[string]any{"status": "refused", "result": 2.0}}, "n": 1.0, "extra": true}
	d := Diff(want, got)
	wantLines := []string{`.gone: want "x", got nothing`, `.tools[2].status: want "ok", got "refused"`}
	if !reflect.DeepEqual(d, wantLines) {
		t.Errorf("Diff = %q, want %q", d, wantLines)
	}
	if d := Diff(map[string]any{"l": []any{1.0, 2.0}}, map[string]any{"l": []any{3.0}}); !reflect.DeepEqual(d, []string{".l: want 2 elements, got 1", ".l[1]: want 1, got 3"}) {
		t.Errorf("lists of other lengths: %q", d)
	}
	if d := Diff(map[string]any{"n": 4.0}, 3.0); d != nil {
		t.Errorf("a whole mismatch has no diff: %q", d)
	}
	if d := Diff(3.0, 4.0); d != nil {
		t.Errorf("scalars have no diff: %q", d)
	}
	if d := Diff(want, want); len(d) != 0 {
		t.Errorf("equal data: %q", d)
	}
}

func TestFailureShowsTheDiff(t *testing.T) {
	src := strings.Replace(calc, "result = {n = 3}", `result = {n = 3, list = [1, 2, 3], name = "x"}`, 1) +
		"expect.result = {n = 3, list = [1, 5, 3], name = \"y\"}\n"
	res := Run(context.Background(), parse(t, "calc.toml", src))
	if res.Passed || res.Fail == nil || res.Fail.Index != 2 || res.Fail.Mismatches[0].Line != 16 {
		t.Fatalf("%+v", res)
	}
	for _, want := range []string{"calc.toml:16: step 2 (tool): result: want", "\n    .list[2]: want 5, got 2", "\n    .name: want \"y\", got \"x\""} {
		if !strings.Contains(res.Failure, want) {
			t.Errorf("failure lacks %q:\n%s", want, res.Failure)
		}
	}
}

func TestProgressPlainAndLive(t *testing.T) {
	clock := time.Unix(0, 0)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	var plain bytes.Buffer
	p := &Progress{W: &plain, Every: 3 * time.Second, Now: now}
	p.start(5, time.Unix(0, 0))
	for i := 1; i <= 5; i++ {
		p.update(i, i/3)
	}
	if strings.Contains(plain.String(), "\r") || plain.String() != "... 3/5 done, 1 failed, 5s\n... 5/5 done, 1 failed, 8s\n" {
		t.Errorf("plain progress %q", plain.String())
	}
	var live bytes.Buffer
	p = &Progress{W: &live, Live: true, Now: now}
	p.start(2, clock)
	p.update(1, 1)
	p.clear()
	if !strings.Contains(live.String(), "\r\033[K1/2 done, 1 failed,") || !strings.HasSuffix(live.String(), "\r\033[K") {
		t.Errorf("live progress %q", live.String())
	}
}

func TestCoverageSchemeLines(t *testing.T) {
	src := `name = "scm"
[config.bots.main]
behaviors = ["watch"]
ceiling = ["read"]
[programs]
"watch.scm" = '''
; a guard and a method
(guard/tool "calc/*"
  (lambda (c invoke) (invoke)))
(define/reducer "w" (lambda (s a) s))
(define/method "w" "get" (lambda (ctx s in) 1))
(validate/configuration (lambda (cfg) #t))
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
	cov := NewCoverage()
	res := RunWith(context.Background(), parse(t, "scm.toml", src), RunOptions{Cover: cov})
	if !res.Passed {
		t.Fatal(res.Failure)
	}
	progs := cov.Programs()
	if len(progs) != 1 {
		t.Fatalf("programs %+v", progs)
	}
	var got []string
	for _, r := range progs[0].Registrations {
		got = append(got, r.Pos+" "+r.Form+" "+map[bool]string{true: "ran", false: "never"}[r.Runs > 0])
	}
	want := []string{"watch.scm:2 guard/tool ran", "watch.scm:4 define/reducer never", "watch.scm:5 define/method never", "watch.scm:6 validate/configuration ran"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("registrations\n got %q\nwant %q", got, want)
	}
	if progs[0].Inline != "scm.toml" || cov.Percent() != 50 {
		t.Errorf("inline %q, percent %v", progs[0].Inline, cov.Percent())
	}
}

// An interrupted run (Ctrl-C: its ctx is cancelled) starts no scenario
// after it; those it never started are not run, not failed, and the report
// says the run was interrupted. The scenario running at that moment fails
// (it was cut short).
func TestInterruptedRunStartsNoMore(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, n := range []string{"a", "b", "c"} {
		f := filepath.Join(dir, n+".toml")
		if err := os.WriteFile(f, []byte(strings.Replace(busyScenario, "NAME", n, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var out bytes.Buffer
	start := time.Now()
	sum := RunSuite(ctx, files, Options{Jobs: 1, Out: &out})
	if !sum.Interrupted || sum.Failed != 1 || sum.Skipped != 2 || sum.Passed != 0 || time.Since(start) > 30*time.Second {
		t.Errorf("interrupted %v, %d failed, %d not run, %d passed (%s)\n%s", sum.Interrupted, sum.Failed, sum.Skipped, sum.Passed, time.Since(start), out.String())
	}
	if s := out.String(); !strings.Contains(s, "interrupted: 2 scenario(s) not run\n0 passed, 1 failed\n") || strings.Contains(s, "FAIL b") {
		t.Errorf("report:\n%s", s)
	}
	sum = RunSuite(ctx, files, Options{Jobs: 1, Out: &out}) // cancelled before it began
	if !sum.Interrupted || sum.Skipped != 3 || sum.Failed != 0 {
		t.Errorf("cancelled before: interrupted %v, %d not run, %d failed", sum.Interrupted, sum.Skipped, sum.Failed)
	}
}

// busyScenario's tool call loops until its run is cancelled.
const busyScenario = `name = "NAME"
[config.engine]
callback_budget = "60s"
[config.bots.main]
behaviors = ["busy"]
ceiling = ["read"]
[programs]
"busy.lua" = 'guard.tool("calc/*", function(c, invoke) while true do end end)'
[host.tools."calc/add"]
effect = ["read"]
result = 1
[[step]]
op = "start"
[[step]]
op = "tool"
path = "calc/add"
`

// On a terminal the live line is redrawn while a long scenario runs, so
// that the time elapsed moves, not only when a scenario finishes.
func TestProgressLiveTicks(t *testing.T) {
	f := filepath.Join(t.TempDir(), "busy.toml")
	if err := os.WriteFile(f, []byte(strings.Replace(busyScenario, "NAME", "busy", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	var live bytes.Buffer
	RunSuite(ctx, []string{f}, Options{Jobs: 1, Progress: &Progress{W: &live, Live: true, Tick: 50 * time.Millisecond}})
	if n := strings.Count(live.String(), "\r\033[K0/1 done, 0 failed"); n < 4 {
		t.Errorf("the live line was drawn %d times while the scenario ran: %q", n, live.String())
	}
}

// A program no pack holds because a pack folder of config.engine.packs is
// missing (relative to the scenario file): the failure names the folder.
func TestMissingPackFolderIsNamed(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "tests", "a.toml")
	os.MkdirAll(filepath.Dir(f), 0o755)
	src := "name = \"a\"\n[config.engine]\npacks = [\"../pack\"]\n[config.bots.main]\nbehaviors = [\"protect\"]\nceiling = []\n[[step]]\nop = \"start\"\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	RunSuite(context.Background(), []string{f}, Options{Out: &out})
	if s := out.String(); !strings.Contains(s, `no pack holds program "protect"`) || !strings.Contains(s, "engine.packs[1]: pack folder "+filepath.Join(dir, "pack")+" does not exist") {
		t.Errorf("%s", s)
	}
}
