package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// `attune lower --help` prints its usage; it is not a file name.
func TestLowerHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		code, _, errOut := run("lower", arg)
		if code != 0 || !strings.Contains(errOut, "usage: attune lower FILE.scm") || strings.Contains(errOut, "no such file") {
			t.Errorf("lower %s: exit %d, stderr %q", arg, code, errOut)
		}
	}
}

// The README's CLI table has a row for every command, and the row of each
// command whose flags come from package flag names every one of them.
func TestReadmeCLITable(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "| `attune "); ok {
			name, _, _ := strings.Cut(rest, " ")
			name = strings.TrimSuffix(name, "`")
			rows[name] += line + "\n"
		}
	}
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	for name := range commands {
		row, ok := rows[name]
		if !ok {
			t.Errorf("the README's CLI table has no row for attune %s", name)
			continue
		}
		if name == "hook" || name == "mcp" {
			continue // their own usage text, not package flag's
		}
		_, _, errOut := run(name, "--help")
		for _, m := range flagLine.FindAllStringSubmatch(errOut, -1) {
			f := m[1]
			dashes := "--"
			if len(f) == 1 {
				dashes = "-"
			}
			if !strings.Contains(row, "`"+dashes+f) && !strings.Contains(row, "["+dashes+f) {
				t.Errorf("the README's row for attune %s does not name its flag %s%s:\n%s", name, dashes, f, row)
			}
		}
	}
}

// `attune hook install claude --http ADDR` refuses an address that is not
// loopback, naming the flag it was given (--http, not serve's --listen).
func TestHookInstallHTTPNotLoopback(t *testing.T) {
	code, _, errOut := run("hook", "install", "claude", "--project", t.TempDir(), "--http", "0.0.0.0:8787")
	if code != 2 || !strings.Contains(errOut, "--http 0.0.0.0:8787: not a loopback address") || strings.Contains(errOut, "--listen") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// `attune --help` names every hook dialect and every hook subcommand.
func TestUsageNamesHookCommands(t *testing.T) {
	code, _, errOut := run("--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, w := range []string{"claude", "codex", "cursor", "gemini", "install", "uninstall", "serve claude"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("attune --help does not name %q:\n%s", w, errOut)
		}
	}
}

// Asking any command for help prints its usage and exits 0; a flag it does
// not know is a usage error and exits 2.
func TestHelpExitsZero(t *testing.T) {
	cases := [][]string{{"run"}, {"serve"}, {"test"}, {"record"}, {"check"}, {"lower"}, {"mcp"},
		{"hook", "claude"}, {"hook", "install", "claude"}, {"hook", "uninstall", "claude"}, {"hook", "serve", "claude"}}
	for _, c := range cases {
		for _, h := range []string{"-h", "--help"} {
			code, _, errOut := run(append(append([]string{}, c...), h)...)
			if code != 0 || !strings.Contains(strings.ToLower(errOut), "usage") {
				t.Errorf("attune %s %s: exit %d, stderr %q", strings.Join(c, " "), h, code, errOut)
			}
		}
		if c[0] == "lower" || c[0] == "check" || c[0] == "mcp" {
			continue // no package-flag parsing: an unknown flag is a file name or argument
		}
		code, _, errOut := run(append(append([]string{}, c...), "--no-such-flag")...)
		if code != 2 {
			t.Errorf("attune %s --no-such-flag: exit %d, stderr %q", strings.Join(c, " "), code, errOut)
		}
	}
}

// `attune hook install claude --http ADDR` writes a URL Claude Code will
// call for every event; an address with no port number, or one given with
// --config (which `hook serve` reads, not the http entries), is refused
// and nothing is written: an http hook that cannot be reached is only a
// non-blocking error to Claude Code, so a typo would turn the hooks off.
func TestHookInstallHTTPBadAddress(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "127.0.0.1:abc"}, "--http 127.0.0.1:abc: want 127.0.0.1:PORT"},
		{[]string{"--http", "8787"}, "--http 8787: want 127.0.0.1:PORT"},
		{[]string{"--http", "127.0.0.1:0"}, "--http 127.0.0.1:0: want 127.0.0.1:PORT"},
		{[]string{"--http", "127.0.0.1:8787", "--config", "attune.toml"}, "--config is not used with --http"},
	} {
		dir := t.TempDir()
		code, _, errOut := run(append([]string{"hook", "install", "claude", "--project", dir}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errOut)
		}
		if _, err := os.Stat(dir + "/.claude/settings.json"); err == nil {
			t.Errorf("%v: settings.json written", c.args)
		}
	}
}

// uninstall in a project with no .claude/settings.json says there was
// nothing to remove, rather than that it removed the hooks; it writes no
// file.
func TestHookUninstallNothingThere(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := run("hook", "uninstall", "claude", "--project", dir)
	if code != 0 || !strings.Contains(out, "no attune hooks to remove") || strings.Contains(out, "removed from") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(dir + "/.claude"); err == nil {
		t.Error(".claude created")
	}
}
