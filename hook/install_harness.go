package hook

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"strings"
)

// harnessSpec is how one harness's hook file is written.
type harnessSpec struct {
	dialect string
	// events are the events an install writes, in order.
	events []string
	// flat: an event's list holds handlers, not matcher groups.
	flat bool
	// version: the file carries "version": 1.
	version bool
	// matcher: events whose group takes the matcher "*".
	matcher []string
	// guard: events whose failed hook must block (onFailure, or the
	// wrapper command): those before a tool call runs. The others fail as
	// the harness lets them: a blocked prompt would keep the failure from
	// the model (and every prompt would be lost), a blocked Stop would keep
	// the agent going.
	guard []string
	// handler is attune's handler for an event.
	handler func(in *Install, ev string, windows bool) []kv
	// codex: trust entries go into $CODEX_HOME/config.toml.
	codex bool
}

// secs is HookTimeout in whole seconds.
func secs() int { return int(HookTimeout.Seconds()) }

func harnessSpecs(name string) (*harnessSpec, bool) {
	switch name {
	case "claude":
		return &harnessSpec{dialect: "claude", events: claudeEvents,
			matcher: []string{"PreToolUse", "PostToolUse", "PostToolUseFailure"},
			guard:   []string{"PreToolUse"},
			handler: func(in *Install, ev string, windows bool) []kv {
				// onFailure "block" (Claude Code 2.1.295 and later): a hook
				// that cannot start, times out or exits with another code
				// than 0 or 2 counts as exit 2, so the tool call is blocked
				// and the model told why.
				var h []kv
				if in.HTTP != "" {
					h = []kv{{"type", "http"}, {"url", "http://" + in.HTTP + HTTPPath}, {"timeout", secs()}}
					if in.Token != "" {
						h = append(h, kv{"headers", map[string]string{TokenHeader: in.Token}})
					}
				} else {
					h = []kv{{"type", "command"}, {"command", hookCommand(in, "claude", windows)}, {"timeout", secs()}}
				}
				if ev == "PreToolUse" {
					h = append(h, kv{"onFailure", "block"})
				}
				return h
			}}, true
	case "codex":
		// Codex 0.169: hooks.json holds the events of its HookEventsToml;
		// timeouts are seconds (timeout, default 600); exit 2 blocks a
		// PreToolUse or a prompt with stderr as the reason, any other
		// failure lets it through.
		return &harnessSpec{dialect: "codex", codex: true,
			events:  []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop"},
			matcher: []string{"PreToolUse", "PostToolUse"},
			guard:   []string{"PreToolUse"},
			handler: commandHandler("codex", "timeout", secs())}, true
	case "gemini":
		// Gemini CLI 0.61: settings.json "hooks"; timeouts are
		// milliseconds (default 60000); exit 0 allows, 1 warns and allows,
		// any other code denies with the output as the reason; a hook
		// killed by a signal (exit code null) reads as success.
		return &harnessSpec{dialect: "gemini",
			events:  []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd"},
			matcher: []string{"BeforeTool", "AfterTool"},
			guard:   []string{"BeforeTool"},
			handler: commandHandler("gemini", "timeout", int(HookTimeout.Milliseconds()))}, true
	case "copilot":
		// Copilot CLI 1.0: .github/hooks/*.json, {"version": 1, "hooks":
		// {EVENT: [{"type": "command", "bash": ..., "timeoutSec": N}]}};
		// event names in Claude Code's spelling get payloads that name
		// their event (hook_event_name); exit 2 denies a preToolUse.
		return &harnessSpec{dialect: "copilot", flat: true, version: true,
			events: []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "PreCompact", "SessionEnd"},
			guard:  []string{"PreToolUse"},
			handler: func(in *Install, ev string, windows bool) []kv {
				if windows { // Copilot runs "powershell" there
					return []kv{{"type", "command"}, {"powershell", powershellCommand(in, "copilot", ev == "PreToolUse")}, {"timeoutSec", secs()}}
				}
				return []kv{{"type", "command"}, {"bash", guardedCommand(in, "copilot", ev, false, []string{"PreToolUse"})}, {"timeoutSec", secs()}}
			}}, true
	case "cursor":
		// Cursor: .cursor/hooks.json, {"version": 1, "hooks": {event:
		// [{"command": ..., "timeout": seconds}]}}; exit 2 blocks.
		guards := []string{"preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile"}
		return &harnessSpec{dialect: "cursor", flat: true, version: true,
			events: []string{"sessionStart", "beforeSubmitPrompt", "preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile",
				"postToolUse", "postToolUseFailure", "afterShellExecution", "afterMCPExecution", "afterFileEdit", "stop", "subagentStop", "preCompact", "sessionEnd"},
			guard: guards,
			handler: func(in *Install, ev string, windows bool) []kv {
				h := []kv{{"command", guardedCommand(in, "cursor", ev, windows, guards)}, {"timeout", secs()}}
				if slices.Contains(guards, ev) {
					h = append(h, kv{"failClosed", true})
				}
				return h
			}}, true
	}
	return nil, false
}

