//go:build windows

package harness

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// The session lock on Windows is a LockFileEx lock of the whole lock file
// (every byte, from offset 0). Like flock on Unix it belongs to the handle,
// so two handles of one process exclude each other as two processes do, and
// the system releases it when the process ends, however it ends. Nothing
// reads or writes a lock file, so that Windows' byte-range locks are
// mandatory does not matter.
const lockBytes = ^uint32(0)

// tryLock takes f's exclusive lock without waiting: locked is false and err
// nil when another handle holds it, so the caller waits and tries again.
func tryLock(f *os.File) (locked bool, err error) {
	var ol windows.Overlapped // offset 0; f is a synchronous handle
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, lockBytes, lockBytes, &ol)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return false, err
}

// unlockFile releases the lock tryLock took. Closing the handle releases
// it as well, but Windows does not promise when, so it is released first.
func unlockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, lockBytes, lockBytes, &ol)
}
