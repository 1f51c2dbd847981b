package store_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

const (
	openChildEnv = "ATTUNE_STORE_OPEN_CHILD"
	openPathEnv  = "ATTUNE_STORE_OPEN_PATH"
)

// sqliteOpenChild is the child's side of TestSQLiteConcurrentFirstOpen
// (that test run again with openChildEnv set to the agreed moment): at
// that moment, open the store and append to it.
func sqliteOpenChild(at string) {
	ns, _ := strconv.ParseInt(at, 10, 64)
	time.Sleep(time.Until(time.Unix(0, ns)))
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, os.Getenv(openPathEnv))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	if _, err := s.Append(ctx, "log/"+strconv.Itoa(os.Getpid()), store.Any, [][]byte{[]byte("x")}, nil); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	s.Close()
	fmt.Println("OK")
}

// Processes opening a new SQLite store at once all get it: none sees the
// empty file another one just created ("an empty file that attune did not
// create"); every one's entry is in the store. And goroutines alike.
func TestSQLiteConcurrentFirstOpen(t *testing.T) {
	if at := os.Getenv(openChildEnv); at != "" { // the child this test started
		sqliteOpenChild(at)
		return
	}
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "new", "state.db")
		at := strconv.FormatInt(time.Now().Add(1500*time.Millisecond).UnixNano(), 10)
		const n = 30
		var cmds []*exec.Cmd
		outs := make([]strings.Builder, n)
		for k := range n {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteConcurrentFirstOpen$")
			cmd.Env = append(os.Environ(), openChildEnv+"="+at, openPathEnv+"="+path)
			cmd.Stdout, cmd.Stderr = &outs[k], &outs[k]
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		for k, cmd := range cmds {
			if err := cmd.Wait(); err != nil || !strings.Contains(outs[k].String(), "OK") {
				t.Errorf("round %d, process %d: %v %s", round, k, err, outs[k].String())
			}
		}
		s, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		logs := 0
		for _, cmd := range cmds {
			if l, err := s.Length(context.Background(), "log/"+strconv.Itoa(cmd.Process.Pid)); err == nil && l == 1 {
				logs++
			}
		}
		s.Close()
		if logs != n {
			t.Errorf("round %d: %d of %d entries in the store", round, logs, n)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".state.db.new-*")); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	}

	path := filepath.Join(t.TempDir(), "state.db")
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for range 30 {
		wg.Go(func() {
			s, err := store.OpenSQLite(context.Background(), path)
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
