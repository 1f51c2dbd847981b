package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/attune-dev/attune/config"
)

// lockDir is where the per-session lock files of a store live: beside an
// SQLite file (FILE.locks/), else in the temporary folder under a name
// derived from the store spec. A memory store is per process: its locks
// still serialize the events of one `hook serve`.
func lockDir(cfg *config.Config) string {
	kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir)
	if err == nil && kind == config.StoreSQLite {
		return target + ".locks"
	}
	sum := sha256.Sum256([]byte(cfg.Engine.Store + "\x00" + cfg.Dir))
	return filepath.Join(os.TempDir(), "attune-locks-"+hex.EncodeToString(sum[:8]))
}

// lockSession takes the exclusive lock of one session (a lock on its own
// file, so it holds across processes and between goroutines of one
// process alike: flock on Unix, LockFileEx on Windows, in lock_unix.go
// and lock_windows.go) and returns its release. It waits until ctx is done.
func lockSession(ctx context.Context, dir, session string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("session lock: %w", err)
	}
	sum := sha256.Sum256([]byte(session))
	name := filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("session lock: %w", err)
	}
	wait := 200 * time.Microsecond
	for {
		locked, err := tryLock(f)
		if locked {
			return func() {
				_ = unlockFile(f)
				f.Close()
			}, nil
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("session lock %s: %w", name, err)
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
}
