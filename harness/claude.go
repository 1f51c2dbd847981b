package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Claude is the dialect of Claude Code's hooks: one JSON event on stdin
// (hook_event_name, session_id, ...), one JSON answer on stdout, exit 0.
func Claude() Dialect {
	return Dialect{name: "claude", kinds: []map[string]Kind{claudeKinds}, pre: "PreToolUse",
		caps:  Caps{Ask: true, Halt: true, ReplaceResult: true, WithholdResult: true},
		tools: "claude", mcp: true, parse: parseClaude, render: renderClaude, fields: true,
		effects: map[string][]string{
			"read":    {"Read", "Grep", "Glob", "LS"},
			"write":   {"Edit", "Write", "MultiEdit", "NotebookEdit"},
			"exec":    {"Bash"},
			"network": {"WebFetch", "WebSearch"},
			"spawn":   {"Task", "Agent"}}}
}

// claudeInput is the union of Claude Code's hook inputs.
type claudeInput struct {
	Event          string          `json:"hook_event_name"`
	Session        string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	TurnID         string          `json:"turn_id"`
	Tool           string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ToolResponse   any             `json:"tool_response"`
	Error          any             `json:"error"`
	Prompt         string          `json:"prompt"`
	StopHookActive bool            `json:"stop_hook_active"`
	LastMessage    *string         `json:"last_assistant_message"`
	AgentID        string          `json:"agent_id"`
	AgentType      string          `json:"agent_type"`
	Source         string          `json:"source"`
	Trigger        string          `json:"trigger"`
	Reason         string          `json:"reason"`
}

var claudeKinds = map[string]Kind{
	"SessionStart":       SessionStart,
	"UserPromptSubmit":   Prompt,
	"PreToolUse":         ToolPre,
	"PostToolUse":        ToolPost,
	"PostToolUseFailure": ToolFail,
	"Stop":               Stop,
	"SubagentStop":       SubagentStop,
	"SessionEnd":         SessionEnd,
	"PreCompact":         Compact,
	// events attune answers without acting on them
	"Notification":      Other,
	"PermissionRequest": Other,
	"PermissionDenied":  Other,
	"SubagentStart":     SubagentStart,
	"PostToolBatch":     Other,
}

// parseClaude reads an event in Claude Code's format (Codex's too).
func parseClaude(d Dialect, data []byte) (Event, error) {
	var in claudeInput
	if err := json.Unmarshal(data, &in); err != nil {
		return d.bad(in.Event, err)
	}
	return in.event(d)
}

func (in *claudeInput) event(d Dialect) (Event, error) {
	k, err := d.known(in.Event, "hook_event_name")
	if err != nil {
		return Event{Name: in.Event}, err
	}
	ev := Event{Kind: k, Name: in.Event, Session: in.Session, Cwd: in.Cwd, Turn: in.TurnID,
		Tool: in.Tool, ToolUseID: in.ToolUseID, ToolResponse: in.ToolResponse, Prompt: in.Prompt,
		StopActive: in.StopHookActive, LastMessage: in.LastMessage, AgentID: in.AgentID, AgentType: in.AgentType,
		Source: in.Source, Reason: in.Reason}
	if len(in.ToolInput) > 0 && string(in.ToolInput) != "null" {
		if err := json.Unmarshal(in.ToolInput, &ev.ToolInput); err != nil {
			return ev, fmt.Errorf("%w: tool_input: %v", ErrBadEvent, err)
		}
	}
	ev.Error = toolError(in.Error, ev.Kind)
	return ev, noSession(ev, "session_id")
}

// renderClaude writes an answer as Claude Code reads it (hookSpecificOutput,
// decision block, continue false).
func renderClaude(ev Event, a Answer) []byte {
	out := map[string]any{}
	if a.SystemMessage != "" {
		out["systemMessage"] = a.SystemMessage
	}
	specific := map[string]any{}
	switch ev.Kind {
	case ToolPre:
		putPermission(specific, a)
		if a.UpdatedInput != nil {
			specific["updatedInput"] = a.UpdatedInput
		}
	case Prompt, Stop, SubagentStop, ToolPost:
		if a.Decision == "block" {
			out["decision"] = "block"
			out["reason"] = a.Reason
		}
	}
	if ev.Kind == ToolPost && a.HasOutput {
		// an MCP tool's result is replaced by updatedMCPToolOutput, a
		// built-in tool's by updatedToolOutput in the tool's own shape
		if strings.HasPrefix(ev.Tool, "mcp__") {
			specific["updatedMCPToolOutput"] = a.UpdatedOutput
		} else {
			specific["updatedToolOutput"] = a.UpdatedOutput
		}
	}
	if a.Halt {
		out["continue"] = false
		out["stopReason"] = a.StopReason
	}
	if a.Context != "" {
		switch ev.Kind {
		case Prompt, ToolPre, ToolPost, ToolFail, SessionStart, SubagentStart:
			specific["additionalContext"] = a.Context
		}
	}
	if len(specific) > 0 {
		specific["hookEventName"] = ev.Name
		out["hookSpecificOutput"] = specific
	}
	return marshal(out)
}

// putPermission writes a tool call's decision into m as Claude Code names
// it (Copilot CLI reads the same names, top level).
func putPermission(m map[string]any, a Answer) {
	if a.Decision != "" {
		m["permissionDecision"] = a.Decision
		if a.Reason != "" {
			m["permissionDecisionReason"] = a.Reason
		}
	}
}
