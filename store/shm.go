package store

import (
	"encoding/binary"
	"os"
	"sync"
)

// shmFile reads the WAL-index header (readcache.go) from the -shm file:
// through a read-only shared mapping of its first page where the platform
// has one (a plain memory read, as SQLite's own connections do), else with
// one pread. The file is the one SQLite maps; it stays the same file, and
// keeps its size, while the store is open, since the store holds one
// connection for as long (SQLite.wc), and is unmapped before any of the
// store's connections closes.
type shmFile struct {
	path string // the database file; the header is in path + "-shm"

	mu     sync.RWMutex // held for reading while the header is read
	f      *os.File
	mem    []byte // the mapping, or nil
	unmap  func() error
	closed bool
}

// header returns the current WAL-index header; ok is false when it cannot
// be read (nothing is served from the cache then).
func (s *shmFile) header() (h walHeader, ok bool) {
	s.mu.RLock()
	if s.f == nil && !s.closed {
		s.mu.RUnlock()
		s.open()
		s.mu.RLock()
	}
	switch {
	case s.mem != nil:
		copy(h[:], s.mem[:walIndexHeader])
	case s.f != nil:
		if n, err := s.f.ReadAt(h[:], 0); n != len(h) || err != nil {
			s.mu.RUnlock()
			return h, false
		}
	default:
		s.mu.RUnlock()
		return h, false
	}
	s.mu.RUnlock()
	if h[walIsInit] != 1 || binary.NativeEndian.Uint32(h[0:]) != walVersion {
		return h, false
	}
	return h, true
}

func (s *shmFile) open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil || s.closed {
		return
	}
	f, err := os.Open(s.path + "-shm")
	if err != nil {
		return // not there yet: tried again at the next read
	}
	s.f = f
	if mem, unmap, err := mapShm(f, walIndexHeader); err == nil {
		s.mem, s.unmap = mem, unmap
	}
}

func (s *shmFile) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var err error
	if s.unmap != nil {
		err = s.unmap()
		s.mem, s.unmap = nil, nil
	}
	if s.f != nil {
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
		s.f = nil
	}
	return err
}
