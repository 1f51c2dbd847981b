//go:build unix

package harness

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

// FileOwner is the user id owning a file: the session locks' folder, and
// `hook serve`'s token, are refused when another user owns them.
func FileOwner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
