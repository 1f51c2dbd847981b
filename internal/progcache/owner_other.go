//go:build !unix

package progcache

import "os"

// owner: no user ids here (a Windows folder's ACL is its profile's).
func owner(os.FileInfo) (int, bool) { return 0, false }

const openFlags = os.O_RDONLY
