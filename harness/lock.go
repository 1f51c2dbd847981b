package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/attune-dev/attune/config"
)

// Runtime files (session locks, reaches) live where only their user can
// reach them: another user who can open a lock file can flock it, and then
// every event of that session waits its whole timeout. So they live beside
// an SQLite store (FILE.locks/, mode 0700: the store's folder is the
// user's), else in the user's runtime folder: $XDG_RUNTIME_DIR/attune, or
// else the user's cache folder (os.UserCacheDir)/attune/locks, under a name
// derived from the store spec; never in a shared temporary folder. Folders
// are created with mode 0700 and lock files with 0600; a folder owned by
// another user or open to others (any group or other permission bit) is
// refused with what to do (secureDir). A memory store is per process: its
// locks still serialize the events of one `hook serve`.
//
// The lock is flock on Unix and LockFileEx on Windows, held by the open
// handle (lock_unix.go, lock_windows.go), polled until the event's ctx is
// done. It is kept by hand rather than on github.com/gofrs/flock: that
// library polls the same way (TryLockContext) and adds nothing here, while
// a session's lock file is removed when `hook serve` evicts the session,
// which needs the check flock does not make: after taking the lock, that the
// path still names the file locked (else a waiter holding the removed file
// and a newcomer on a new one would both hold the session).

// lockDir is the folder of a configuration's session locks.
func lockDir(cfg *config.Config) string {
	kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir)
	if err == nil && kind == config.StoreSQLite {
		return target + ".locks"
	}
	sum := sha256.Sum256([]byte(cfg.Engine.Store + "\x00" + cfg.Dir))
	return filepath.Join(userRuntimeDir(os.Getenv), "locks-"+hex.EncodeToString(sum[:8]))
}

// userRuntimeDir is the user's own folder for attune's runtime files.
func userRuntimeDir(getenv func(string) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "attune")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "attune", "locks")
	}
	// no home: a folder of the user's own under the temporary folder,
	// checked like any other (a predictable name another user could take
	// first is refused, not used)
	return filepath.Join(os.TempDir(), fmt.Sprintf("attune-%d", os.Getuid()))
}

// ErrUnsafeDir: a runtime folder is owned by another user or open to
// others.
var ErrUnsafeDir = errors.New("unsafe runtime folder")

// secureDir creates dir (and missing parents) with mode 0700 and checks
// that it is the user's own and closed to others.
func secureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session lock: %w", err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("session lock: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("session lock: %w: %s is not a folder (a link?); remove it", ErrUnsafeDir, dir)
	}
	if runtime.GOOS == "windows" { // the folder's ACL is the user profile's
		return nil
	}
	if uid, ok := FileOwner(st); ok && uid != os.Getuid() {
		return fmt.Errorf("session lock: %w: %s belongs to user %d, not to this user (%d): another user could hold the session locks; remove it or set engine.store elsewhere", ErrUnsafeDir, dir, uid, os.Getuid())
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("session lock: %w: %s has mode %04o, open to other users, who could hold the session locks; run chmod 700 %s", ErrUnsafeDir, dir, st.Mode().Perm(), dir)
	}
	return nil
}

// lockName is the lock file of one session.
func lockName(dir, session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock")
}

// sessionLock is a held session lock.
type sessionLock struct {
	f    *os.File
	name string
}

// release lets the session go.
func (l *sessionLock) release() {
	_ = unlockFile(l.f)
	l.f.Close()
}

// remove deletes the lock file and lets the session go: a waiter that
// opened the old file finds it removed and opens the new one.
func (l *sessionLock) remove() {
	_ = os.Remove(l.name)
	l.release()
}

// lockSession takes the exclusive lock of one session (a lock on its own
// file, so it holds across processes and between goroutines of one
// process alike) and returns its release. It waits until ctx is done.
func lockSession(ctx context.Context, dir, session string) (func(), error) {
	l, err := takeLock(ctx, dir, session)
	if err != nil {
		return nil, err
	}
	return l.release, nil
}

