package main

import (
	"strings"
	"testing"
)

// `attune lower --help` prints its usage; it is not a file name.
func TestLowerHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		code, _, errOut := run("lower", arg)
		if code != 2 || !strings.Contains(errOut, "usage: attune lower FILE.scm") || strings.Contains(errOut, "no such file") {
			t.Errorf("lower %s: exit %d, stderr %q", arg, code, errOut)
		}
	}
}
