package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Codex is the dialect of the OpenAI Codex CLI's hooks (read from Codex
// 0.169.0's own events, testdata/captured/codex-0.169.0): Claude Code's
// event and answer format (hook_event_name, session_id, tool_name,
// tool_input, tool_use_id; hookSpecificOutput, decision: block) with a
// turn_id of its own, no batch events and no failure event (a command that
// fails is a PostToolUse; tool_response is the output as a string).
//
// The tools arrive as Codex names them in events, not as the model calls
// them: the model's exec_command {cmd} is Bash {command}, apply_patch is
// apply_patch {command: PATCH}, an MCP tool mcp__SERVER__TOOL.
//
// Codex refuses permissionDecision "ask" (it reports the hook as failed
// and runs the command), so a call a guard marks for confirmation is
// denied, the reason saying so.
type Codex struct{}

// Name implements Dialect.
func (Codex) Name() string { return "codex" }

var codexKinds = map[string]Kind{
	"SessionStart":      SessionStart,
	"UserPromptSubmit":  Prompt,
	"PreToolUse":        ToolPre,
	"PostToolUse":       ToolPost,
	"Stop":              Stop,
	"SubagentStop":      SubagentStop,
	"SessionEnd":        SessionEnd,
	"PreCompact":        Compact,
	"PermissionRequest": Other,
	"Notification":      Other,
	"SubagentStart":     Other,
}

// Parse implements Dialect.
func (Codex) Parse(data []byte) (Event, error) {
	var in claudeInput
	if err := json.Unmarshal(data, &in); err != nil {
		return Event{Kind: codexKinds[in.Event], Name: in.Event}, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	return in.event(codexKinds)
}

// Render implements Dialect: Claude Code's answer format; an ask is a
// denial.
func (Codex) Render(ev Event, a Answer) []byte {
	if ev.Kind == ToolPre && a.Decision == "ask" {
		a = askDenied(a)
	}
	return Claude{}.Render(ev, a)
}

// askDenied is the answer to a call a guard wants confirmed, in a harness
// that cannot ask for the confirmation from a hook: a denial saying so.
func askDenied(a Answer) Answer {
	a.Decision, a.UpdatedInput = "deny", nil
	a.Reason = strings.TrimSpace(a.Reason + " (this call needs a person's confirmation, which the agent cannot ask for here: it was not run; ask the user to run it)")
	return a
}

// ToolPath implements Dialect: codex/NAME, or mcp/SERVER/TOOL.
func (Codex) ToolPath(tool string) string {
	if p := claudeToolPath(tool); p[:4] == "mcp/" {
		return p
	}
	return "codex/" + tool
}

// Effects implements Dialect.
func (Codex) Effects(tool string) []string {
	switch tool {
	case "Bash":
		return []string{"exec"}
	case "apply_patch":
		return []string{"write"}
	}
	return nil
}
