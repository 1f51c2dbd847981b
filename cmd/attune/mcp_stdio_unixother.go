//go:build unix && !linux

package main

import "io"

// outputWriter: elsewhere the output is an *os.File the poller watches.
func outputWriter(int) (io.WriteCloser, bool) { return nil, false }
