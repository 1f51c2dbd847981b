// Package hostreads answers admit/read where attune itself is the host:
// under `attune hook` (a coding agent's hook runtime) and `attune mcp`.
// Every key is enabled and bounded in the configuration's [harness.reads]
// table, never by the model: git/branch, git/status, git/diff and git/log
// run git in the session's working folder; file/read PATH reads a file
// inside the project; env/NAME reads a variable the table lists;
// clock/now is the time; exec/NAME runs a command the table declares (no
// shell) and answers {code, stdout, stderr}. A key the table does not
// enable, or a read that cannot be answered, is an error naming the key.
package hostreads

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/attune-dev/attune/config"
)

// ErrNotEnabled: the key is none [harness.reads] enables.
var ErrNotEnabled = errors.New("not enabled in [harness.reads]")

// ErrOutside: file/read named a path outside the project.
var ErrOutside = errors.New("outside the project")

// Host answers reads for one configuration.
type Host struct {
	r       *config.Reads
	project string
	// Now and Getenv stand in for the clock and the environment (tests).
	Now    func() time.Time
	Getenv func(string) (string, bool)
}

// New returns the host of reads r (nil: none enabled) for the project
// folder project (file/read's root, and where git runs when the session
// names no folder).
func New(r *config.Reads, project string) *Host {
	return &Host{r: r, project: project, Now: time.Now, Getenv: os.LookupEnv}
}

// Read answers admit/read key (with arg when hasArg) for a session working
// in cwd ("" for the project).
func (h *Host) Read(ctx context.Context, key string, arg any, hasArg bool, cwd string) (any, error) {
	if cwd == "" {
		cwd = h.project
	}
	r := h.r
	if r == nil {
		r = &config.Reads{}
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("admit/read %s: %w", key, fmt.Errorf(format, args...))
	}
	notEnabled := func(how string) error {
		return fmt.Errorf("admit/read %s: %w (%s)", key, ErrNotEnabled, how)
	}
	if name, ok := strings.CutPrefix(key, "env/"); ok {
		if !slices.Contains(r.Env, name) {
			return nil, notEnabled(fmt.Sprintf("list the name: [harness.reads] env = [%q]", name))
		}
		v, set := h.Getenv(name)
		if !set {
			return nil, nil
		}
		return v, nil
	}
	if name, ok := strings.CutPrefix(key, "exec/"); ok {
		x, ok := r.Exec[name]
		if !ok {
			return nil, notEnabled(fmt.Sprintf("declare the command: [harness.reads.exec.%s] argv = [...]", name))
		}
		return h.exec(ctx, x, cwd)
	}
	lim, ok := r.Keys[key]
	if !ok {
		if !slices.Contains(config.ReadKeys(), key) {
			return nil, fmt.Errorf("admit/read %s: %w: no such key (attune answers %s, env/NAME and exec/NAME)", key, ErrNotEnabled, strings.Join(config.ReadKeys(), ", "))
		}
		return nil, notEnabled(fmt.Sprintf("enable it: [harness.reads] %q = true", key))
	}
	switch key {
	case "clock/now":
		return h.Now().UTC().Format(time.RFC3339Nano), nil
	case "git/branch":
		out, err := h.git(ctx, lim, cwd, "rev-parse", "--abbrev-ref", "HEAD")
		if err != nil {
			return nil, fail("%v", err)
		}
		return strings.TrimSpace(out), nil
	case "git/status":
		out, err := h.git(ctx, lim, cwd, "status", "--porcelain=v1", "--untracked-files=all")
		if err != nil {
			return nil, fail("%v", err)
		}
		entries := []any{}
		for _, line := range strings.Split(out, "\n") {
			if line != "" {
				entries = append(entries, line)
			}
		}
		return entries, nil
	case "git/diff":
		args := []string{"diff", "--no-color", "--no-ext-diff"}
		if hasArg {
			p, ok := arg.(string)
			if !ok {
				return nil, fail("the argument is a path (a string), got %T", arg)
			}
			args = append(args, "--", p)
		}
		out, err := h.git(ctx, lim, cwd, args...)
		if err != nil {
			return nil, fail("%v", err)
		}
		return capText(out, lim.MaxBytes), nil
	case "git/log":
		out, err := h.git(ctx, lim, cwd, "log", "-n", fmt.Sprint(lim.Count), "--format=%s")
		if err != nil {
			return nil, fail("%v", err)
		}
		subjects := []any{}
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if line != "" {
				subjects = append(subjects, line)
			}
		}
		return subjects, nil
	case "file/read":
		p, ok := arg.(string)
		if !hasArg || !ok || p == "" {
			return nil, fail("give the file's path inside the project: admit/read(\"file/read\", \"README.md\")")
		}
		text, err := h.file(p, lim.MaxBytes)
		if err != nil {
			return nil, fail("%w", err)
		}
		return text, nil
	case "file/realpath":
		p, ok := arg.(string)
		if !hasArg || !ok || p == "" {
			return nil, fail("give a path: admit/read(\"file/realpath\", \"notes.txt\")")
		}
		return realpath(p, cwd)
	}
	return nil, fail("no answer for this key")
}

