package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Codex runs a hook from hooks.json only once it is trusted: config.toml
// holds, for each handler,
//
//	[hooks.state."FILE:EVENT:GROUP:HANDLER"]
//	trusted_hash = "sha256:..."
//
// where FILE is the hooks.json path, EVENT the event's snake_case name,
// GROUP and HANDLER the indexes of the matcher group in the event's list
// and of the handler in the group; the hash is SHA-256 of the compact JSON,
// keys sorted, of {event_name, matcher (when the event takes one), hooks:
// [{type, command, timeout (seconds, default 600), async}]} (Codex 0.169,
// codex-rs/hooks discovery and config fingerprint). Changing the command
// or moving the entry un-trusts it, so install writes both together.

// codexEventLabel is Codex's snake_case name of an event.
func codexEventLabel(ev string) string {
	var b strings.Builder
	for i, r := range ev {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexMatcherEvents are the events whose matcher Codex keeps (the others
// ignore it, and it is not part of their hash).
var codexMatcherEvents = []string{"PreToolUse", "PostToolUse", "PermissionRequest", "SessionStart", "PreCompact", "PostCompact", "SubagentStart", "SubagentStop"}

// codexHookHash is the trusted_hash Codex computes for a command handler.
func codexHookHash(ev string, matcher *string, command string, timeout int, async bool) string {
	if timeout <= 0 {
		timeout = 600
	}
	id := map[string]any{
		"event_name": codexEventLabel(ev),
		"hooks":      []any{map[string]any{"type": "command", "command": command, "timeout": timeout, "async": async}},
	}
	if matcher != nil && slices.Contains(codexMatcherEvents, ev) {
		id["matcher"] = *matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(id)
	sum := sha256.Sum256(bytes.TrimRight(b.Bytes(), "\n"))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// codexKey is the hooks.state key of a handler of the hooks.json at file.
func codexKey(file string, p handlerPos) string {
	return file + ":" + codexEventLabel(p.event) + ":" + itoa(p.group) + ":" + itoa(p.handle)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// stateHeader matches a [hooks.state."KEY"] table header.
var stateHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*\]\s*(#.*)?$`)
})

// tableHeader matches any table header line.
var tableHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\[?\s*[^\[\]=]+\]\]?\s*(#.*)?$`) })

// codexTrustEdit edits $CODEX_HOME/config.toml for an edit of the hooks.json
// at hooksFile: attune's old trust entries go, the user's moved handlers
// keep theirs under their new keys, and (installing) attune's new handlers
// are trusted. A config.toml it cannot read as TOML is refused.
func codexTrustEdit(w Where, hooksFile string, fe fileEdit, installing bool) (string, []byte, os.FileMode, bool, error) {
	home := codexHome(w)
	if home == "" || (w.env("CODEX_HOME") == "" && w.Home == "") {
		return "", nil, 0, false, errors.New("cannot find Codex's config.toml to trust the hooks in: set CODEX_HOME or HOME")
	}
	path := filepath.Join(home, "config.toml")
	real, data, mode, err := readHookFile(path)
	if err != nil {
		return "", nil, 0, false, err
	}
	if mode == 0o644 && data == nil {
		mode = 0o600
	}
	if !utf8.Valid(data) {
		return "", nil, 0, false, &hookFileError{real, "is not UTF-8 text"}
	}
	var before map[string]any
	if _, err := toml.Decode(string(data), &before); err != nil {
		return "", nil, 0, false, &hookFileError{real, fmt.Sprintf("is not TOML (%v)", err)}
	}
	// Codex names the file by the path it found it at: CODEX_HOME resolved
	// (a link's target), a project's folder as the working folder was given
	// (a link kept). Both spellings are trusted when they differ.
	file := hooksFile
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	files := []string{file}
	if real := filepath.Join(evalOr(filepath.Dir(file)), filepath.Base(file)); real != file {
		files = append(files, real)
	}
	drop := map[string]bool{}
	rename := map[string]string{}
	for _, file := range files {
		for _, p := range fe.removed {
			drop[codexKey(file, p)] = true
		}
		for old, now := range fe.moved {
			rename[codexKey(file, old)] = codexKey(file, now)
		}
	}
	want := map[string]string{}
	var order []string
	for _, p := range fe.added {
		var g struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
				Async   bool   `json:"async"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(fe.ours[p], &g); err != nil || len(g.Hooks) != 1 {
			return "", nil, 0, false, fmt.Errorf("attune's own Codex entry for %s does not read back: %v", p.event, err)
		}
		h := g.Hooks[0]
		for _, file := range files {
			k := codexKey(file, p)
			want[k] = codexHookHash(p.event, g.Matcher, h.Command, h.Timeout, h.Async)
			order = append(order, k)
		}
	}
	// walk the lines: drop attune's blocks (and any it is about to write),
	// rename the user's moved ones
	lines := strings.SplitAfter(string(data), "\n")
	var out strings.Builder
	skipping := false
	changed := false
	table := ""
	for n, line := range lines {
		text := strings.TrimRight(line, "\r\n")
		if inlineState(table, text) {
			return "", nil, 0, false, &hookFileError{fmt.Sprintf("%s:%d", real, n+1), "keeps hook trust in a form attune does not edit (hooks.state as keys, not [hooks.state.\"KEY\"] tables): trust the hooks with /hooks in Codex instead, or write that trust as tables"}
		}
		if tableHeader().MatchString(text) {
			table = strings.Join(strings.Fields(strings.Trim(strings.SplitN(strings.TrimSpace(text), "#", 2)[0], " []")), "")
		}
		if m := stateHeader().FindStringSubmatch(text); m != nil {
			var k struct{ K string }
			if _, err := toml.Decode("K = "+m[1], &k); err == nil {
				skipping = drop[k.K] || want[k.K] != ""
				if skipping {
					changed = true
					continue
				}
				if nk, ok := rename[k.K]; ok {
					line = "[hooks.state." + tomlString(nk) + "]" + line[len(text):]
					changed = true
				}
			} else {
				skipping = false
			}
		} else if tableHeader().MatchString(text) {
			skipping = false
		}
		if !skipping {
			out.WriteString(line)
		}
	}
	if len(order) > 0 {
		s := out.String()
		if s != "" && !strings.HasSuffix(s, "\n") {
			out.WriteString("\n")
		}
		if s != "" && !strings.HasSuffix(s, "\n\n") {
			out.WriteString("\n")
		}
		for _, k := range order {
			fmt.Fprintf(&out, "[hooks.state.%s]\ntrusted_hash = %s\n", tomlString(k), tomlString(want[k]))
		}
		changed = true
	}
	if !changed {
		return real, data, mode, false, nil
	}
	result := out.String()
	if result == string(data) {
		return real, data, mode, false, nil
	}
	var after struct {
		Hooks struct {
			State map[string]struct {
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
	}
	if _, err := toml.Decode(result, &after); err != nil {
		return "", nil, 0, false, &hookFileError{real, fmt.Sprintf("could not take attune's [hooks.state] entries (%v): trust the hooks with /hooks in Codex instead", err)}
	}
	for k, h := range want {
		if after.Hooks.State[k].TrustedHash != h {
			return "", nil, 0, false, &hookFileError{real, "keeps hook trust in a form attune does not edit (" + k + "): trust the hooks with /hooks in Codex instead"}
		}
	}
	return real, []byte(result), mode, true, nil
}

// inlineState reports whether a line of config.toml, in the table named
// table, defines hook trust as keys (hooks = {...}, hooks.state = ...,
// [hooks] state = ..., or [hooks.state] "KEY" = ...), which the tables
// attune appends would collide with.
func inlineState(table, line string) bool {
	t := strings.TrimSpace(line)
	if t == "" || t[0] == '#' || t[0] == '[' {
		return false
	}
	switch table {
	case "":
		return rootHooksKey().MatchString(t)
	case "hooks":
		return stateKey().MatchString(t)
	case "hooks.state":
		return strings.ContainsAny(t, "=")
	}
	return false
}

var (
	rootHooksKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^hooks\s*(=|\.\s*state\s*[=.])`) })
	stateKey     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^state\s*[=.]`) })
)
