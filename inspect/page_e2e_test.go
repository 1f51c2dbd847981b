//go:build e2e

package inspect

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

// artifacts is the folder screenshots are kept in: $ATTUNE_ARTIFACTS, or
// testdata/artifacts (ignored by git).
func artifacts(t *testing.T) string {
	dir := os.Getenv("ATTUNE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// chromium finds the Debian package's browser; the test fails without it
// (.ci/run installs it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: install the Debian package (apt-get install -y chromium), as .ci/run does")
	return ""
}

// The inspector's page of a recorded session, rendered by headless
// Chromium from the binary's own module scripts, shows the denied call
// with its guard's place and reason and the note that reached the model.
func TestInspectorPageInChromium(t *testing.T) {
	bin := chromium(t)
	st := store.NewMemory()
	recordSession(t, st)
	srv := NewServer(st, NewToken(), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String()
	url := base + srv.Path() + "?session=claude%2Fs1"
	if r, err := http.Get(base + "/assets/app.js"); err != nil || r.StatusCode != http.StatusForbidden {
		t.Fatalf("without the token: %v %v", r, err)
	}
	run := func(args ...string) string { return runChromium(t, bin, url, args...) }
	dom := run("--dump-dom")
	for _, want := range []string{
		`data-ready="1"`,
		`<span class="path">claude/Read</span><span class="status refused">refused</span>`,
		"refused by guard at protect.lua:2",
		"protect: /p/.env holds secrets",
		"guards: refuse at protect.lua:2",
		// each guard's verdict, from the journal: the refusal, and the guard that let a.txt through
		"guard claude/* at protect.lua:2: refuse: protect: /p/.env holds secrets",
		"guard claude/* at protect.lua:2: invoke",
		"Mind the secrets in .env files.",
		"reached the model (turn 1 round 1)",
		"turn starts",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if t.Failed() {
		os.WriteFile(filepath.Join(artifacts(t), "inspect-timeline.html"), []byte(dom), 0o644)
		t.FailNow()
	}
	shot, err := filepath.Abs(filepath.Join(artifacts(t), "inspect-timeline.png"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(shot)
	run("--screenshot=" + shot)
	if st, err := os.Stat(shot); err != nil || st.Size() < 1000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}

// runChromium renders url in headless Chromium with args.
func runChromium(t *testing.T, bin, url string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	profile := t.TempDir()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + profile,
		"--virtual-time-budget=10000", "--window-size=1280,1400"}, args...)
	out, err := exec.CommandContext(ctx, bin, append(all, url)...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return string(out)
}

// The page of a session of 100k tool calls shows its first page of events
// (and only that), and a later page when asked for one (?page=N), with
// links between pages.
func TestInspectorPageOfALongSession(t *testing.T) {
	bin := chromium(t)
	st := bigSession(t, 100_000)
	srv := NewServer(st, NewToken(), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String() + srv.Path() + "?session=big"
	// 100k calls, 100 rounds (a start and an end each), a turn's start and end
	const total, pages = 100_202, 201
	for _, c := range []struct {
		page         int
		want, absent []string
	}{
		{1, []string{`data-ready="1"`, `data-seq="0"`, `data-seq="499"`, "page 1 of 201 (events 0–499 of 100202)", `rel="next"`, "calls: 100000"},
			[]string{`data-seq="500"`, `rel="prev"`}},
		{150, []string{`data-ready="1"`, `data-seq="74500"`, `data-seq="74999"`, "page 150 of 201 (events 74500–74999 of 100202)", `rel="prev"`, `rel="first"`},
			[]string{`data-seq="0"`, `data-seq="75000"`, `data-seq="74499"`}},
		{pages, []string{`data-seq="100201"`, "page 201 of 201 (events 100000–100201 of 100202)"}, []string{`rel="next"`}},
	} {
		url := base
		if c.page > 1 {
			url += fmt.Sprintf("&page=%d", c.page)
		}
		dom := runChromium(t, bin, url, "--dump-dom")
		for _, w := range c.want {
			if !strings.Contains(dom, w) {
				t.Errorf("page %d lacks %q", c.page, w)
			}
		}
		for _, a := range c.absent {
			if strings.Contains(dom, a) {
				t.Errorf("page %d holds %q", c.page, a)
			}
		}
		if n := strings.Count(dom, `<li class="ev `); n != min(500, total-(c.page-1)*500) {
			t.Errorf("page %d shows %d events", c.page, n)
		}
		if t.Failed() {
			os.WriteFile(filepath.Join(artifacts(t), fmt.Sprintf("inspect-long-page%d.html", c.page)), []byte(dom), 0o644)
			t.FailNow()
		}
	}
}