// commandHandler is a {type: command, command, TIMEOUTKEY: n} handler.
func commandHandler(dialect, timeoutKey string, n int) func(in *Install, ev string, windows bool) []kv {
	return func(in *Install, ev string, windows bool) []kv {
		spec, _ := harnessSpecs(dialect)
		return []kv{{"type", "command"}, {"command", guardedCommand(in, dialect, ev, windows, spec.guard)}, {timeoutKey, n}}
	}
}

// guardedCommand is the fail-closed command on a guard event, the plain one
// elsewhere.
func guardedCommand(in *Install, dialect, ev string, windows bool, guards []string) string {
	if slices.Contains(guards, ev) {
		return failClosedCommand(in, dialect, windows)
	}
	return hookCommand(in, dialect, windows)
}

// entry is attune's element for an event's list: a group holding the
// handler, or the handler itself for a flat harness.
func (s *harnessSpec) entry(in *Install, ev string) []byte {
	h := compactObject(s.handler(in, ev, runtime.GOOS == "windows"))
	if s.flat {
		return h
	}
	var g []kv
	if slices.Contains(s.matcher, ev) {
		g = append(g, kv{"matcher", "*"})
	}
	return compactObject(append(g, kv{"hooks", json.RawMessage("[" + string(h) + "]")}))
}

// edit installs (in set) or uninstalls (in nil) at path.
func (s *harnessSpec) edit(path string, in *Install, w Where) (Installed, error) {
	real, data, mode, err := readHookFile(path)
	if err != nil {
		return Installed{}, err
	}
	var add func(string) []byte
	if in != nil {
		add = func(ev string) []byte { return s.entry(in, ev) }
		if in.HTTP != "" && in.Token != "" && data == nil {
			mode = 0o600 // a new file holding a secret header
		}
	}
	fe, err := s.editHookFile(real, data, add)
	if err != nil {
		return Installed{}, err
	}
	fe.changed = !bytes.Equal(fe.out, data)
	res := Installed{File: real, Events: fe.events, Unchanged: !fe.changed}
	if s.codex && (fe.changed || in != nil) {
		// the key names the file as Codex finds it: the path given
		trust, tout, tmode, tchanged, err := codexTrustEdit(w, path, fe, in != nil)
		if err != nil {
			return Installed{}, err
		}
		if tchanged {
			if err := writeAtomic(trust, tout, tmode); err != nil {
				return Installed{}, err
			}
			res.Trust = trust
		}
	}
	if !fe.changed {
		return res, nil
	}
	if in == nil && s.dialect == "copilot" && onlyVersionLeft(fe.out) {
		return res, os.Remove(real) // attune's own file, nothing else in it
	}
	return res, writeAtomic(real, fe.out, mode)
}

// onlyVersionLeft reports whether a hook file holds nothing but "version".
func onlyVersionLeft(b []byte) bool {
	top, err := parseObject(b, skipWS(b, 0), "the file")
	if err != nil {
		return false
	}
	for _, m := range top.members {
		if m.key != "version" {
			return false
		}
	}
	return true
}

// powershellCommand runs `attune hook DIALECT` from PowerShell (5 and 7):
// the call operator on quoted paths, and when guard is set, any exit but 0
// (a missing binary, a crash) becomes exit 2.
func powershellCommand(in *Install, dialect string, guard bool) string {
	q := func(p string) string {
		return "'" + strings.ReplaceAll(strings.ReplaceAll(p, `\`, "/"), "'", "''") + "'"
	}
	cmd := "& " + q(in.Binary) + " hook " + dialect
	if in.Config != "" {
		cmd += " --config " + q(in.Config)
	}
	if guard {
		cmd += "; if ($LASTEXITCODE -ne 0) { exit 2 }"
	}
	return cmd
}
