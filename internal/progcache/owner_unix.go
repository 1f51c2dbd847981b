//go:build unix

package progcache

import (
	"os"
	"syscall"
)

// owner is the user id owning a file, and whether it is known.
func owner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// openFlags open an entry without following a link at its name.
const openFlags = os.O_RDONLY | syscall.O_NOFOLLOW
