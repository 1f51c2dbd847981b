package hook

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A small start: a hook process initializes only what it uses. What each
// package's init allocates is read from the runtime's own trace
// (GODEBUG=inittrace=1) of `attune hook claude` answering a tool event
// quick (nothing can see it): attune's own packages together allocate at
// most initBudget bytes, and none more than initPackageBudget. Tables and
// patterns that only other commands use (a regular expression of install,
// the JSON-RPC method table) are made at first use, not at init; before
// they were, attune's packages allocated 112 KB at init (hook alone 54 KB).
// Other modules' inits (SQLite's C library, PostgreSQL's driver, net/http)
// run in every Go program that links them and are not counted.
const (
	initBudget        = 40 << 10
	initPackageBudget = 12 << 10
)

func TestHookStartInits(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfg, []byte("[bots.main]\nceiling = [\"read\", \"write\", \"exec\"]\n"), 0o644)
	run := func(event string, trace bool) string {
		t.Helper()
		cmd := exec.Command(attuneBin, "hook", "claude", "--config", cfg)
		cmd.Stdin = strings.NewReader(event)
		cmd.Env = os.Environ()
		if trace {
			cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
		}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != "{}" {
			t.Fatalf("attune hook: %v, %q\n%s", err, out.String(), errOut.String())
		}
		return errOut.String()
	}
	run(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}`, false)
	pre := `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/w","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"ls"}}`
	run(pre, false)
	total, seen := 0, 0
	for _, line := range strings.Split(run(pre, true), "\n") {
		// init PKG @T ms, D ms clock, B bytes, N allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		seen++
		pkg := f[1]
		if pkg != "main" && !strings.HasPrefix(pkg, "github.com/attune-dev/attune/") {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		total += n
		if n > initPackageBudget {
			t.Errorf("%s allocates %d bytes at init (most a package may: %d): make its tables or patterns at first use", pkg, n, initPackageBudget)
		}
	}
	if seen == 0 {
		t.Fatal("no inittrace lines: GODEBUG=inittrace=1 printed nothing")
	}
	if total > initBudget {
		t.Errorf("attune's packages allocate %d bytes at init, more than %d", total, initBudget)
	}
	t.Logf("attune's packages allocate %d bytes at init", total)
}
