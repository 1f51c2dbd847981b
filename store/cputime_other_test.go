//go:build !unix

package store_test

import "time"

// cpuTime is not known here.
func cpuTime() (time.Duration, bool) { return 0, false }
