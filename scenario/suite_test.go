package scenario

import (
	"bytes"
	"context"
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
