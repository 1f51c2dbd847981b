package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// attune mcp's arguments: errors say what is wrong and exit 2.
func TestMCPArguments(t *testing.T) {
	dir := t.TempDir()
	cfg := write(t, dir, "attune.toml", "[engine]\nstore = 'memory:'\n[bots.main]\nbehaviors = []\n")
	nobots := write(t, dir, "nobots.toml", "[engine]\nstore = 'memory:'\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "no upstream server: give its command after --"},
		{[]string{"--bogus"}, 2, `unknown argument "--bogus"`},
		{[]string{"--bot"}, 2, "--bot wants a value"},
		{[]string{"--upstream", "fs"}, 2, `--upstream "fs": want NAME=COMMAND [ARGS]`},
		{[]string{"--upstream", "fs=node 'x"}, 2, "unclosed '"},
		{[]string{"--config", filepath.Join(dir, "missing.toml"), "--", "true"}, 2, "missing.toml: cannot read"},
		{[]string{"--config", cfg, "--bot", "nobody", "--", "true"}, 1, `has no bot "nobody" (bots: main)`},
		{[]string{"--config", nobots, "--bot", "nobody", "--", "true"}, 1, `has no bot "nobody": it defines no bots; leave out --bot to run the bot mcp`},
		{[]string{"--config", cfg, "--name", "a b", "--", "true"}, 1, `upstream name "a b": use letters, digits`},
		{[]string{"--config", cfg, "--name", "x", "--upstream", "x=true", "--", "true"}, 1, `two upstreams are named "x"`},
	} {
		var out, errb bytes.Buffer
		code := runMCP(c.args, strings.NewReader(""), &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("attune mcp %q: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	got, err := splitCommand(` node  "/a b/server.js" 'x y' z`)
	if err != nil || !slices.Equal(got, []string{"node", "/a b/server.js", "x y", "z"}) {
		t.Errorf("got %q %v", got, err)
	}
}
