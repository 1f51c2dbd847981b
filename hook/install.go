package hook

import (
	"errors"
	"fmt"
	"github.com/attune-dev/attune/harness"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ClaudeEvents returns the Claude Code events attune maps, in the order an
// install writes them (the caller's own copy).
func ClaudeEvents() []string { return slices.Clone(claudeEvents) }

// claudeEvents are the events of ClaudeEvents (never changed).
var claudeEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
	"Stop", "SubagentStart", "SubagentStop", "PreCompact", "SessionEnd"}

// HTTPPath is the path `hook serve claude` answers and `hook install
// --http` points at; it also marks an http entry as attune's.
const HTTPPath = "/attune/hook/claude"

// HookTimeout is the timeout an install writes for each entry: attune's
// own answer deadline (harness.DefaultTimeout) and a margin, so attune denies a
// call it cannot judge in time before the harness gives up on it (a
// harness that times a hook out lets the call run).
const HookTimeout = harness.DefaultTimeout + 5*time.Second

// Install describes the hook entries to write.
type Install struct {
	// Binary is the attune executable (absolute).
	Binary string
	// Config is the configuration (absolute); "" leaves it to discovery.
	Config string
	// HTTP, when set (127.0.0.1:PORT), installs http entries for
	// `attune hook serve` instead of commands (Claude Code only).
	HTTP string
	// Token is the secret of `hook serve`, sent by every http entry as
	// the X-Attune-Token header; "" sends none.
	Token string
}

// Harnesses lists the harnesses `hook install` writes entries for.
func Harnesses() []string { return []string{"claude", "codex", "copilot", "cursor", "gemini"} }

// Scope is where an install writes: the project's shared file, the
// project's local (unshared) file, or the user's own configuration.
type Scope int

const (
	// ScopeProject is the project's file, shared with the repository.
	ScopeProject Scope = iota
	// ScopeLocal is the project's local file (Claude Code's
	// .claude/settings.local.json, which is not checked in).
	ScopeLocal
	// ScopeUser is the user's own configuration, for every project.
	ScopeUser
)

// Where names the directories a hook file's path is found from.
type Where struct {
	// Project is the project folder (absolute).
	Project string
	// Home is the user's home folder.
	Home string
	// Getenv reads the environment (CLAUDE_CONFIG_DIR, CODEX_HOME,
	// COPILOT_HOME, GEMINI_CLI_HOME); nil reads nothing.
	Getenv func(string) string
}

func (w Where) env(k string) string {
	if w.Getenv == nil {
		return ""
	}
	return w.Getenv(k)
}

// HookFile returns the file a harness reads its hooks from for a scope:
//
//	claude   .claude/settings.json, .claude/settings.local.json (local), ~/.claude/settings.json (user; $CLAUDE_CONFIG_DIR/settings.json when set)
//	codex    .codex/hooks.json, $CODEX_HOME/hooks.json (user; CODEX_HOME defaults to ~/.codex)
//	gemini   .gemini/settings.json, ~/.gemini/settings.json (user; GEMINI_CLI_HOME stands for ~)
//	copilot  .github/hooks/attune.json, $COPILOT_HOME/hooks/attune.json (user; default ~/.copilot)
//	cursor   .cursor/hooks.json, ~/.cursor/hooks.json (user)
//
// Only Claude Code has a local scope.
func HookFile(harness string, scope Scope, w Where) (string, error) {
	if _, ok := harnessSpecs(harness); !ok {
		return "", fmt.Errorf("no hook install for %q (want one of %s)", harness, strings.Join(Harnesses(), ", "))
	}
	if scope == ScopeLocal && harness != "claude" {
		return "", fmt.Errorf("%s has no local settings file: install into the project (the default) or --user", harness)
	}
	if scope == ScopeUser && w.Home == "" && !(harness == "codex" && w.env("CODEX_HOME") != "") && !(harness == "copilot" && w.env("COPILOT_HOME") != "") && !(harness == "gemini" && w.env("GEMINI_CLI_HOME") != "") && !(harness == "claude" && w.env("CLAUDE_CONFIG_DIR") != "") {
		return "", errors.New("no home folder to install into (HOME is not set)")
	}
	if scope != ScopeUser && w.Project == "" {
		return "", errors.New("no project folder to install into")
	}
	user := scope == ScopeUser
	switch harness {
	case "claude":
		if user {
			if d := w.env("CLAUDE_CONFIG_DIR"); d != "" { // Claude Code's own folder, moved
				return filepath.Join(d, "settings.json"), nil
			}
			return filepath.Join(w.Home, ".claude", "settings.json"), nil
		}
		if scope == ScopeLocal {
			return filepath.Join(w.Project, ".claude", "settings.local.json"), nil
		}
		return filepath.Join(w.Project, ".claude", "settings.json"), nil
	case "codex":
		if user {
			return filepath.Join(codexHome(w), "hooks.json"), nil
		}
		return filepath.Join(w.Project, ".codex", "hooks.json"), nil
	case "gemini":
		if user {
			home := w.env("GEMINI_CLI_HOME") // Gemini CLI's stand-in for the home folder
			if home == "" {
				home = w.Home
			}
			return filepath.Join(home, ".gemini", "settings.json"), nil
		}
		return filepath.Join(w.Project, ".gemini", "settings.json"), nil
	case "copilot":
		if user {
			home := w.env("COPILOT_HOME")
			if home == "" {
				home = filepath.Join(w.Home, ".copilot")
			}
			return filepath.Join(home, "hooks", "attune.json"), nil
		}
		return filepath.Join(w.Project, ".github", "hooks", "attune.json"), nil
	default: // cursor
		if user {
			return filepath.Join(w.Home, ".cursor", "hooks.json"), nil
		}
		return filepath.Join(w.Project, ".cursor", "hooks.json"), nil
	}
}

