package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Cursor is the dialect of Cursor's agent hooks: camelCase events
// (beforeSubmitPrompt, preToolUse, beforeShellExecution, beforeMCPExecution,
// beforeReadFile, postToolUse, afterShellExecution, afterMCPExecution,
// afterFileEdit, stop, sessionStart, sessionEnd, preCompact) keyed by
// conversation_id; answers carry permission (allow, deny, ask),
// user_message and agent_message, updated_input (preToolUse only),
// additional_context, continue (beforeSubmitPrompt) and followup_message
// (stop: Cursor sends it as the next user message).
//
// The specific events are tools of their own: Shell ({command, cwd}), Read
// ({file_path}), Edit ({file_path, edits}) and MCP tools by name (path
// mcp/cursor/NAME, Cursor does not say which server). A shell command or
// an MCP call is matched with its after-event by the generation, the tool
// and the arguments. A guard's rewrite cannot be expressed in the specific
// events: the call is denied with the rewrite in the message.
type Cursor struct{}

// Name implements Dialect.
func (Cursor) Name() string { return "cursor" }

var cursorKinds = map[string]Kind{
	"sessionStart":         SessionStart,
	"beforeSubmitPrompt":   Prompt,
	"preToolUse":           ToolPre,
	"beforeShellExecution": ToolPre,
	"beforeMCPExecution":   ToolPre,
	"beforeReadFile":       ToolPre,
	"postToolUse":          ToolPost,
	"postToolUseFailure":   ToolFail,
	"afterShellExecution":  ToolPost,
	"afterMCPExecution":    ToolPost,
	"afterFileEdit":        ToolPost,
	"stop":                 Stop,
	"subagentStop":         SubagentStop,
	"sessionEnd":           SessionEnd,
	"preCompact":           Compact,
	"afterAgentResponse":   Other,
	"afterAgentThought":    Other,
	"subagentStart":        Other,
	"beforeTabFileRead":    Other,
	"afterTabFileEdit":     Other,
}

type cursorInput struct {
	Event          string `json:"hook_event_name"`
	Conversation   string `json:"conversation_id"`
	Generation     string `json:"generation_id"`
	Tool           string `json:"tool_name"`
	ToolInput      any    `json:"tool_input"`
	ToolUseID      string `json:"tool_use_id"`
	ToolOutput     any    `json:"tool_output"`
	ResultJSON     any    `json:"result_json"`
	Command        string `json:"command"`
	Cwd            string `json:"cwd"`
	Output         any    `json:"output"`
	FilePath       string `json:"file_path"`
	Edits          any    `json:"edits"`
	Prompt         string `json:"prompt"`
	Error          any    `json:"error"`
	Status         string `json:"status"`
	LoopCount      int    `json:"loop_count"`
	Source         string `json:"source"`
	SubagentID     string `json:"subagent_id"`
	SubagentType   string `json:"subagent_type"`
	WorkspaceRoots []any  `json:"workspace_roots"`
}

