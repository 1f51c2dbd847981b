//go:build unix

package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
)

// warmProject is a project for the hand-off tests: the tool guard of
// toolProg on the SQLite default store, and this user's runtime folder
// ($XDG_RUNTIME_DIR) in a temporary folder of mode 0700. extra is added to
// the configuration.
func warmProject(t testing.TB, extra string) (cfgPath string, cfg *config.Config) {
	t.Helper()
	dir := t.TempDir()
	// short: a socket's path has at most 107 bytes
	run, err := os.MkdirTemp("", "aw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	t.Setenv("XDG_RUNTIME_DIR", run)
	p := filepath.Join(dir, "packs", "p", "p.lua")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(toolProg), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath = filepath.Join(dir, "attune.toml")
	if err := os.WriteFile(cfgPath, []byte("[engine]\npacks = [\"packs/p\"]\n"+mainBot+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return cfgPath, cfg
}

// startWarmServer runs the warm server for cfgPath in this process until
// the test ends; done is closed when it has stopped.
func startWarmServer(t testing.TB, cfgPath string, cfg *config.Config) (log *bytes.Buffer, stop func(), done chan struct{}) {
	t.Helper()
	ident, err := Identity(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := ListenWarm(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	log = &bytes.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := New(ctx, cfg, Options{Warm: true, Stderr: log})
	if err != nil {
		t.Fatal(err)
	}
	done = make(chan struct{})
	go func() {
		defer close(done)
		defer r.Close()
		defer ln.Close()
		abs, _ := filepath.Abs(cfgPath)
		_ = r.ServeWarm(ctx, ln, WarmOptions{Ident: ident, Config: abs, Recheck: func() (string, error) {
			c, err := config.Load(cfgPath)
			if err != nil {
				return "", err
			}
			return Identity(c)
		}})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return log, cancel, done
}

// handOff is HandOff of an event given as Claude Code's JSON, the answer
// rendered as the hook process prints it.
func handOff(t testing.TB, cfg *config.Config, event []byte, timeout time.Duration) ([]byte, error) {
	t.Helper()
	ev, err := Read(Claude(), event)
	if err != nil {
		t.Fatal(err)
	}
	a, err := HandOff(context.Background(), cfg, Claude(), ev, timeout)
	if err != nil {
		return nil, err
	}
	return bytes.TrimSpace(Claude().Render(ev, a)), nil
}

func warmPre(session, cmd string) []byte {
	return []byte(`{"hook_event_name":"PreToolUse","session_id":"` + session + `","tool_name":"Bash","tool_use_id":"t-` + cmd + `","tool_input":{"command":"` + cmd + `","description":"d"}}`)
}

// inProcess is the answer to event as `attune hook claude` renders it
// without a warm server.
func inProcess(t *testing.T, cfg *config.Config, event []byte) []byte {
	t.Helper()
	r, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ev, err := Read(Claude(), event)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(Claude().Render(ev, r.Handle(context.Background(), Claude(), ev)))
}

// The warm server answers a handed-off event as the event's own process
// would: the same bytes, for a refusal, a rewrite and no opinion.
func TestHandOffSameAnswer(t *testing.T) {
	cfgPath, cfg := warmProject(t, "")
	startWarmServer(t, cfgPath, cfg)
	for _, cmd := range []string{"rm -rf /", "ls", "echo"} {
		got, err := handOff(t, cfg, warmPre("warm", cmd), HandoffTimeout)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		want := inProcess(t, cfg, warmPre("cold", cmd))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: handed off %s, in-process %s", cmd, got, want)
		}
	}
	got, _ := handOff(t, cfg, warmPre("warm", "rm -rf /"), HandoffTimeout)
	if !bytes.Contains(got, []byte(`"deny"`)) {
		t.Errorf("refusal handed off: %s", got)
	}
}

// No socket, and a socket nothing listens on (a server that died left
// it): no hand-off, ErrNoWarm.
func TestHandOffNoServerOrStaleSocket(t *testing.T) {
	cfgPath, cfg := warmProject(t, "")
	if _, err := handOff(t, cfg, warmPre("s", "echo"), HandoffTimeout); !errors.Is(err, ErrNoWarm) {
		t.Fatalf("no socket: %v", err)
	}
	path := WarmSocket(cfgPath)
	if err := secureDir(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	// a folder open to others but holding no socket: no server, nothing refused
	os.Chmod(filepath.Dir(path), 0o755)
	if _, err := handOff(t, cfg, warmPre("s", "echo"), HandoffTimeout); !errors.Is(err, ErrNoWarm) {
		t.Fatalf("no socket in an open folder: %v", err)
	}
	os.Chmod(filepath.Dir(path), 0o700)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the stale socket is gone: %v", err)
	}
	if _, err := handOff(t, cfg, warmPre("s", "echo"), HandoffTimeout); !errors.Is(err, ErrNoWarm) {
		t.Fatalf("stale socket: %v", err)
	}
	// a new server replaces the stale socket
	_, cfg2 := cfgPath, cfg
	startWarmServer(t, cfgPath, cfg2)
	if _, err := handOff(t, cfg, warmPre("s", "echo"), HandoffTimeout); err != nil {
		t.Fatalf("after a new server: %v", err)
	}
}

// fakeWarm listens on the configuration's warm socket and runs answer on
// each connection once it has read the request's header line.
func fakeWarm(t *testing.T, cfgPath string, answer func(c net.Conn)) {
	t.Helper()
	path := WarmSocket(cfgPath)
	if err := secureDir(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadSlice('\n'); err != nil {
					return
				}
				answer(c)
			}()
		}
	}()
}

// A server that dies while it answers (half an answer, then the
// connection closed) and one that answers allow for another identity are
// not believed: the event is answered in-process, and denied.
func TestHandOffBrokenAnswerFallsBack(t *testing.T) {
	cfgPath, cfg := warmProject(t, "")
	ident, err := Identity(cfg)
	if err != nil {
		t.Fatal(err)
	}
	allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`
	answers := map[string]string{
		"killed mid-answer": `{"ok":true,"ident":"` + ident + `","size":` + strconv.Itoa(len(allow)) + "}\n" + allow[:20],
		"another identity":  `{"ok":true,"ident":"0000","size":` + strconv.Itoa(len(allow)) + "}\n" + allow,
		"no header":         allow[:10],
	}
	for name, text := range answers {
		t.Run(name, func(t *testing.T) {
			cfgPath, cfg := warmProject(t, "")
			if name == "killed mid-answer" {
				ident2, _ := Identity(cfg)
				text = strings.Replace(text, ident, ident2, 1)
			}
			fakeWarm(t, cfgPath, func(c net.Conn) { c.Write([]byte(text)) })
			if out, err := handOff(t, cfg, warmPre("s", "rm -rf /"), HandoffTimeout); err == nil {
				t.Fatalf("believed %s", out)
			}
			out := runHookIn(t, cfgPath, warmPre("s", "rm -rf /"))
			if !strings.Contains(out, `"deny"`) || strings.Contains(out, `"allow"`) {
				t.Errorf("answer: %s", out)
			}
		})
	}
	_ = cfgPath
}

// runHookIn runs `attune hook claude --config cfgPath` on event as a
// fresh process, with this test's runtime folder, and returns its output.
func runHookIn(t *testing.T, cfgPath string, event []byte) string {
	t.Helper()
	cmd := exec.Command(attuneBin, "hook", "claude", "--config", cfgPath)
	cmd.Stdin = bytes.NewReader(event)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("attune hook: %v\n%s", err, errOut.String())
	}
	t.Logf("stderr: %s", errOut.String())
	return out.String()
}

// A server that does not answer in time: the hand-off gives up within its
// bound, and the event is answered in-process.
func TestHandOffSlowServerFallsBackInTime(t *testing.T) {
	cfgPath, cfg := warmProject(t, "")
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	fakeWarm(t, cfgPath, func(c net.Conn) { <-hold })
	start := time.Now()
	_, err := handOff(t, cfg, warmPre("s", "rm -rf /"), 300*time.Millisecond)
	if err == nil || errors.Is(err, ErrNoWarm) || errors.Is(err, ErrWarmRefused) {
		t.Fatalf("slow server: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the hand-off took %s, its bound is 300ms", took)
	}
	out := runHookIn(t, cfgPath, warmPre("s", "rm -rf /"))
	if !strings.Contains(out, `"deny"`) {
		t.Errorf("answer: %s", out)
	}
}

// A socket that could be another user's is never used: a folder open to
// others, and (as root, who can give files away) a socket or folder owned
// by another user. The server behind it would answer allow.
func TestHandOffRefusesPlantedSocket(t *testing.T) {
	allowAll := func(ident string) func(c net.Conn) {
		allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`
		return func(c net.Conn) {
			c.Write([]byte(`{"ok":true,"ident":"` + ident + `","size":` + strconv.Itoa(len(allow)) + "}\n" + allow))
		}
	}
	t.Run("folder open to others", func(t *testing.T) {
		cfgPath, cfg := warmProject(t, "")
		ident, _ := Identity(cfg)
		fakeWarm(t, cfgPath, allowAll(ident))
		os.Chmod(filepath.Dir(WarmSocket(cfgPath)), 0o755)
		if _, err := handOff(t, cfg, warmPre("s", "rm -rf /"), HandoffTimeout); !errors.Is(err, ErrWarmRefused) {
			t.Fatalf("planted: %v", err)
		}
		out := runHookIn(t, cfgPath, warmPre("s", "rm -rf /"))
		if !strings.Contains(out, `"deny"`) {
			t.Errorf("answer: %s", out)
		}
	})
	t.Run("not a socket", func(t *testing.T) {
		cfgPath, cfg := warmProject(t, "")
		path := WarmSocket(cfgPath)
		secureDir(filepath.Dir(path))
		os.WriteFile(path, nil, 0o600)
		if _, err := handOff(t, cfg, warmPre("s", "echo"), HandoffTimeout); !errors.Is(err, ErrWarmRefused) {
			t.Fatalf("a file: %v", err)
		}
	})
	if os.Getuid() != 0 {
		t.Log("not root: files cannot be given to another user here; the owner checks are not exercised")
		return
	}
	for _, what := range []string{"socket", "folder"} {
		t.Run(what+" of another user", func(t *testing.T) {
			cfgPath, cfg := warmProject(t, "")
			ident, _ := Identity(cfg)
			fakeWarm(t, cfgPath, allowAll(ident))
			target := WarmSocket(cfgPath)
			if what == "folder" {
				target = filepath.Dir(target)
			}
			if err := os.Chown(target, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			_, err := handOff(t, cfg, warmPre("s", "rm -rf /"), HandoffTimeout)
			if !errors.Is(err, ErrWarmRefused) || !strings.Contains(err.Error(), "4242") {
				t.Fatalf("planted: %v", err)
			}
			out := runHookIn(t, cfgPath, warmPre("s", "rm -rf /"))
			if !strings.Contains(out, `"deny"`) {
				t.Errorf("answer: %s", out)
			}
		})
	}
}

// A server started before the packs changed answers for what it loaded:
// it refuses the event (answered in-process with the new guard) and exits,
// so that the next event's process may start a fresh one.
func TestHandOffStaleServerRefusesAndExits(t *testing.T) {
	cfgPath, cfg := warmProject(t, "")
	_, _, done := startWarmServer(t, cfgPath, cfg)
	if _, err := handOff(t, cfg, warmPre("s", "echo"), HandoffTimeout); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(filepath.Dir(cfgPath), "packs", "p", "p.lua")
	if err := os.WriteFile(prog, []byte(strings.Replace(toolProg, `c:find("rm %-rf")`, `c:find("rm %-rf") or c == "echo"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := handOff(t, cfg, warmPre("s", "echo"), HandoffTimeout)
	if !errors.Is(err, ErrWarmRefused) {
		t.Fatalf("changed pack: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stale server still runs")
	}
	if _, err := os.Lstat(WarmSocket(cfgPath)); err == nil {
		t.Error("the stale server left its socket")
	}
	out := runHookIn(t, cfgPath, warmPre("s-new", "echo")) // a new session: the new pin
	if !strings.Contains(out, `"deny"`) {
		t.Errorf("answer with the new guard: %s", out)
	}
}

// [harness] warm = true: the first event finds no server, is answered
// in-process and starts `attune hook serve --socket`; the next events are
// handed to it; a server killed outright leaves a stale socket, and the
// event after is answered in-process again (and starts a new server).
func TestWarmStartsOnFirstEvent(t *testing.T) {
	cfgPath, cfg := warmProject(t, "[harness]\nwarm = true\n")
	if !cfg.Warm {
		t.Fatal("[harness] warm = true was not read")
	}
	path := WarmSocket(cfgPath)
	first := runHookIn(t, cfgPath, warmPre("s", "rm -rf /"))
	if !strings.Contains(first, `"deny"`) {
		t.Fatalf("first event: %s", first)
	}
	pid := waitWarm(t, path)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	got, err := handOff(t, cfg, warmPre("s2", "rm -rf /"), HandoffTimeout)
	if err != nil {
		t.Fatalf("the started server: %v", err)
	}
	if strings.TrimSpace(first) != string(got) {
		t.Errorf("in-process %s, handed off %s", first, got)
	}
	if out := runHookIn(t, cfgPath, warmPre("s3", "rm -rf /")); strings.TrimSpace(out) != string(got) {
		t.Errorf("handed off by the hook process: %s", out)
	}
	// killed: its socket stays behind, stale
	syscall.Kill(pid, syscall.SIGKILL)
	for range 100 {
		if syscall.Kill(pid, 0) != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("no stale socket to test with: %v", err)
	}
	if out := runHookIn(t, cfgPath, warmPre("s4", "rm -rf /")); !strings.Contains(out, `"deny"`) {
		t.Errorf("after the server was killed: %s", out)
	}
	pid2 := waitWarm(t, path)
	t.Cleanup(func() { syscall.Kill(pid2, syscall.SIGKILL) })
	if pid2 == pid {
		t.Errorf("no new server")
	}
}

// waitWarm waits for a warm server to answer on path and returns its pid
// (written in the lock file beside the socket).
func waitWarm(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			data, _ := os.ReadFile(path + ".lock")
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 && syscall.Kill(pid, 0) == nil {
				return pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(path + ".log")
	t.Fatalf("no warm server answers on %s\nits log: %s", path, log)
	return 0
}
