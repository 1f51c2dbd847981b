//go:build !linux

package hook

import "os"

// fdatasync flushes f (fsync where there is no fdatasync, as the store's
// WAL flush does there).
func fdatasync(f *os.File) error { return f.Sync() }
