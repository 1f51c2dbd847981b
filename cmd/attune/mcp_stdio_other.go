//go:build !unix

package main

import (
	"io"
	"os"
)

// pollableStdio: standard input and output as they are.
func pollableStdio() (in *os.File, out io.Writer, restore func()) {
	return os.Stdin, os.Stdout, func() {}
}
