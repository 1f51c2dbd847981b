//go:build e2e

package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/internal/pgtest"
	"github.com/attune-dev/attune/store"
)

// The team suite: OS processes stand in for machines sharing one
// PostgreSQL. This test binary is run again as each of them
// (TestTeamProcess, with ATTUNE_TEAM_ROLE set).

// TestTeamProcess is one machine of TestTeamOverPostgres; without
// ATTUNE_TEAM_ROLE it does nothing.
func TestTeamProcess(t *testing.T) {
	role := os.Getenv("ATTUNE_TEAM_ROLE")
	if role == "" {
		return
	}
	if err := teamProcess(role); err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func teamProcess(role string) error {
	ctx := context.Background()
	cfg, err := config.Load(os.Getenv("ATTUNE_TEAM_CONFIG"))
	if err != nil {
		return err
	}
	id, by := os.Getenv("ATTUNE_TEAM_ID"), os.Getenv("ATTUNE_TEAM_BY")
	n, _ := strconv.Atoi(os.Getenv("ATTUNE_TEAM_N"))
	deadline := time.Now().Add(90 * time.Second)
	var out sync.Mutex
	say := func(format string, a ...any) {
		out.Lock()
		fmt.Printf(format+"\n", a...)
		out.Unlock()
	}
	var e *Engine
	var inst *Instance
	for { // the server may be down while the machine starts
		if e, err = New(ctx, Options{Config: cfg}); err == nil {
			e.RegisterTool(HostTool{Path: "seen", Core: func(_ context.Context, c CoreCall) (any, error) {
				if role == "subscriber" {
					m := c.Args.(map[string]any)
					say("seen %v %v", m["by"], m["k"])
				}
				return nil, nil
			}})
			if inst, err = e.Start(ctx, StartOptions{ID: id, Bot: "main"}); err == nil {
				break
			}
			e.Close()
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer e.Close()
	say("ready")
	if role == "subscriber" {
		<-make(chan struct{}) // until killed: the parent reads what it saw
	}
	for k := range n {
		callID := fmt.Sprintf("%s-%d", by, k)
		for {
			o := inst.Method(ctx, MethodCall{Owner: "ledger", Method: "add", CallID: callID, Input: map[string]any{"by": by, "k": float64(k)}})
			if o.Status == StatusOK {
				say("ack %s %d %d", by, k, o.Revision)
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s never answered: %s", callID, o.Error)
			}
			time.Sleep(20 * time.Millisecond) // the same call id again (R5.6)
		}
	}
	say("done")
	return nil
}

// teamProc is one running machine.
type teamProc struct {
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string
	ready  chan struct{}
	exited chan struct{} // closed when the process ended, err set
	err    error
}

func (p *teamProc) get() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

func startTeamProc(t *testing.T, name, role, cfgPath, id, by string, n int) *teamProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTeamProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ATTUNE_TEAM_ROLE="+role, "ATTUNE_TEAM_CONFIG="+cfgPath, "ATTUNE_TEAM_ID="+id,
		"ATTUNE_TEAM_BY="+by, "ATTUNE_TEAM_N="+strconv.Itoa(n), "ATTUNE_HOST="+name, "ATTUNE_AUTHOR="+name+"@team")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &teamProc{name: name, cmd: cmd, ready: make(chan struct{}), exited: make(chan struct{})}
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			t.Errorf("%s: still running after SIGKILL", name)
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			if line == "ready" {
				once.Do(func() { close(p.ready) })
				continue
			}
			p.mu.Lock()
			p.lines = append(p.lines, line)
			p.mu.Unlock()
		}
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p
}

