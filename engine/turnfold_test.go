package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// The compact state of a session (sessionsnapshot.go) against the whole
// journal read from its start: on random sessions, wherever the state was
// stored, however it was damaged, the instance comes back the same.

const foldCfg = "[bots.main]\nbehaviors = [\"a\"]\nceiling = [\"exec\"]\n"

var foldPrograms = map[string]string{"a.lua": `
hook.turn("start", function(b) notify("turn " .. b.turn, "ambient") end)
hook.round("start", function(b) if b.round % 2 == 0 then notify("again " .. b.round, "activating") end end)
hook.round("end", function(b) if b.round == 1 then notify("more", "activating") end end)
hook.tool("sh", {post = function(c, o)
  if type(c.args) == "string" and #c.args % 3 == 0 then notify("saw " .. c.args, "ambient") end
  if c.args == "user" then notify("for you", "user") end
  return "ran"
end})`}

// foldState is the fold's state as stored, without the sum: what a
// bring-back comes to.
func foldState(t *testing.T, f *turnFold) string {
	t.Helper()
	f.mu.Lock()
	st := f.stateLocked("")
	f.mu.Unlock()
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fullFold folds the instance's whole journal, ignoring any stored state.
func fullFold(t *testing.T, i *Instance) *turnFold {
	t.Helper()
	s := &sessionState{i: i, j: session.OpenJournal(i.e.st, i.rec.Session, i.id)}
	f := newFold(s)
	if _, err := s.j.Track(context.Background(), f, 0, nil); err != nil {
		t.Fatal(err)
	}
	return f
}

// compactFold brings the instance's fold back as a new process does: from
// the stored state when it holds.
func compactFold(t *testing.T, i *Instance) *turnFold {
	t.Helper()
	s := &sessionState{i: i, j: session.OpenJournal(i.e.st, i.rec.Session, i.id)}
	f, err := s.follow(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkFold holds that the live fold, the one brought back from the
// stored state and the whole journal's agree, and so does the instance.
func checkFold(t *testing.T, i *Instance, where string) {
	t.Helper()
	ctx := context.Background()
	live, err := i.sess.Load().current(ctx)
	if err != nil {
		t.Fatal(where, err)
	}
	full := foldState(t, fullFold(t, i))
	if got := foldState(t, live); got != full {
		t.Fatalf("%s: the live fold\n%s\nthe whole journal's\n%s", where, got, full)
	}
	if got := foldState(t, compactFold(t, i)); got != full {
		t.Fatalf("%s: brought back from the stored state\n%s\nthe whole journal's\n%s", where, got, full)
	}
}

// checkInstance holds that an instance just brought back is what the
// whole journal says (after a rollback, rolled is true: its generation is
// a new one, past every one the journal held before the cut).
func checkInstance(t *testing.T, i *Instance, where string, rolled bool) {
	t.Helper()
	f := fullFold(t, i)
	ss := i.sess.Load()
	ss.mu.Lock()
	if rolled && ss.gen > f.gen {
		f.gen = ss.gen
	}
	got := fmt.Sprint(ss.turn, ss.round, ss.inTurn, ss.inRound, ss.gen, ss.activated, ss.fresh, ss.turnPin)
	ss.mu.Unlock()
	if want := fmt.Sprint(f.turn, f.round, f.inTurn, f.inRound, f.gen, f.activated, f.fresh, f.turnPin); got != want {
		t.Fatalf("%s: instance %s, the whole journal %s", where, got, want)
	}
	g, _ := json.Marshal(ss.book.State())
	w, _ := json.Marshal(f.book.State())
	if !bytes.Equal(g, w) {
		t.Fatalf("%s: notebook\n%s\nthe whole journal's\n%s", where, g, w)
	}
}

// R3.11: random sessions (turns, rounds, notes placed, consumed and
// expired, calls left open and completed, fast-path calls written behind,
// rollbacks, hydrations, restarts, and a second engine writing to the same
// journal as another process would) with the state stored every 1 to 9
// entries: after every step the fold kept as entries are stored, the one
// brought back from the stored state and the one read from the whole
// journal are the same, and so is every instance brought back.
func TestTurnFoldRandom(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(24) {
		rng := rand.New(rand.NewPCG(seed, 7))
		st := store.NewMemory()
		mk := func() *Engine {
			e := testEngine(t, foldCfg, foldPrograms, func(o *Options) { o.Store = st })
			e.stateEvery = 1 + rng.IntN(9)
			e.RegisterTool(echoTool("sh", "exec"))
			e.RegisterTool(echoTool("q", "exec"))
			return e
		}
		e := mk()
		i := start(t, e, "x", "main")
		var notes []string
		ended := []int{0}
		for step := range 160 {
			op := rng.IntN(20)
			where := fmt.Sprintf("seed %d step %d op %d", seed, step, op)
			keep := func(r BoundaryResult, err error) {
				if err == nil {
					for _, n := range r.Notes {
						notes = append(notes, n.ID)
					}
				}
			}
			switch {
			case op < 2:
				keep(i.BeginTurn(ctx, TurnInput{Input: map[string]any{"n": float64(step), "s": "go"}, ContextFresh: rng.IntN(2) == 0}))
			case op < 4:
				keep(i.BeginRound(ctx))
			case op < 5:
				keep(i.EndRound(ctx, RoundEnd{HostContinue: rng.IntN(2) == 0}))
			case op < 6:
				turn := i.Turn().Turn
				r, err := i.EndTurn(ctx)
				keep(r, err)
				if err == nil {
					ended = append(ended, turn)
				}
			case op < 10:
				args := []string{"a", "abc", "user", "abcdef"}[rng.IntN(4)]
				i.ToolBegin(ctx, ToolCall{Path: "sh", Args: args}, fmt.Sprintf("k%d", rng.IntN(4)))
			case op < 13:
				i.ToolEnd(ctx, ToolCall{Path: "sh", Args: "late"}, fmt.Sprintf("k%d", rng.IntN(5)), map[string]any{"out": "x"}, []string{"", "", "boom"}[rng.IntN(3)])
			case op < 15:
				i.Tool(ctx, ToolCall{Path: "q", Args: float64(step)})
			case op < 16:
				if len(notes) > 0 {
					_ = i.Consume(ctx, notes[rng.IntN(len(notes))])
				}
			case op < 17:
				if err := i.Hydrate(ctx); err != nil {
					t.Fatal(where, err)
				}
				checkInstance(t, i, where+" hydrated", false)
			case op < 18:
				var err error
				if i, err = e.Restart(ctx, "x"); err != nil {
					t.Fatal(where, err)
				}
				checkInstance(t, i, where+" restarted", false)
			case op < 19:
				if rng.IntN(3) == 0 && len(ended) > 1 {
					to := ended[rng.IntN(len(ended))]
					if err := i.Rollback(ctx, to); err != nil {
						t.Fatal(where, err)
					}
					ended = ended[:1]
					checkInstance(t, i, where+" rolled back", true)
				}
			default: // another process writes to the journal
				e2 := mk()
				j, err := e2.Restart(ctx, "x")
				if err != nil {
					t.Fatal(where, err)
				}
				checkInstance(t, j, where+" another process", false)
				if rng.IntN(2) == 0 {
					j.ToolBegin(ctx, ToolCall{Path: "sh", Args: "abc"}, fmt.Sprintf("k%d", rng.IntN(4)))
				} else {
					j.ToolEnd(ctx, ToolCall{Path: "sh", Args: "x"}, fmt.Sprintf("k%d", rng.IntN(4)), "out", "")
				}
				j.Stop()
			}
			if err := i.sess.Load().flush(ctx); err != nil {
				t.Fatal(where, err)
			}
			if rng.IntN(2) == 0 { // not always: a write after another process's must read its entries first
				checkFold(t, i, where)
			}
		}
	}
}

// R3.11: a stored state that does not hold is never believed: one that
// does not decode, of another version, whose sum or seq does not match
// the journal (a journal shorter than it, or rolled back and written again
// by a process that died before it deleted the state), or whose open
// calls are not tool-open entries. The instance is then brought back from
// the whole journal, the same as without any state, and a state that
// holds is stored again.
func TestTurnStateFallback(t *testing.T) {
	ctx := context.Background()
	st := &readCounter{Store: store.NewMemory()}
	e := testEngine(t, foldCfg, foldPrograms, func(o *Options) { o.Store = st })
	e.stateEvery = 4
	e.RegisterTool(echoTool("sh", "exec"))
	i := start(t, e, "x", "main")
	ok(t)(i.BeginTurn(ctx, TurnInput{Input: "go"}))
	ok(t)(i.BeginRound(ctx))
	for k := range 30 {
		i.ToolBegin(ctx, ToolCall{Path: "sh", Args: "abc"}, fmt.Sprint("k", k))
		if k%3 != 0 {
			if _, err := i.ToolEnd(ctx, ToolCall{Path: "sh"}, fmt.Sprint("k", k), "out", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	log := session.LogName(i.Session(), i.ID())
	total, err := st.Length(ctx, log)
	if err != nil {
		t.Fatal(err)
	}
	good, err := st.GetRecord(ctx, sessionSnapshotKind, log)
	if err != nil {
		t.Fatal("no state stored:", err)
	}
	want := foldState(t, fullFold(t, i))
	var held turnState
	if err := json.Unmarshal(good, &held); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(*turnState)) []byte {
		c := held
		c.Open = append([]json.RawMessage(nil), held.Open...)
		f(&c)
		data, _ := json.Marshal(c)
		return data
	}
	bad := map[string][]byte{
		"not JSON":         []byte(`{"v":2,"seq":`),
		"another version":  edit(func(s *turnState) { s.V = 1 }),
		"another sum":      edit(func(s *turnState) { s.Sum = entrySum([]byte("other")) }),
		"past the journal": edit(func(s *turnState) { s.Seq = total + 5 }),
		"seq 0":            edit(func(s *turnState) { s.Seq = 0 }),
		"a wrong open call": edit(func(s *turnState) {
			s.Open = append(s.Open, json.RawMessage(`{"t":"tool","call_id":"c"}`))
		}),
	}
	for name, data := range bad {
		if err := st.PutRecord(ctx, sessionSnapshotKind, log, data); err != nil {
			t.Fatal(err)
		}
		st.n.Store(0)
		j, err := e.Restart(ctx, "x")
		if err != nil {
			t.Fatal(name, err)
		}
		i = j
		read := st.n.Load()
		if read < total {
			t.Fatalf("%s: read %d entries of %d, want the whole journal", name, read, total)
		}
		checkInstance(t, i, name, false)
		if got := foldState(t, i.sess.Load().fold.Load()); got != want {
			t.Fatalf("%s: brought back\n%s\nwant\n%s", name, got, want)
		}
		if now, err := st.GetRecord(ctx, sessionSnapshotKind, log); err != nil || bytes.Equal(now, data) {
			t.Fatalf("%s: no state that holds stored again (%v)", name, err)
		}
		if got := foldState(t, compactFold(t, i)); got != want {
			t.Fatalf("%s: from the state stored again\n%s\nwant\n%s", name, got, want)
		}
	}
	// a journal rolled back and written again under a state left behind
	if err := st.PutRecord(ctx, sessionSnapshotKind, log, good); err != nil {
		t.Fatal(err)
	}
	if err := st.Truncate(ctx, log, held.Seq-1); err != nil {
		t.Fatal(err)
	}
	other, _ := json.Marshal(session.Entry{Type: session.Trace, Kind: "print", Key: "another entry there"})
	if _, err := st.Append(ctx, log, store.Any, [][]byte{other, other}, nil); err != nil {
		t.Fatal(err)
	}
	n, _ := st.Length(ctx, log)
	st.n.Store(0)
	if i, err = e.Restart(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if read := st.n.Load(); read < n {
		t.Fatalf("rolled back under the state: read %d entries of %d", read, n)
	}
	checkInstance(t, i, "rolled back under the state", false)
}

// foldChildEnv makes TestTurnStateSurvivesKill, run again as its child, turnStateKillChild.
const foldChildEnv = "ATTUNE_ENGINE_FOLD_CHILD"

// turnStateKillChild is the child's side.
// On a SQLite store it runs turns of calls left open and completed,
// notes and fast-path calls, storing the session's state after every
// write, until it is killed.
func turnStateKillChild(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, os.Getenv(enginePathEnv))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	e := testEngine(t, foldCfg, foldPrograms, func(o *Options) { o.Store = st })
	e.stateEvery = 1
	e.RegisterTool(echoTool("sh", "exec"))
	e.RegisterTool(echoTool("q", "exec"))
	i := start(t, e, "x", "main")
	fmt.Println("READY")
	for k := 0; ; k++ {
		if k%50 == 0 {
			i.BeginTurn(ctx, TurnInput{Input: float64(k)})
			i.BeginRound(ctx)
		}
		i.ToolBegin(ctx, ToolCall{Path: "sh", Args: "abc"}, fmt.Sprint("k", k%7))
		i.Tool(ctx, ToolCall{Path: "q", Args: float64(k)})
		if k%3 != 0 {
			i.ToolEnd(ctx, ToolCall{Path: "sh"}, fmt.Sprint("k", (k+3)%7), "out", "")
		}
		if k%50 == 49 {
			i.EndRound(ctx, RoundEnd{})
			i.EndTurn(ctx)
		}
	}
}

// R3.11, R5.10: a process killed (SIGKILL) at a random moment, with a
// state stored after every write (so often between a journal write and the
// state's), leaves a state that holds or is refused: the session brought
// back from it is the one the whole journal gives, and goes on.
func TestTurnStateSurvivesKill(t *testing.T) {
	if os.Getenv(foldChildEnv) != "" { // the child this test started
		turnStateKillChild(t)
		return
	}
	ctx := context.Background()
	for run := range 4 {
		path := filepath.Join(t.TempDir(), "state.db")
		cmd := exec.Command(os.Args[0], "-test.run=^TestTurnStateSurvivesKill$", "-test.count=1")
		cmd.Env = append(os.Environ(), foldChildEnv+"=1", enginePathEnv+"="+path)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		for lines.Scan() && lines.Text() != "READY" {
			if strings.HasPrefix(lines.Text(), "ERROR") {
				t.Fatal("child:", lines.Text())
			}
		}
		time.Sleep(time.Duration(50+run*150+rand.IntN(100)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for lines.Scan() {
		}
		cmd.Wait()
		st, err := store.OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		e := testEngine(t, foldCfg, foldPrograms, func(o *Options) { o.Store = st })
		e.RegisterTool(echoTool("sh", "exec"))
		i, err := e.Start(ctx, StartOptions{ID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := st.Length(ctx, session.LogName(i.Session(), "x")); n < 10 {
			t.Fatalf("run %d: the child journaled %d entries before it was killed", run, n)
		}
		checkInstance(t, i, fmt.Sprint("run ", run), false)
		checkFold(t, i, fmt.Sprint("run ", run))
		i.ToolBegin(ctx, ToolCall{Path: "sh", Args: "after"}, "after")
		if _, err := i.ToolEnd(ctx, ToolCall{Path: "sh"}, "after", "out", ""); err != nil {
			t.Fatal(err)
		}
		checkFold(t, i, fmt.Sprint("run ", run, " after"))
		st.Close()
	}
}

// R3.11: a long-lived instance reads nothing of its journal to complete a
// call it left open, however many calls its open turn (and the turns
// before) held; an instance brought back deep in a long open turn reads
// the entries after the stored state only.
func TestTurnFoldReadsNoHistory(t *testing.T) {
	ctx := context.Background()
	st := &readCounter{Store: store.NewMemory()}
	e := testEngine(t, foldCfg, foldPrograms, func(o *Options) { o.Store = st })
	e.RegisterTool(echoTool("sh", "exec"))
	i := start(t, e, "x", "main")
	pair := func(key string) {
		t.Helper()
		if op := i.ToolBegin(ctx, ToolCall{Path: "sh", Args: "ab"}, key); op.Status != StatusPending {
			t.Fatal(op)
		}
		if _, err := i.ToolEnd(ctx, ToolCall{Path: "sh"}, key, "out", ""); err != nil {
			t.Fatal(err)
		}
	}
	for turn := range 3 {
		ok(t)(i.BeginTurn(ctx, TurnInput{}))
		ok(t)(i.BeginRound(ctx))
		for k := range 700 {
			pair(fmt.Sprint(turn, "-", k))
		}
		if turn < 2 {
			ok(t)(i.EndRound(ctx, RoundEnd{}))
			ok(t)(i.EndTurn(ctx))
		}
	}
	st.n.Store(0)
	pair("last")
	if n := st.n.Load(); n != 0 {
		t.Fatalf("completing a call read %d journal entries", n)
	}
	st.n.Store(0)
	i, err := e.Restart(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if n := st.n.Load(); n > stateEvery+1 {
		t.Fatalf("bringing the instance back read %d journal entries", n)
	}
	st.n.Store(0)
	pair("after")
	if n := st.n.Load(); n != 0 {
		t.Fatalf("completing a call after the restart read %d journal entries", n)
	}
	if ts := i.Turn(); ts.Turn != 3 || !ts.InTurn || !ts.InRound {
		t.Fatalf("brought back as %+v", ts)
	}
}
