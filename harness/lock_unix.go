//go:build unix

package harness

import (
	"os"
	"syscall"
)

// tryLock takes f's exclusive flock without waiting: locked is false and
// err nil when another holder has it (or the call was interrupted), so
// the caller waits and tries again.
func tryLock(f *os.File) (locked bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch err {
	case nil:
		return true, nil
	case syscall.EWOULDBLOCK, syscall.EINTR:
		return false, nil
	}
	return false, err
}

// unlockFile releases the lock tryLock took (closing f would too).
func unlockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
