//go:build !linux

package hook

import (
	"os"
	"time"
)

// fdatasync flushes f (fsync where there is no fdatasync, as the store's
// WAL flush does there).
func fdatasync(f *os.File) error { return f.Sync() }

// processCPU: the platform does not tell another process's CPU time here.
func processCPU(int) (time.Duration, bool) { return 0, false }
