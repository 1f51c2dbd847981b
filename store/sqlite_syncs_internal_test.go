package store

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Counting SQLite's own syncs: a VFS, made the default, that is the
// platform's own with every file's xSync counted. Its xOpen opens the file
// with the platform's VFS and points the file at a copy of its methods
// whose xSync counts, then calls the original. Together with the store's
// own flushes (walSync.flushes) that is every sync a store makes.
var (
	countingOnce sync.Once
	countingErr  error
	sqliteSyncs  atomic.Int64

	countingMu   sync.Mutex
	baseVFS      uintptr             // the platform's sqlite3_vfs
	countingTLS  *libc.TLS           // for the VFS's own allocations
	methodCopies map[uintptr]uintptr // a file's original methods -> its counting copy
	baseSyncs    map[uintptr]uintptr // a counting copy -> the original xSync
)

// cfunc is the C function pointer of a Go function (the form the
// transpiled SQLite calls: a pointer to the function value).
func cfunc[T any](f T) uintptr { return *(*uintptr)(unsafe.Pointer(&f)) }

// cptr is the C memory at address u (vet allows no uintptr conversion).
func cptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

func callSync(fn uintptr, tls *libc.TLS, file uintptr, flags int32) int32 {
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{fn})))(tls, file, flags)
}

func countingSync(tls *libc.TLS, file uintptr, flags int32) int32 {
	sqliteSyncs.Add(1)
	methods := (*sqlite3.Tsqlite3_file)(cptr(file)).FpMethods
	countingMu.Lock()
	orig := baseSyncs[methods]
	countingMu.Unlock()
	return callSync(orig, tls, file, flags)
}

func countingOpen(tls *libc.TLS, vfs, name, file uintptr, flags int32, outFlags uintptr) int32 {
	open := (*sqlite3.Tsqlite3_vfs)(cptr(baseVFS)).FxOpen
	rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{open})))(tls, baseVFS, name, file, flags, outFlags)
	f := (*sqlite3.Tsqlite3_file)(cptr(file))
	if f.FpMethods == 0 {
		return rc
	}
	countingMu.Lock()
	defer countingMu.Unlock()
	cp, ok := methodCopies[f.FpMethods]
	if !ok {
		size := unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})
		cp = libc.Xmalloc(countingTLS, uint64(size))
		*(*sqlite3.Tsqlite3_io_methods)(cptr(cp)) = *(*sqlite3.Tsqlite3_io_methods)(cptr(f.FpMethods))
		baseSyncs[cp] = (*sqlite3.Tsqlite3_io_methods)(cptr(cp)).FxSync
		(*sqlite3.Tsqlite3_io_methods)(cptr(cp)).FxSync = cfunc(countingSync)
		methodCopies[f.FpMethods] = cp
	}
	f.FpMethods = cp
	return rc
}

// countSQLiteSyncs makes the counting VFS SQLite's default, once per test
// process.
func countSQLiteSyncs(t *testing.T) {
	t.Helper()
	countingOnce.Do(func() {
		countingTLS = libc.NewTLS()
		baseVFS = sqlite3.Xsqlite3_vfs_find(countingTLS, 0)
		if baseVFS == 0 {
			countingErr = os.ErrNotExist
			return
		}
		methodCopies, baseSyncs = map[uintptr]uintptr{}, map[uintptr]uintptr{}
		size := unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})
		v := libc.Xmalloc(countingTLS, uint64(size))
		vfs := (*sqlite3.Tsqlite3_vfs)(cptr(v))
		*vfs = *(*sqlite3.Tsqlite3_vfs)(cptr(baseVFS))
		vfs.FpNext = 0
		name, err := libc.CString("attune-counting")
		if err != nil {
			countingErr = err
			return
		}
		vfs.FzName = name
		vfs.FxOpen = cfunc(countingOpen)
		if rc := sqlite3.Xsqlite3_vfs_register(countingTLS, v, 1); rc != sqlite3.SQLITE_OK {
			countingErr = os.ErrInvalid
		}
	})
	if countingErr != nil {
		t.Fatalf("cannot register the counting SQLite VFS: %v", countingErr)
	}
}

