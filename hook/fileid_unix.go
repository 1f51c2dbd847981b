//go:build unix

package hook

import (
	"os"
	"syscall"
)

// fileID is the device and inode of the file at path: a store file
// replaced by another (deleted and created again, or moved over) has
// another, so a reach taken on the old one is not used (quick.go).
func fileID(path string) (dev, ino uint64, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), st.Ino, true
}

// fileOwner is the user id owning a file.
func fileOwner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
