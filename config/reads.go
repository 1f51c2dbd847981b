package config

import (
	"slices"
	"time"

	"github.com/attune-dev/attune/internal/tomlx"
)

// Defaults of [harness.reads].
const (
	DefaultReadMaxBytes = 64 << 10 // bytes of one answer (a diff, a file, an exec's output)
	DefaultReadTimeout  = 10 * time.Second
	DefaultGitLogCount  = 10
)

// ReadKeys are the standard keys of admit/read that attune answers itself
// under `attune hook` and `attune mcp`, each enabled in [harness.reads]
// (env/NAME and exec/NAME are families, enabled by name).
var readKeys = []string{"git/branch", "git/status", "git/diff", "git/log", "file/read", "file/realpath", "clock/now"}

// ReadKeys returns the standard keys [harness.reads] can enable (the
// caller's own copy), besides env (names) and exec (commands).
func ReadKeys() []string { return slices.Clone(readKeys) }

// Reads is the [harness.reads] table: which admit/read keys the hook
// runtime and the MCP relay answer, and their bounds. A key it does not
// enable is an error naming the key, never nil.
type Reads struct {
	// Keys are the standard keys enabled, with their bounds.
	Keys map[string]ReadLimit
	// Env are the names env/NAME may read.
	Env []string
	// Exec are the commands exec/NAME runs, by name.
	Exec map[string]ExecRead
}

// ReadLimit bounds one key.
type ReadLimit struct {
	// MaxBytes caps the answer's text (git/diff, file/read); longer text is
	// cut and the answer says so.
	MaxBytes int
	// Timeout bounds a git command.
	Timeout time.Duration
	// Count is how many subjects git/log answers.
	Count int
}

// ExecRead is one [harness.reads.exec.NAME] table: a command attune runs
// (no shell) in the session's working folder.
type ExecRead struct {
	Argv     []string
	Timeout  time.Duration
	MaxBytes int
}

// Enabled reports whether key (with its family: env/NAME, exec/NAME) is
// answered.
func (r *Reads) Enabled(key string) bool {
	if r == nil {
		return false
	}
	_, ok := r.Keys[key]
	return ok
}

var readLimitKeys = []string{"max_bytes", "timeout", "count"}
var execKeys = []string{"argv", "timeout", "max_bytes"}

// reads reads [harness.reads].
func (d *decoder) reads(cfg *Config, rp path, v any) {
	t, ok := d.table(rp, v)
	if !ok {
		return
	}
	r := &Reads{Keys: map[string]ReadLimit{}, Exec: map[string]ExecRead{}}
	cfg.Reads = r
	for _, k := range sortedKeys(t) {
		p, v := rp.key(k), t[k]
		d.line(p)
		switch {
		case k == "env":
			r.Env = d.names(p, v, "environment variable name", notEmpty, nil)
		case k == "exec":
			et, ok := d.table(p, v)
			if !ok {
				break
			}
			for _, name := range sortedKeys(et) {
				ep := p.key(name)
				d.line(ep)
				if x, ok := d.execRead(ep, et[name]); ok {
					r.Exec[name] = x
				}
			}
		case slices.Contains(readKeys, k):
			lim := ReadLimit{MaxBytes: DefaultReadMaxBytes, Timeout: DefaultReadTimeout, Count: DefaultGitLogCount}
			switch x := v.(type) {
			case bool:
				if !x {
					continue
				}
			case map[string]any:
				for _, lk := range sortedKeys(x) {
					lp := p.key(lk)
					d.line(lp)
					switch lk {
					case "max_bytes", "count":
						n, ok := x[lk].(int64)
						if !ok || n <= 0 || n > 1<<30 {
							d.errorf(lp, "want a whole number between 1 and 1073741824, got %s", tomlx.Describe(x[lk]))
							continue
						}
						if lk == "count" {
							lim.Count = int(n)
						} else {
							lim.MaxBytes = int(n)
						}
					case "timeout":
						if dur, ok := d.duration(lp, x[lk], "10s", time.Hour); ok {
							lim.Timeout = dur
						}
					default:
						d.unknown(lp, readLimitKeys)
					}
				}
			default:
				d.errorf(p, "want true (enabled with the default bounds) or a table of bounds (max_bytes, timeout, count), got %s", tomlx.Describe(v))
				continue
			}
			r.Keys[k] = lim
		default:
			d.unknown(p, append(ReadKeys(), "env", "exec"))
		}
	}
}

func (d *decoder) execRead(p path, v any) (ExecRead, bool) {
	t, ok := d.table(p, v)
	if !ok {
		return ExecRead{}, false
	}
	x := ExecRead{Timeout: DefaultReadTimeout, MaxBytes: DefaultReadMaxBytes}
	for _, k := range sortedKeys(t) {
		kp := p.key(k)
		d.line(kp)
		switch k {
		case "argv":
			x.Argv = d.names(kp, t[k], "argument", notEmpty, nil)
		case "timeout":
			if dur, ok := d.duration(kp, t[k], "60s", 24*time.Hour); ok {
				x.Timeout = dur
			}
		case "max_bytes":
			n, ok := t[k].(int64)
			if !ok || n <= 0 || n > 1<<30 {
				d.errorf(kp, "want a whole number between 1 and 1073741824, got %s", tomlx.Describe(t[k]))
				continue
			}
			x.MaxBytes = int(n)
		default:
			d.unknown(kp, execKeys)
		}
	}
	if len(x.Argv) == 0 {
		d.errorf(p, "want argv = [\"program\", \"arg\", ...]: the command to run (no shell)")
		return ExecRead{}, false
	}
	return x, true
}
