package main

import (
	"fmt"
	"io"
)

func runCmd(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "attune run: not yet")
	return 2
}