// realpath is p (relative to cwd) with every symbolic link resolved, as an
// absolute path; for a path that does not exist yet, its deepest existing
// folder is resolved and the rest kept as written. It reads no file.
func realpath(p, cwd string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	rest := ""
	for dir := p; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// file reads path p inside the project: relative, no "..", no symlink out.
func (h *Host) file(p string, max int) (string, error) {
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%s: %w: give a path relative to the project", p, ErrOutside)
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return "", fmt.Errorf("%s: %w: no .. in the path", p, ErrOutside)
		}
	}
	root, err := filepath.EvalSymlinks(h.project)
	if err != nil {
		return "", err
	}
	full, err := filepath.EvalSymlinks(filepath.Join(root, p))
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, errors.Unwrap(err))
	}
	if rel, err := filepath.Rel(root, full); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: %w: it links to %s", p, ErrOutside, full)
	}
	f, err := os.Open(full)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, max+1)
	n, _ := io.ReadFull(f, buf)
	return capText(string(buf[:n]), max), nil
}

// git runs git ARGS in folder dir under the key's timeout.
func (h *Host) git(ctx context.Context, lim config.ReadLimit, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("git %s did not finish within %s", args[0], lim.Timeout)
		}
		return "", fmt.Errorf("git %s in %s: %v: %s", args[0], dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// exec runs a declared command: {code, stdout, stderr}, each output cut at
// the cap; a command past its timeout is killed and answers code -1 with
// timed_out.
func (h *Host) exec(ctx context.Context, x config.ExecRead, dir string) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, x.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, x.Argv[0], x.Argv[1:]...)
	cmd.Dir = dir
	stdout, stderr := &capBuffer{max: x.MaxBytes}, &capBuffer{max: x.MaxBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	res := map[string]any{"stdout": stdout.text(), "stderr": stderr.text()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res["code"], res["timed_out"] = float64(-1), true
	case errors.As(err, &ee):
		res["code"] = float64(ee.ExitCode())
	case err != nil:
		return nil, fmt.Errorf("admit/read exec: %s: %v", x.Argv[0], err)
	default:
		res["code"] = float64(0)
	}
	return res, nil
}

// capText cuts text at max bytes, saying so.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:max] + fmt.Sprintf("\n[attune: cut at %d bytes (max_bytes)]", max)
}

// capBuffer keeps the first max bytes written to it.
type capBuffer struct {
	b   bytes.Buffer
	max int
	cut bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		if len(p) > room {
			c.b.Write(p[:room])
			c.cut = true
		} else {
			c.b.Write(p)
		}
	} else if len(p) > 0 {
		c.cut = true
	}
	return len(p), nil
}

func (c *capBuffer) text() string {
	if c.cut {
		return c.b.String() + fmt.Sprintf("\n[attune: cut at %d bytes (max_bytes)]", c.max)
	}
	return c.b.String()
}
