package harness

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
// denied, the reason saying so (its Caps have no Ask); it applies a
// rewrite only with an allow.
func Codex() Dialect {
	return Dialect{name: "codex", kinds: []map[string]Kind{codexKinds}, pre: "PreToolUse",
		caps:  Caps{RewriteAllow: true},
		tools: "codex", mcp: true, parse: parseClaude, render: renderClaude,
		effects: map[string][]string{"exec": {"Bash"}, "write": {"apply_patch"}}}
}

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
