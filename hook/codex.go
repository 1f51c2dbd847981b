package hook

import (
	"encoding/json"
	"fmt"
)

// Codex is the dialect of the OpenAI Codex CLI's hooks: Claude Code's
// event and answer format (hook_event_name, session_id, tool_name,
// tool_input, tool_use_id; hookSpecificOutput, decision: block) with a
// turn_id of its own and no batch events. Its tools: Bash (shell commands),
// apply_patch (edits), mcp__SERVER__TOOL.
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

// Render implements Dialect: Claude Code's answer format.
func (Codex) Render(ev Event, a Answer) []byte { return Claude{}.Render(ev, a) }

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
	case "Bash", "shell", "local_shell", "exec_command":
		return []string{"exec"}
	case "apply_patch", "Edit", "Write":
		return []string{"write"}
	case "Read", "view_image":
		return []string{"read"}
	case "web_search", "WebSearch", "WebFetch":
		return []string{"network"}
	}
	return nil
}