// Parse implements Dialect.
func (Cursor) Parse(data []byte) (Event, error) {
	var in cursorInput
	if err := json.Unmarshal(data, &in); err != nil {
		return Event{Kind: cursorKinds[in.Event], Name: in.Event}, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	if in.Event == "" {
		return Event{}, fmt.Errorf("%w: no hook_event_name", ErrBadEvent)
	}
	k, ok := cursorKinds[in.Event]
	if !ok {
		return Event{Name: in.Event}, fmt.Errorf("%w %q", ErrUnknownEvent, in.Event)
	}
	ev := Event{Kind: k, Name: in.Event, Session: in.Conversation, Cwd: in.Cwd, Turn: in.Generation, Prompt: in.Prompt,
		Tool: in.Tool, ToolUseID: in.ToolUseID, Source: in.Source, AgentID: in.SubagentID, AgentType: in.SubagentType,
		StopActive: in.LoopCount > 0}
	if ev.Session == "" && k != Other {
		return ev, fmt.Errorf("%w: no conversation_id", ErrBadEvent)
	}
	input := func(v any) (map[string]any, error) {
		switch x := v.(type) {
		case nil:
			return map[string]any{}, nil
		case map[string]any:
			return x, nil
		case string: // MCP input comes as JSON text
			var m map[string]any
			if err := json.Unmarshal([]byte(x), &m); err != nil {
				return map[string]any{"input": x}, nil
			}
			return m, nil
		}
		return nil, fmt.Errorf("%w: tool_input is %T, want an object", ErrBadEvent, v)
	}
	var err error
	switch in.Event {
	case "preToolUse", "postToolUse", "postToolUseFailure":
		ev.ToolInput, err = input(in.ToolInput)
		ev.ToolResponse = in.ToolOutput
	case "beforeShellExecution", "afterShellExecution":
		ev.Tool, ev.ToolInput, ev.ToolResponse = "Shell", map[string]any{"command": in.Command, "cwd": in.Cwd}, in.Output
	case "beforeMCPExecution", "afterMCPExecution":
		ev.Tool = "MCP:" + in.Tool
		ev.ToolInput, err = input(in.ToolInput)
		ev.ToolResponse = in.ResultJSON
	case "beforeReadFile":
		ev.Tool, ev.ToolInput = "Read", map[string]any{"file_path": in.FilePath}
	case "afterFileEdit":
		ev.Tool, ev.ToolInput, ev.ToolResponse = "Edit", map[string]any{"file_path": in.FilePath}, map[string]any{"edits": in.Edits}
	case "stop":
		if in.Status == "error" || in.Status == "aborted" {
			ev.Kind = SessionEnd // the loop did not finish: end the turn, continue nothing
		}
	}
	if err != nil {
		return ev, err
	}
	ev.Error = toolError(in.Error, ev.Kind)
	if (k == ToolPre || k == ToolPost) && ev.ToolUseID == "" {
		ev.ToolUseID = "cursor:" + in.Generation + ":" + ev.Tool + ":" + string(marshal(ev.ToolInput))
	}
	return ev, nil
}

// Render implements Dialect.
func (Cursor) Render(ev Event, a Answer) []byte {
	out := map[string]any{}
	switch ev.Kind {
	case ToolPre:
		decision := a.Decision
		if a.UpdatedInput != nil && ev.Name != "preToolUse" {
			decision = "deny"
			a.Reason = "attune rewrote this call to " + string(marshal(a.UpdatedInput)) + "; run that instead"
		} else if a.UpdatedInput != nil {
			out["updated_input"] = a.UpdatedInput
		}
		if decision != "" {
			out["permission"] = decision
		}
		if a.Reason != "" {
			out["agent_message"] = a.Reason
			if decision == "deny" || decision == "ask" {
				out["user_message"] = a.Reason
			}
		}
	case Prompt:
		out["continue"] = a.Decision != "block"
		if a.Decision == "block" {
			out["user_message"] = a.Reason
		}
	case Stop, SubagentStop:
		if a.Decision == "block" {
			out["followup_message"] = a.Reason
		}
	}
	if a.Context != "" {
		switch ev.Kind {
		case ToolPost, ToolFail, SessionStart:
			out["additional_context"] = a.Context
		case Prompt: // beforeSubmitPrompt cannot add context: tell the user
			if a.SystemMessage == "" {
				a.SystemMessage = a.Context
			}
		}
	}
	if a.SystemMessage != "" && out["user_message"] == nil {
		out["user_message"] = a.SystemMessage
	}
	return marshal(out)
}

// ToolPath implements Dialect: cursor/NAME; MCP tools mcp/cursor/NAME.
func (Cursor) ToolPath(tool string) string {
	if name, ok := strings.CutPrefix(tool, "MCP:"); ok {
		return "mcp/cursor/" + name
	}
	return "cursor/" + tool
}

// Effects implements Dialect.
func (Cursor) Effects(tool string) []string {
	switch tool {
	case "Shell", "run_terminal_cmd":
		return []string{"exec"}
	case "Read", "read_file", "Grep", "grep", "codebase_search", "list_dir", "file_search", "glob_file_search":
		return []string{"read"}
	case "Edit", "Write", "edit_file", "search_replace", "delete_file", "MultiEdit":
		return []string{"write"}
	case "web_search", "WebSearch", "WebFetch":
		return []string{"network"}
	}
	return nil
}
