package main

import (
	"strings"
	"testing"
)

// `attune serve --help` says what the command takes; a second CONFIG or a
// --max-message that is not a size is a usage error, not ignored.
func TestServeUsage(t *testing.T) {
	if code, _, errOut := run("serve", "--help"); code != 0 || !strings.Contains(errOut, "usage: attune serve [--max-message BYTES] [CONFIG]") {
		t.Errorf("serve --help: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{{"serve", "a.toml", "b.toml"}, {"serve", "--max-message", "-5", "a.toml"}, {"serve", "--max-message", "0"}} {
		if code, _, errOut := run(args...); code != 2 || !strings.Contains(errOut, "usage: attune serve") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
