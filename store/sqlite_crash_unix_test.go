//go:build unix

package store_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

// The SQLite crash tests below (Unix only: they kill with SIGKILL and read
// the wait status) run the test binary again as a child process
// (the test that starts it, run again with ATTUNE_STORE_CHILD set: sqliteChild) that writes to a store
// and dies by SIGKILL, with no Close and no chance to flush anything.
const (
	childEnv = "ATTUNE_STORE_CHILD"
	pathEnv  = "ATTUNE_STORE_PATH"
	// The crash child appends batches of crashBatch entries of crashEntry
	// bytes to crashLogs logs in turn, each batch with a call record.
	crashBatch = 16
	crashEntry = 1500
	crashLogs  = 3
)

// asChild runs the child's side when this process is the child a test
// started (childEnv names its mode) and reports whether it did: the child
// runs the test that started it, which then does only this.
func asChild(t *testing.T) bool {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return false
	}
	sqliteChild(t, mode)
	return true
}

// sqliteChild is the child's side in mode.
func sqliteChild(t *testing.T, mode string) {
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, os.Getenv(pathEnv))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	switch mode {
	case "ack":
		n, err := s.Append(ctx, "session/s1/journal", store.Any, [][]byte{[]byte("acknowledged")},
			&store.CallRecord{ID: "call-1", Input: []byte("in"), Result: []byte("out")})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(2)
		}
		fmt.Printf("ACK %d\n", n)
		os.Stdout.Sync()
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case "crash":
		fmt.Println("READY")
		os.Stdout.Sync()
		for i := 0; ; i++ {
			log := fmt.Sprintf("log-%d", i%crashLogs)
			n, err := s.Length(ctx, log)
			if err != nil {
				fmt.Println("ERROR", err)
				os.Exit(2)
			}
			batch := n / crashBatch
			entries := make([][]byte, crashBatch)
			for k := range entries {
				entries[k] = crashEntryData(batch, k)
			}
			call := &store.CallRecord{ID: fmt.Sprintf("b%d", batch), Input: []byte(log)}
			if _, err := s.Append(ctx, log, n, entries, call); err != nil {
				fmt.Println("ERROR", err)
				os.Exit(2)
			}
		}
	}
	fmt.Println("ERROR unknown mode", mode)
	os.Exit(2)
}

func crashEntryData(batch int64, k int) []byte {
	head := fmt.Sprintf("%d/%d:", batch, k)
	return append([]byte(head), bytes.Repeat([]byte{byte('a' + k)}, crashEntry-len(head))...)
}

// child starts the test binary as a child in mode on the store at path.
func child(t *testing.T, mode, path string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, pathEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}

// waitKilled waits for the child and checks that SIGKILL ended it.
func waitKilled(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child ended with %v, want death by SIGKILL", err)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want death by SIGKILL", err)
	}
}

// R5.10: an append is durable when it returns. The child appends, says ACK
// and kills itself at once; the entry and its call record are there.
func TestSQLiteDurableAck(t *testing.T) {
	if asChild(t) {
		return
	}
	path := sqlitePath(t)
	cmd, out := child(t, "ack", path)
	var lines []string
	for out.Scan() {
		lines = append(lines, out.Text())
	}
	waitKilled(t, cmd)
	if len(lines) != 1 || lines[0] != "ACK 1" {
		t.Fatalf("child said %q, want ACK 1", lines)
	}
	s := openSQLite(t, path)
	defer s.Close()
	es, err := s.Read(t.Context(), "session/s1/journal", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Seq != 1 || string(es[0].Data) != "acknowledged" {
		t.Fatalf("after the crash the log holds %v, want the acknowledged entry", es)
	}
	c, err := s.GetCall(t.Context(), "session/s1/journal", "call-1")
	if err != nil || string(c.Result) != "out" || c.Revision != 1 {
		t.Fatalf("after the crash GetCall = %+v, %v", c, err)
	}
}

// R5.10: an append cut short by a crash leaves nothing half-written. The
// child appends batches as fast as it can and is killed at a random moment;
// every log then holds whole batches, each with its call record, and the
// store goes on. Several crashes in a row hit the same file.
func TestSQLiteCrashMidAppend(t *testing.T) {
	if asChild(t) {
		return
	}
	path := sqlitePath(t)
	var total int64
	for round := range 6 {
		cmd, out := child(t, "crash", path)
		if !out.Scan() || out.Text() != "READY" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: child said %q, want READY", round, out.Text())
		}
		time.Sleep(time.Duration(20+rand.IntN(150)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for out.Scan() {
			if strings.HasPrefix(out.Text(), "ERROR") {
				t.Errorf("round %d: child: %s", round, out.Text())
			}
		}
		waitKilled(t, cmd)

		s := openSQLite(t, path)
		var sum int64
		for l := range crashLogs {
			sum += checkWholeBatches(t, s, fmt.Sprintf("log-%d", l))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if sum < total {
			t.Fatalf("round %d: %d entries, fewer than the %d before", round, sum, total)
		}
		t.Logf("round %d: %d entries after the crash", round, sum)
		total = sum
	}
	if total == 0 {
		t.Fatal("the children appended nothing before being killed")
	}
}

func checkWholeBatches(t *testing.T, s store.Store, log string) int64 {
	t.Helper()
	ctx := t.Context()
	n, err := s.Length(ctx, log)
	if err != nil {
		t.Fatal(err)
	}
	if n%crashBatch != 0 {
		t.Fatalf("%s: length %d is not a multiple of the batch size %d: a batch was cut", log, n, crashBatch)
	}
	es, err := s.Read(ctx, log, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(es)) != n {
		t.Fatalf("%s: Read gave %d entries, Length %d", log, len(es), n)
	}
	for i, e := range es {
		batch, k := int64(i/crashBatch), i%crashBatch
		if e.Seq != int64(i+1) || !bytes.Equal(e.Data, crashEntryData(batch, k)) {
			t.Fatalf("%s: entry %d (seq %d) is not whole: %.20q…", log, i+1, e.Seq, e.Data)
		}
	}
	for b := int64(0); b <= n/crashBatch; b++ {
		c, err := s.GetCall(ctx, log, fmt.Sprintf("b%d", b))
		switch {
		case b < n/crashBatch && (err != nil || c.Revision != (b+1)*crashBatch):
			t.Fatalf("%s: call record of batch %d: %+v, %v", log, b, c, err)
		case b == n/crashBatch && !errors.Is(err, store.ErrNotFound):
			t.Fatalf("%s: a call record for batch %d, which is not in the log: %+v, %v", log, b, c, err)
		}
	}
	return n
}
