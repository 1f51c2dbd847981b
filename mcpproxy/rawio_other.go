//go:build !linux

package mcpproxy

import "io"

func rawReader(r io.Reader) io.Reader { return r }

func rawWriter(w io.Writer) io.Writer { return w }
