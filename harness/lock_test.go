package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
)

// The session lock (flock on Unix, LockFileEx on Windows) excludes a
// second holder of the same session even in the same process (each
// lockSession has its own handle), leaves other sessions free, waits no
// longer than its ctx, and is free again once released.
func TestLockSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locks")
	unlock, err := lockSession(t.Context(), dir, "claude/s")
	if err != nil {
		t.Fatal(err)
	}
	other, err := lockSession(t.Context(), dir, "claude/other")
	if err != nil {
		t.Fatalf("another session is locked too: %v", err)
	}
	other()

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if again, err := lockSession(ctx, dir, "claude/s"); err == nil {
		again()
		t.Fatal("a second lock of a held session was granted")
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a held session: %v, want the ctx's deadline", err)
	}

	got := make(chan error, 1)
	go func() {
		release, err := lockSession(t.Context(), dir, "claude/s")
		if err == nil {
			release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the waiter got the lock while it was held (%v)", err)
	case <-time.After(30 * time.Millisecond):
	}
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the waiter after the release: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not get the lock after its release")
	}
}

// Session locks live in a folder only their user can reach: created 0700
// with 0600 files; a folder open to others is refused with what to do;
// a memory or PostgreSQL store's locks are in the user's runtime folder,
// never a shared temporary folder.
func TestLockDirPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "locks")
	unlock, err := lockSession(t.Context(), dir, "claude/s")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if runtime.GOOS != "windows" {
		st, _ := os.Stat(dir)
		fi, _ := os.Stat(lockName(dir, "claude/s"))
		if st.Mode().Perm() != 0o700 || fi.Mode().Perm() != 0o600 {
			t.Errorf("modes %v %v, want 0700 and 0600", st.Mode(), fi.Mode())
		}
		os.Chmod(dir, 0o755)
		if _, err := lockSession(t.Context(), dir, "claude/s"); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "chmod 700") {
			t.Errorf("a folder open to others: %v", err)
		}
	}
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(t.TempDir(), "run"))
	cfg := mustConfigText(t, "[engine]\nstore = \"memory:\"\n")
	if d := lockDir(cfg); !strings.HasPrefix(d, filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "attune")+string(filepath.Separator)) {
		t.Errorf("a memory store's locks in %s", d)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	if d := lockDir(cfg); strings.HasPrefix(d, os.TempDir()) && !strings.Contains(d, "attune-") {
		t.Errorf("a memory store's locks in %s", d)
	}
}

// A session whose lock file is removed while held (hook serve evicting
// it) is still held by one holder at a time: a waiter that opened the old
// file takes the new one.
func TestLockRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locks")
	l, err := takeLock(t.Context(), dir, "claude/s")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *sessionLock, 1)
	go func() {
		w, err := takeLock(t.Context(), dir, "claude/s")
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	time.Sleep(30 * time.Millisecond) // the waiter has the old file open
	l.remove()
	w := <-got
	defer w.release()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if again, err := takeLock(ctx, dir, "claude/s"); err == nil {
		again.release()
		t.Fatal("two holders of one session after its lock file was removed")
	}
}

func mustConfigText(t *testing.T, text string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "attune.toml")
	os.WriteFile(path, []byte(text), 0o644)
	return mustConfig(t, path)
}

// A warm runtime keeps a session's lock file open between events and
// locks it again: the lock still excludes other holders, is free between
// events, and a kept file whose name was removed meanwhile (the session
// evicted, by this process or another) is not the one locked next time.
func TestWarmLockFiles(t *testing.T) {
	r := &Runtime{warm: true, dir: filepath.Join(t.TempDir(), "locks")}
	defer r.locks.close()
	busy := func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		l, err := takeLock(ctx, r.dir, "claude/s")
		if err == nil {
			l.release()
		}
		return err != nil
	}
	unlock, err := r.lockSession(t.Context(), "claude/s")
	if err != nil {
		t.Fatal(err)
	}
	if !busy() {
		t.Fatal("a warm runtime's session lock did not exclude another holder")
	}
	unlock()
	name := lockName(r.dir, "claude/s")
	kept := r.locks.files[name]
	if kept == nil {
		t.Fatal("the lock file was not kept open")
	}
	if busy() {
		t.Fatal("the kept lock file is still locked between events")
	}
	unlock, err = r.lockSession(t.Context(), "claude/s")
	if err != nil {
		t.Fatal(err)
	}
	if !busy() {
		t.Fatal("the kept lock file, locked again, did not exclude another holder")
	}
	unlock()
	if r.locks.files[name] != kept {
		t.Fatal("the lock file was opened again, not the kept one used")
	}
	l, err := takeLock(t.Context(), r.dir, "claude/s") // another process evicts it
	if err != nil {
		t.Fatal(err)
	}
	l.remove()
	unlock, err = r.lockSession(t.Context(), "claude/s")
	if err != nil {
		t.Fatal(err)
	}
	if !busy() {
		t.Fatal("after its name was removed, the kept file was locked instead of the name's")
	}
	unlock()
	if r.locks.files[name] == kept {
		t.Fatal("the file of a removed name is still kept")
	}
}