// codexHome is $CODEX_HOME, else ~/.codex.
func codexHome(w Where) string {
	if h := w.env("CODEX_HOME"); h != "" {
		return h
	}
	return filepath.Join(w.Home, ".codex")
}

// Installed says what an install or uninstall changed.
type Installed struct {
	// File is the hook file written (the target of a link).
	File string
	// Events are the events that have attune's entry (install) or lost
	// it (uninstall), in the file's terms.
	Events []string
	// Trust is the file trust entries were written to or removed from
	// (Codex's config.toml), "" when none were.
	Trust string
	// Unchanged is set when the file already said what was asked.
	Unchanged bool
}

// InstallHooks writes attune's entries for every event the harness maps
// into its hook file at path (see HookFile), merging: the user's own hooks
// and settings stay byte for byte, attune's earlier entries are replaced
// where they stood. The entries before a tool call fail closed: Claude
// Code's carries onFailure "block"; the others' commands turn a missing,
// crashed or killed attune into the harness's blocking exit code. A file
// it cannot parse, or of a shape it does
// not expect, is refused and left as it was.
//
// For Codex, w locates $CODEX_HOME/config.toml, where the entries are
// trusted (Codex runs no hook it was not told to trust).
func InstallHooks(harness, path string, in Install, w Where) (Installed, error) {
	spec, ok := harnessSpecs(harness)
	if !ok {
		return Installed{}, fmt.Errorf("no hook install for %q (want one of %s)", harness, strings.Join(Harnesses(), ", "))
	}
	if in.HTTP != "" && harness != "claude" {
		return Installed{}, fmt.Errorf("--http installs `attune hook serve claude` entries, which only Claude Code calls; %s runs commands", harness)
	}
	if in.HTTP == "" {
		if in.Binary == "" || !filepath.IsAbs(in.Binary) {
			return Installed{}, fmt.Errorf("the attune binary %q is not an absolute path", in.Binary)
		}
		if err := CheckBinary(in.Binary); err != nil {
			return Installed{}, err
		}
		if !strings.Contains(in.Binary, "attune") {
			// attune's entries are known by their command: `...attune...
			// hook DIALECT`
			return Installed{}, fmt.Errorf("the binary %s does not have attune in its path, so its entries could not be told from the user's own: install it (or a link to it) under a name with attune in it", in.Binary)
		}
	}
	return spec.edit(path, &in, w)
}

// UninstallHooks removes attune's entries (and only them) from the
// harness's hook file at path; for Codex, their trust entries too. A
// missing file is nothing to remove.
func UninstallHooks(harness, path string, w Where) (Installed, error) {
	spec, ok := harnessSpecs(harness)
	if !ok {
		return Installed{}, fmt.Errorf("no hook uninstall for %q (want one of %s)", harness, strings.Join(Harnesses(), ", "))
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Installed{File: path, Unchanged: true}, nil
	}
	return spec.edit(path, nil, w)
}

// InstallClaude writes attune's entries for every mapped event into the
// Claude Code settings file at path (InstallHooks for claude).
func InstallClaude(path string, in Install) error {
	if in.HTTP == "" && in.Binary != "" && !filepath.IsAbs(in.Binary) {
		return fmt.Errorf("the attune binary %q is not an absolute path", in.Binary)
	}
	spec, _ := harnessSpecs("claude")
	_, err := spec.edit(path, &in, Where{})
	return err
}

// UninstallClaude removes attune's entries (and only them) from the
// settings file at path.
func UninstallClaude(path string) error {
	_, err := UninstallHooks("claude", path, Where{})
	return err
}

