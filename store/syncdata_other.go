//go:build !linux

package store

import "os"

// syncData flushes a file to disk.
func syncData(f *os.File) error { return f.Sync() }
