//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// mapShm maps the first n bytes of f (at least one page) read-only and
// shared, so that every commit's header is seen as SQLite writes it.
func mapShm(f *os.File, n int) ([]byte, func() error, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := max(n, os.Getpagesize())
	if info.Size() < int64(size) {
		return nil, nil, errors.New("store: the -shm file is shorter than a page")
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return mem, func() error { return syscall.Munmap(mem) }, nil
}
