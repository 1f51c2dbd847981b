//go:build unix

package store

import (
	"io/fs"
	"syscall"
)

// linked reports whether the open file info describes still has a name
// (a link count above zero).
func linked(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 0
}
