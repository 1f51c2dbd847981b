package hook

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The session lock (flock on Unix, LockFileEx on Windows) excludes a
// second holder of the same session even in the same process (each
// lockSession has its own handle), leaves other sessions free, waits no
// longer than its ctx, and is free again once released.
func TestLockSession(t *testing.T) {
	dir := t.TempDir()
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
