package hook

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data as the store's WAL flush does.
func fdatasync(f *os.File) error {
	for {
		if err := syscall.Fdatasync(int(f.Fd())); err != syscall.EINTR {
			return err
		}
	}
}
