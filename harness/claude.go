package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Claude is the dialect of Claude Code's hooks: one JSON event on stdin
// (hook_event_name, session_id, ...), one JSON answer on stdout, exit 0.
type Claude struct{}

// Name implements Dialect.
func (Claude) Name() string { return "claude" }

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

// ErrUnknownEvent: the event's name is none the dialect knows.
var ErrUnknownEvent = errors.New("unknown hook event")

// ErrBadEvent: the input is not a hook event (not JSON, or a field of the
// wrong type).
var ErrBadEvent = errors.New("not a hook event")

// Parse implements Dialect.
func (Claude) Parse(data []byte) (Event, error) {
	var in claudeInput
	if err := json.Unmarshal(data, &in); err != nil {
		return Event{Kind: claudeKinds[in.Event], Name: in.Event}, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	ev, err := in.event(claudeKinds)
	ev.Fields = EventFields(data)
	return ev, err
}

func (in *claudeInput) event(kinds map[string]Kind) (Event, error) {
	if in.Event == "" {
		return Event{}, fmt.Errorf("%w: no hook_event_name", ErrBadEvent)
	}
	k, ok := kinds[in.Event]
	if !ok {
		return Event{Name: in.Event}, fmt.Errorf("%w %q", ErrUnknownEvent, in.Event)
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
	if ev.Session == "" && ev.Kind != Other {
		return ev, fmt.Errorf("%w: no session_id", ErrBadEvent)
	}
	return ev, nil
}

// ToolPath implements Dialect: claude/NAME, or mcp/SERVER/TOOL for
// mcp__SERVER__TOOL.
func (Claude) ToolPath(tool string) string { return claudeToolPath(tool) }

func claudeToolPath(tool string) string {
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if server, name, ok := strings.Cut(rest, "__"); ok {
			return "mcp/" + server + "/" + name
		}
	}
	return "claude/" + tool
}

// Effects implements Dialect: Claude Code's built-in tools.
func (Claude) Effects(tool string) []string { return claudeEffects(tool) }

func claudeEffects(tool string) []string {
	switch tool {
	case "Read", "Grep", "Glob", "LS":
		return []string{"read"}
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return []string{"write"}
	case "Bash":
		return []string{"exec"}
	case "WebFetch", "WebSearch":
		return []string{"network"}
	case "Task", "Agent":
		return []string{"spawn"}
	}
	return nil
}

// Render implements Dialect.
func (Claude) Render(ev Event, a Answer) []byte {
	out := map[string]any{}
	if a.SystemMessage != "" {
		out["systemMessage"] = a.SystemMessage
	}
	specific := map[string]any{}
	switch ev.Kind {
	case ToolPre:
		if a.Decision != "" {
			specific["permissionDecision"] = a.Decision
			if a.Reason != "" {
				specific["permissionDecisionReason"] = a.Reason
			}
		}
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