// CheckBinary refuses an attune binary that will not be there when the
// harness runs the hooks: go run's build (in Go's build cache, trimmed
// later, or a temporary folder deleted when go run ends) or any binary in
// a temporary folder. Every hook would then fail, and a harness that
// treats a failed hook as non-blocking would run every call unjudged.
//
// caches are more folders of Go's build cache (`go env GOCACHE`, which
// GOCACHE in the environment and the default location already cover).
func CheckBinary(bin string, caches ...string) error {
	paths := []string{bin}
	if real, err := filepath.EvalSymlinks(bin); err == nil && real != bin {
		paths = append(paths, real)
	}
	for _, p := range paths {
		if why := transientPath(p, caches); why != "" {
			return fmt.Errorf("this attune (%s) is %s, so every hook would fail once it is gone; build attune where it stays (go install github.com/attune-dev/attune/cmd/attune@latest, or go build -o ~/bin/attune ./cmd/attune) and install with that binary", bin, why)
		}
	}
	return nil
}

// transientPath says why a binary at p will not outlive the install, or "".
func transientPath(p string, caches []string) string {
	slash := filepath.ToSlash(strings.ReplaceAll(p, `\`, "/"))
	if strings.Contains(slash, "/go-build") {
		return "go run's build in a go-build folder"
	}
	dirs := slices.Clone(caches)
	if c := os.Getenv("GOCACHE"); c != "" && c != "off" {
		dirs = append(dirs, c)
	}
	if c, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(c, "go-build"))
	}
	for _, d := range dirs {
		if within(p, d) {
			return "in Go's build cache (" + d + "), which go clean and its trimming remove"
		}
	}
	temps := []string{os.TempDir(), os.Getenv("TMPDIR"), os.Getenv("TMP"), os.Getenv("TEMP")}
	if runtime.GOOS != "windows" {
		temps = append(temps, "/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/private/var/folders", "/var/folders")
	}
	for _, d := range temps {
		if d != "" && within(p, d) {
			return "in a temporary folder (" + d + ")"
		}
	}
	return ""
}

// within reports whether p lies under dir (either may be a link's name).
func within(p, dir string) bool {
	for _, d := range []string{dir, evalOr(dir)} {
		for _, q := range []string{p, evalOr(p)} {
			if rel, err := filepath.Rel(filepath.Clean(d), filepath.Clean(q)); err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
				return true
			}
		}
	}
	return false
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// commandPath spells a path in a hook command. Claude Code runs a command
// hook through a shell: sh on Linux and macOS; on Windows bash (Git Bash)
// unless the entry asks for PowerShell, and cmd.exe in some versions. On
// Windows the path is written with forward slashes, which Windows takes as
// well: a path with no space or quote in it then needs no quoting and is
// one word every one of those shells reads the same, where backslashes
// would have to be quoted for bash (and a quoted command is a string to
// PowerShell). A path with spaces is quoted for sh and bash.
func commandPath(p string, windows bool) string {
	if windows {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	return shellQuote(p)
}

// shellQuote quotes s for sh when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hookCommand is the command that runs `attune hook DIALECT`.
func hookCommand(in *Install, dialect string, windows bool) string {
	cmd := commandPath(in.Binary, windows) + " hook " + dialect
	if in.Config != "" {
		cmd += " --config " + commandPath(in.Config, windows)
	}
	return cmd
}

// failClosedCommand runs `attune hook DIALECT` so that its failure is the
// harness's blocking exit code 2: attune answers every event with exit 0
// (a deny included), so only a missing binary (127), a crash or a signal
// reaches `|| ...`, which says so on stderr (the reason the harness shows)
// and exits 2. The wrapper runs in /bin/sh whatever the user's shell is
// (Codex runs hooks with $SHELL -lc); on Windows, where the harnesses use
// cmd.exe, PowerShell or bash, `|| exit 2` reads the same in each.
func failClosedCommand(in *Install, dialect string, windows bool) string {
	run := hookCommand(in, dialect, windows)
	if windows {
		return run + " || exit 2"
	}
	inner := run + ` || { echo "attune hook ` + dialect + ` failed (exit $?): the call is refused until attune runs again; see attune hook install ` + dialect + `" >&2; exit 2; }`
	return "/bin/sh -c " + shellQuote(inner)
}

// isOurs reports whether a hook handler (decoded) was written by attune for
// the dialect: its command runs `attune ... hook DIALECT`, or its url is
// attune's http path.
func isOurs(h any, dialect string) bool {
	m, ok := h.(map[string]any)
	if !ok {
		return false
	}
	if u, ok := m["url"].(string); ok && strings.HasSuffix(u, HTTPPath) {
		return true
	}
	for _, k := range []string{"command", "bash", "powershell"} {
		c, _ := m[k].(string)
		if !strings.Contains(c, "attune") {
			continue
		}
		for rest := c; ; {
			i := strings.Index(rest, " hook "+dialect)
			if i < 0 {
				break
			}
			rest = rest[i+len(" hook "+dialect):]
			if rest == "" || strings.ContainsAny(rest[:1], " '\"\t;|&") {
				return true
			}
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }
