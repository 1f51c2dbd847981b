package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// ClaudeEvents returns the Claude Code events attune maps, in the order an
// install writes them (the caller's own copy).
func ClaudeEvents() []string { return slices.Clone(claudeEvents) }

// claudeEvents are the events of ClaudeEvents (never changed).
var claudeEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
	"Stop", "SubagentStart", "SubagentStop", "PreCompact", "SessionEnd"}

// toolEvents take a matcher (the tool name pattern).
var toolEvents = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true}

// HTTPPath is the path `hook serve claude` answers and `hook install
// --http` points at; it also marks an http entry as attune's.
const HTTPPath = "/attune/hook/claude"

// Install describes the hook entries to write.
type Install struct {
	// Binary is the attune executable (absolute).
	Binary string
	// Config is the configuration (absolute); "" leaves it to discovery.
	Config string
	// HTTP, when set (127.0.0.1:PORT), installs http entries for
	// `attune hook serve` instead of commands.
	HTTP string
}

// entry is one hook entry of ours.
func (in Install) entry() map[string]any {
	if in.HTTP != "" {
		return map[string]any{"type": "http", "url": "http://" + in.HTTP + HTTPPath}
	}
	windows := runtime.GOOS == "windows"
	cmd := commandPath(in.Binary, windows) + " hook claude"
	if in.Config != "" {
		cmd += " --config " + commandPath(in.Config, windows)
	}
	return map[string]any{"type": "command", "command": cmd}
}

// ours reports whether a hook entry was written by attune.
func ours(h any) bool {
	m, ok := h.(map[string]any)
	if !ok {
		return false
	}
	if u, ok := m["url"].(string); ok && strings.HasSuffix(u, HTTPPath) {
		return true
	}
	c, _ := m["command"].(string)
	return strings.Contains(c, "attune") && strings.Contains(c, " hook claude")
}

// InstallClaude writes attune's entries for every mapped event into the
// Claude Code settings file at path (merging: the user's own hooks and
// settings stay; attune's earlier entries are replaced).
func InstallClaude(path string, in Install) error {
	return editSettings(path, func(hooks map[string]any) {
		strip(hooks)
		for _, ev := range claudeEvents {
			group := map[string]any{"hooks": []any{in.entry()}}
			if toolEvents[ev] {
				group["matcher"] = "*"
			}
			list, _ := hooks[ev].([]any)
			hooks[ev] = append(list, group)
		}
	})
}

// UninstallClaude removes attune's entries (and only them) from the
// settings file at path.
func UninstallClaude(path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return editSettings(path, strip)
}

// strip removes attune's entries, then groups and events left empty.
func strip(hooks map[string]any) {
	for ev, v := range hooks {
		groups, ok := v.([]any)
		if !ok {
			continue
		}
		var keep []any
		for _, g := range groups {
			gm, ok := g.(map[string]any)
			if !ok {
				keep = append(keep, g)
				continue
			}
			hs, ok := gm["hooks"].([]any)
			if !ok {
				keep = append(keep, g)
				continue
			}
			var left []any
			for _, h := range hs {
				if !ours(h) {
					left = append(left, h)
				}
			}
			if len(left) == 0 {
				continue
			}
			gm["hooks"] = left
			keep = append(keep, gm)
		}
		if len(keep) == 0 {
			delete(hooks, ev)
		} else {
			hooks[ev] = keep
		}
	}
}

func editSettings(path string, edit func(hooks map[string]any)) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a link (a dotfiles folder) stays a link: its file is edited
	}
	settings := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(bytes.TrimSpace(data)) > 0:
		if err := json.Unmarshal(data, &settings); err != nil {
			return fmt.Errorf("%s is not JSON (%v): fix it or move it away, then install again", path, err)
		}
	}
	hooks, ok := settings["hooks"].(map[string]any)
	if !ok {
		if settings["hooks"] != nil {
			return fmt.Errorf("%s: \"hooks\" is not an object", path)
		}
		hooks = map[string]any{}
	}
	edit(hooks)
	if len(hooks) == 0 {
		delete(settings, "hooks")
	} else {
		settings["hooks"] = hooks
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".attune-tmp"
	if err := os.WriteFile(tmp, append(out, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