func takeLock(ctx context.Context, dir, session string) (*sessionLock, error) {
	return takeLockWith(ctx, dir, session, nil)
}

// takeLockWith is takeLock trying first f, a file of the session's lock
// kept open from before (nil: none), which it closes when the name no
// longer names f's file. The folder is checked (secureDir) before a file
// is opened in it; a kept file was opened in a folder found safe, and is
// used only while its name still names it (checked after the lock, as for
// any file), so no one could have put another file in its place.
func takeLockWith(ctx context.Context, dir, session string, f *os.File) (*sessionLock, error) {
	checked := false
	name := lockName(dir, session)
	wait := 200 * time.Microsecond
	for {
		if f == nil {
			if !checked {
				if err := secureDir(dir); err != nil {
					return nil, err
				}
				checked = true
			}
			var err error
			if f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
				return nil, fmt.Errorf("session lock: %w", err)
			}
		}
		for {
			locked, err := tryLock(f)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("session lock %s: %w", name, err)
			}
			if locked {
				break
			}
			select {
			case <-ctx.Done():
				f.Close()
				return nil, fmt.Errorf("session %s is busy (lock %s): %w", session, name, ctx.Err())
			case <-time.After(wait):
			}
			if wait < 10*time.Millisecond {
				wait *= 2
			}
		}
		// the file may have been removed (an evicted session) between the
		// open and the lock: then the lock is of a file no one else will
		// open; take the one the name now has
		held, err1 := f.Stat()
		now, err2 := os.Stat(name)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return &sessionLock{f: f, name: name}, nil
		}
		_ = unlockFile(f)
		f.Close()
		f = nil
		if err2 != nil && !errors.Is(err2, fs.ErrNotExist) {
			return nil, fmt.Errorf("session lock: %w", err2)
		}
	}
}

// lockFiles are the session lock files a warm runtime keeps open between
// events, unlocked: taking a session's lock is then the flock and the
// check that the name still names the file, without checking the folder,
// opening the file and closing it again each time (nine system calls of
// the fifteen an event made besides SQLite's).
// A kept file whose name was removed (the session evicted, here or by
// another process) is closed at its next use and the name opened again.
type lockFiles struct {
	mu     sync.Mutex
	files  map[string]*os.File // lock file name -> its open file
	closed bool
}

// maxLockFiles bounds the lock files a warm runtime keeps open.
const maxLockFiles = 256

// take returns the kept file of the lock named name, nil when none is
// kept; the caller has it to itself until it puts it back.
func (c *lockFiles) take(name string) *os.File {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.files[name]
	delete(c.files, name)
	return f
}

// keep puts back f, unlocked, as the kept file of name (closing it when
// another is kept already, or there are too many, or c is closed).
func (c *lockFiles) keep(name string, f *os.File) {
	c.mu.Lock()
	if _, ok := c.files[name]; ok || c.closed || len(c.files) >= maxLockFiles {
		c.mu.Unlock()
		f.Close()
		return
	}
	if c.files == nil {
		c.files = map[string]*os.File{}
	}
	c.files[name] = f
	c.mu.Unlock()
}

// close closes the kept files.
func (c *lockFiles) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for name, f := range c.files {
		f.Close()
		delete(c.files, name)
	}
}

// lockSession is the package's lockSession for r: a warm runtime keeps
// the session's lock file open between events (lockFiles).
func (r *Runtime) lockSession(ctx context.Context, session string) (func(), error) {
	if !r.warm {
		return lockSession(ctx, r.dir, session)
	}
	name := lockName(r.dir, session)
	l, err := takeLockWith(ctx, r.dir, session, r.locks.take(name))
	if err != nil {
		return nil, err
	}
	return func() {
		_ = unlockFile(l.f)
		r.locks.keep(l.name, l.f)
	}, nil
}
