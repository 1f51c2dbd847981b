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
func Cursor() Dialect {
	return Dialect{name: "cursor", kinds: []map[string]Kind{cursorKinds}, pre: "preToolUse",
		caps: Caps{Ask: true}, toolPath: cursorToolPath, parse: parseCursor, render: renderCursor, callID: "cursor",
		effects: map[string][]string{
			"exec":    {"Shell", "run_terminal_cmd"},
			"read":    {"Read", "read_file", "Grep", "grep", "codebase_search", "list_dir", "file_search", "glob_file_search"},
			"write":   {"Edit", "Write", "edit_file", "search_replace", "delete_file", "MultiEdit"},
			"network": {"web_search", "WebSearch", "WebFetch"}}}
}

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

// cursorToolPath is cursor/NAME; an MCP tool (MCP:NAME) mcp/cursor/NAME,
// since Cursor does not say which server.
func cursorToolPath(tool string) string {
	if name, ok := strings.CutPrefix(tool, "MCP:"); ok {
		return "mcp/cursor/" + name
	}
	return "cursor/" + tool
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

// parseCursor reads Cursor's events: its specific events as tools of
// their own.
func parseCursor(d Dialect, data []byte) (Event, error) {
	var in cursorInput
	if err := json.Unmarshal(data, &in); err != nil {
		return d.bad(in.Event, err)
	}
	k, err := d.known(in.Event, "hook_event_name")
	if err != nil {
		return Event{Name: in.Event}, err
	}
	ev := Event{Kind: k, Name: in.Event, Session: in.Conversation, Cwd: in.Cwd, Turn: in.Generation, Prompt: in.Prompt,
		Tool: in.Tool, ToolUseID: in.ToolUseID, Source: in.Source, AgentID: in.SubagentID, AgentType: in.SubagentType,
		StopActive: in.LoopCount > 0}
	if err := noSession(ev, "conversation_id"); err != nil {
		return ev, err
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
	d.withCallID(&ev, in.Generation+":")
	return ev, nil
}

// renderCursor: permission, agent_message and user_message, updated_input
// (preToolUse only), additional_context, continue, followup_message.
func renderCursor(ev Event, a Answer) []byte {
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
