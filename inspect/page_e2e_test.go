//go:build e2e

package inspect

import (
	"context"
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
	run := func(args ...string) string {
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
	dom := run("--dump-dom")
	for _, want := range []string{
		`data-ready="1"`,
		`<span class="path">claude/Read</span><span class="status refused">refused</span>`,
		"refused by guard at protect.lua:2",
		"protect: /p/.env holds secrets",
		"guards: refuse at protect.lua:2",
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