// TestTeamOverPostgres: four writer processes (two machines from each of
// two checkouts of one repository at different paths) append to one
// project owner while PostgreSQL (fsync on) restarts, then is killed with
// SIGKILL of its postmaster and started again; a fifth process only
// subscribes. Every command is retried with its call id until answered.
// Then: every acknowledged action is in the log exactly once (no
// duplicates), the log has every writer's actions and no others (no
// gaps), each action records its writer's author and host, and the
// subscriber saw every action once, in log order (R5.6, R5.8, R5.10).
func TestTeamOverPostgres(t *testing.T) {
	srv := pgtest.New(t)
	root := t.TempDir()
	alice := feedCheckout(t, filepath.Join(root, "home", "alice", "web"), srv.URL())
	bob := feedCheckout(t, filepath.Join(root, "src", "bob", "web-clone"), srv.URL())
	const writers, n = 4, 40
	sub := startTeamProc(t, "watcher", "subscriber", bob.File, "watch", "", 0)
	select {
	case <-sub.ready:
	case <-sub.exited:
		t.Fatalf("the subscriber ended: %v %q", sub.err, sub.get())
	case <-time.After(60 * time.Second):
		t.Fatal("the subscriber did not start")
	}
	began := time.Now()
	var ws []*teamProc
	for k := range writers {
		cfg := []*config.Config{alice, bob}[k%2]
		name := fmt.Sprintf("m%d", k)
		ws = append(ws, startTeamProc(t, name, "writer", cfg.File, "w"+strconv.Itoa(k), name, n))
	}
	acks := func() int {
		c := 0
		for _, w := range ws {
			for _, l := range w.get() {
				if strings.HasPrefix(l, "ack ") {
					c++
				}
			}
		}
		return c
	}
	waitAcks := func(want int) {
		deadline := time.Now().Add(60 * time.Second)
		for acks() < want {
			if time.Now().After(deadline) {
				for _, w := range append(ws, sub) {
					t.Logf("%s: %q", w.name, w.get())
				}
				t.Fatalf("%d acknowledged, waiting for %d", acks(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitAcks(writers * n / 4)
	t.Logf("%v: %d acknowledged; restarting the server", time.Since(began), acks())
	srv.Restart()
	waitAcks(writers * n / 2)
	t.Logf("%v: %d acknowledged; killing the postmaster", time.Since(began), acks())
	srv.Kill()
	time.Sleep(200 * time.Millisecond)
	srv.Start()
	t.Logf("%v: %d acknowledged; the server is back", time.Since(began), acks())
	for _, w := range ws {
		select {
		case <-w.exited:
			if w.err != nil {
				t.Fatalf("%s: %v\n%s", w.name, w.err, strings.Join(w.get(), "\n"))
			}
		case <-time.After(120 * time.Second):
			t.Fatalf("%s did not finish", w.name)
		}
	}

	t.Logf("%v: the writers are done", time.Since(began))

	// The log, read by a host of its own.
	ctx := context.Background()
	st, err := store.OpenPostgres(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.Read(ctx, ownerLog(ScopeProject, "team", "ledger"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	inLog := map[string]int64{}
	for _, a := range decodeActions(entries) {
		m, _ := a.Action.(map[string]any)
		key := fmt.Sprintf("%v %v", m["by"], m["k"])
		if prev, dup := inLog[key]; dup {
			t.Fatalf("action %s logged twice (seq %d and %d)", key, prev, a.Seq)
		}
		inLog[key] = a.Seq
		if a.Author != fmt.Sprint(m["by"])+"@team" || a.Host != fmt.Sprint(m["by"]) || a.At.IsZero() {
			t.Fatalf("action %s: author %q host %q at %v", key, a.Author, a.Host, a.At)
		}
		logged = append(logged, key)
	}
	if len(entries) != writers*n {
		t.Fatalf("the log has %d entries, want %d", len(entries), writers*n)
	}
	for _, w := range ws {
		acked := 0
		for _, l := range w.get() {
			var by string
			var k int
			var rev int64
			if _, err := fmt.Sscanf(l, "ack %s %d %d", &by, &k, &rev); err != nil {
				continue
			}
			acked++
			key := by + " " + strconv.Itoa(k)
			if seq, ok := inLog[key]; !ok || seq > rev {
				t.Fatalf("acknowledged %s at revision %d: logged at %d (%v)", key, rev, seq, ok)
			}
		}
		if acked != n {
			t.Fatalf("%s: %d acknowledged, want %d", w.name, acked, n)
		}
	}

	// The subscriber saw every action once, in log order.
	deadline := time.Now().Add(30 * time.Second)
	var seen []string
	for {
		seen = seen[:0]
		for _, l := range sub.get() {
			if s, ok := strings.CutPrefix(l, "seen "); ok {
				seen = append(seen, s)
			}
		}
		if len(seen) >= len(logged) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	seen = seen[:0]
	for _, l := range sub.get() {
		if s, ok := strings.CutPrefix(l, "seen "); ok {
			seen = append(seen, s)
		}
	}
	if got, want := jsonOf(seen), jsonOf(logged); got != want {
		t.Fatalf("the subscriber saw %d actions:\n%s\nthe log has %d:\n%s", len(seen), got, len(logged), want)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