// sameFile fails the test when the file at name is missing or is not the
// one before (a new file of the same name).
func sameFile(t *testing.T, name string, before os.FileInfo) os.FileInfo {
	t.Helper()
	info, err := os.Stat(name)
	if err != nil {
		t.Fatalf("%s is gone: %v", filepath.Base(name), err)
	}
	if before != nil && !os.SameFile(before, info) {
		t.Fatalf("%s was made anew", filepath.Base(name))
	}
	return info
}

// The fsyncs of the SQLite store, as docs/storage.md states them (R5.10):
// opening an existing store and closing it sync nothing, and leave its -wal
// and -shm files in place (the next process neither creates them again nor
// syncs their folder); a durable write is one fdatasync of the WAL, made by
// the store; a lazy append none, until Sync, which is one; a write that
// changes nothing (a blob stored already) none. SQLite itself syncs only
// when a commit takes the WAL past its bound and the WAL is copied into the
// database file.
func TestSQLiteOpenSyncs(t *testing.T) {
	countSQLiteSyncs(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "j", 0, [][]byte{[]byte("first")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wal, shm := sameFile(t, path+"-wal", nil), sameFile(t, path+"-shm", nil)

	type counts struct{ sqlite, store int64 }
	event := func(what string, want counts, fn func(s *SQLite)) {
		t.Helper()
		before := sqliteSyncs.Load()
		s, err := OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		fn(s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		got := counts{sqliteSyncs.Load() - before, s.wal.flushes.Load()}
		if got != want {
			t.Errorf("%s: SQLite synced %d times and the store flushed %d times, want %d and %d", what, got.sqlite, got.store, want.sqlite, want.store)
		}
		sameFile(t, path+"-wal", wal)
		sameFile(t, path+"-shm", shm)
	}
	n := int64(1)
	appendOne := func(s *SQLite, lazy bool) {
		t.Helper()
		app := s.Append
		if lazy {
			app = s.AppendLazy
		}
		if _, err := app(ctx, "j", n, [][]byte{[]byte("entry")}, nil); err != nil {
			t.Fatal(err)
		}
		n++
	}
	event("open and close", counts{0, 0}, func(s *SQLite) {})
	event("open, read, close", counts{0, 0}, func(s *SQLite) {
		if es, err := s.Read(ctx, "j", 0, 0); err != nil || len(es) != 1 {
			t.Fatalf("read %v, %v", es, err)
		}
	})
	for k := range 3 {
		event("one durable append", counts{0, 1}, func(s *SQLite) { appendOne(s, false) })
		event("two durable appends", counts{0, 2}, func(s *SQLite) { appendOne(s, false); appendOne(s, false) })
		event("two lazy appends and Sync", counts{0, 1}, func(s *SQLite) {
			appendOne(s, true)
			appendOne(s, true)
			if err := s.Sync(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if k == 0 {
			event("a new blob, the same blob again", counts{0, 1}, func(s *SQLite) {
				for range 2 {
					if _, err := s.PutBlob(ctx, []byte("pin")); err != nil {
						t.Fatal(err)
					}
				}
			})
		} else {
			event("a blob stored already", counts{0, 0}, func(s *SQLite) {
				if _, err := s.PutBlob(ctx, []byte("pin")); err != nil {
					t.Fatal(err)
				}
			})
		}
	}

	// The bound: a commit that takes the WAL past sqliteCheckpointFrames
	// pages copies it into the database file, syncing the WAL and the
	// file, and the next commit starts the WAL again from its beginning,
	// syncing its new header: at most 3 of SQLite's syncs per commit, and
	// per sqliteCheckpointFrames pages written (a small append writes one
	// or two pages).
	s, err = OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const appends = 4 * sqliteCheckpointFrames
	total, most := int64(0), int64(0)
	for range appends {
		before := sqliteSyncs.Load()
		if _, err := s.Append(ctx, "small", Any, [][]byte{[]byte("a small entry of an owner log")}, nil); err != nil {
			t.Fatal(err)
		}
		d := sqliteSyncs.Load() - before
		total, most = total+d, max(most, d)
	}
	if total == 0 || most > 3 || total > 3*2*appends/sqliteCheckpointFrames {
		t.Errorf("%d appends: SQLite synced %d times, at most %d in one append; want some, at most 3 in one and %d in all", appends, total, most, 3*2*appends/sqliteCheckpointFrames)
	}
	if got := s.wal.flushes.Load(); got != appends {
		t.Errorf("%d durable appends flushed the WAL %d times", appends, got)
	}
	sameFile(t, path+"-wal", wal)
}
