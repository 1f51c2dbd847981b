//go:build !unix

package main

import "os"

// pollableStdio: standard input and output as they are.
func pollableStdio() (in, out *os.File, restore func()) { return os.Stdin, os.Stdout, func() {} }
