package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// The kill test runs the test binary again as a child process
// (TestJournalSurvivesKill again, with ATTUNE_ENGINE_CHILD set: journalKillChild) that runs a
// session on a SQLite store and dies by SIGKILL mid-turn.
const (
	engineChildEnv = "ATTUNE_ENGINE_CHILD"
	enginePathEnv  = "ATTUNE_ENGINE_STORE"
	killCfg        = "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n"
	killEvery      = 40 // tool calls between two rounds
)

var killPrograms = map[string]string{"g.lua": `guard.tool("other/*", function(c, invoke) return invoke() end)`}

// journalKillChild is the child's side.
// It opens a turn, then calls a fast-path tool without end (each call
// journaled behind it), closing a round every killEvery calls and printing
// how many calls the journal then holds durably.
func journalKillChild(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, os.Getenv(enginePathEnv))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	e := testEngine(t, killCfg, killPrograms, func(o *Options) { o.Store = st })
	e.RegisterTool(echoTool("fs/read", "read"))
	i := start(t, e, "k", "main")
	if _, err := i.BeginTurn(ctx, TurnInput{}); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	fmt.Println("READY")
	for k := 0; ; k++ {
		if k%killEvery == 0 {
			if _, err := i.BeginRound(ctx); err != nil {
				fmt.Println("ERROR", err)
				os.Exit(2)
			}
		}
		if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: float64(k)}); out.Status != StatusOK {
			fmt.Println("ERROR", out)
			os.Exit(2)
		}
		if k%killEvery == killEvery-1 {
			if _, err := i.EndRound(ctx, RoundEnd{}); err != nil {
				fmt.Println("ERROR", err)
				os.Exit(2)
			}
			fmt.Printf("DURABLE %d\n", k+1)
		}
	}
}

// R3.11, R5.10: tool calls inside a turn are journaled behind the call, and
// a boundary returns only once everything before it is durable. The child
// is killed (SIGKILL) at a random moment mid-turn; the journal it leaves is
// a prefix of what it did: every call the last boundary covered, in order,
// each core outcome before its call, no gap; and the session hydrates with
// its turn and round open and goes on.
func TestJournalSurvivesKill(t *testing.T) {
	if os.Getenv(engineChildEnv) != "" { // the child this test started
		journalKillChild(t)
		return
	}
	for run := range 3 {
		path := filepath.Join(t.TempDir(), "state.db")
		cmd := exec.Command(os.Args[0], "-test.run=^TestJournalSurvivesKill$", "-test.count=1")
		cmd.Env = append(os.Environ(), engineChildEnv+"=1", enginePathEnv+"="+path)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		durable := 0
		want := 2 + run*3 // rounds to see before the kill
		for seen := 0; seen < want && lines.Scan(); {
			line := lines.Text()
			if strings.HasPrefix(line, "ERROR") {
				t.Fatal("child:", line)
			}
			if n, ok := strings.CutPrefix(line, "DURABLE "); ok {
				durable, _ = strconv.Atoi(n)
				seen++
			}
		}
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for lines.Scan() { // what it acknowledged before dying counts too
			if n, ok := strings.CutPrefix(lines.Text(), "DURABLE "); ok {
				durable, _ = strconv.Atoi(n)
			}
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("child ended with %v, want death by SIGKILL", err)
		}
		if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("child ended with %v, want death by SIGKILL", err)
		}
		if durable == 0 {
			t.Fatal("the child closed no round before being killed")
		}
		checkKilledJournal(t, path, durable)
	}
}

func checkKilledJournal(t *testing.T, path string, durable int) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := testEngine(t, killCfg, killPrograms, func(o *Options) { o.Store = st })
	e.RegisterTool(echoTool("fs/read", "read"))
	i, err := e.Start(ctx, StartOptions{ID: "k"})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := session.OpenJournal(st, i.Session(), "k").Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	calls, lastCore := 0, -1.0
	for n, en := range entries {
		switch en.Type {
		case session.Core:
			if en.Value != float64(calls) {
				t.Fatalf("entry %d: core outcome %v, want %d (a gap or a reordering)", n, en.Value, calls)
			}
			lastCore = en.Value.(float64)
		case session.Tool:
			if en.Value != float64(calls) || lastCore != float64(calls) {
				t.Fatalf("entry %d: tool call %v after core %v, want %d after %d", n, en.Value, lastCore, calls, calls)
			}
			calls++
		}
	}
	if calls < durable {
		t.Fatalf("the journal holds %d calls; the last boundary before the kill covered %d", calls, durable)
	}
	ts := i.Turn()
	turn, inTurn := ts.Turn, ts.InTurn
	if !inTurn || turn != 1 {
		t.Fatalf("hydrated turn %d open=%v, want turn 1 open", turn, inTurn)
	}
	if out := i.Tool(ctx, ToolCall{Path: "fs/read", Args: "after"}); out.Status != StatusOK {
		t.Fatalf("a call after the restart: %+v", out)
	}
	if _, err := i.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed with %d calls journaled, %d covered by the last boundary", calls, durable)
}
