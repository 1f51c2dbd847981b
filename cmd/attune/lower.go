package main

import (
	"fmt"
	"io"

	"github.com/attune-dev/attune/scheme"
)

// lowerCmd prints the Lua a Scheme-style program lowers to (R7.5).
func lowerCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "usage: attune lower FILE.scm")
		if len(args) == 1 {
			return 0 // asked for help
		}
		return 2
	}
	out, err := scheme.LowerFile(args[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprint(stdout, out)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		fmt.Fprintln(stdout)
	}
	return 0
}
