package harness

import (
	"encoding/json"
	"fmt"
)

// Copilot is the dialect of GitHub Copilot CLI's hooks (read from Copilot
// CLI 1.0.102's own events, testdata/captured/copilot-1.0.102). Its hook
// files (.github/hooks/*.json, ~/.copilot/hooks) name the events in
// camelCase (sessionStart, userPromptSubmitted, preToolUse, postToolUse,
// postToolUseFailure, agentStop, subagentStop, sessionEnd, preCompact); the
// event's input then carries no event name (sessionId, toolName, toolArgs,
// toolResult, ...), so the dialect tells the event by its fields. Events
// named in Claude Code's spelling (PreToolUse, ...) get snake_case input
// with hook_event_name and Claude Code's tool names (Bash, Read); the
// dialect reads those too, and its tool paths are Copilot's own names
// either way: copilot/bash, copilot/view, ...
//
// Neither form gives a tool call an id: a call's pre and post events are
// matched by the tool and its arguments. Answers are read top level:
// permissionDecision (allow, deny, ask), permissionDecisionReason,
// modifiedArgs (the whole arguments), additionalContext; decision block
// with a reason refuses a prompt, and at agentStop sends the reason as the
// next user message, which Copilot then submits as a prompt of its own (the
// same turn continues: Runtime.prompt). It asks its user (a headless run
// denies an ask itself); modifiedArgs come with an allow.
func Copilot() Dialect {
	return Dialect{name: "copilot", kinds: []map[string]Kind{copilotKinds, claudeKinds}, pre: "preToolUse",
		caps:  Caps{Ask: true, RewriteAllow: true},
		tools: "copilot", mcp: true, parse: parseCopilot, render: renderCopilot, callID: "copilot",
		effects: map[string][]string{
			"exec":    {"bash", "write_bash", "read_bash", "stop_bash"},
			"read":    {"view", "glob", "grep", "rg"},
			"write":   {"edit", "create", "str_replace_editor"},
			"network": {"web_fetch"},
			"spawn":   {"task"}}}
}

var copilotKinds = map[string]Kind{
	"sessionStart":        SessionStart,
	"userPromptSubmitted": Prompt,
	"preToolUse":          ToolPre,
	"postToolUse":         ToolPost,
	"postToolUseFailure":  ToolFail,
	"agentStop":           Stop,
	"subagentStop":        SubagentStop,
	"sessionEnd":          SessionEnd,
	"preCompact":          Compact,
	"subagentStart":       Other,
	"errorOccurred":       Other,
	"notification":        Other,
	"permissionRequest":   Other,
	// of Claude Code's spelling (claudeKinds), the one it does not act on
	"SubagentStart": Other,
}

// copilotTools are Copilot's own names of the tools its snake_case events
// call by Claude Code's names.
var copilotTools = map[string]string{"Bash": "bash", "Read": "view", "Edit": "edit", "Write": "create", "Glob": "glob", "Grep": "grep", "Task": "task"}

// copilotInput is the union of both input forms.
type copilotInput struct {
	Event          string          `json:"hook_event_name"`
	SessionID      string          `json:"sessionId"`
	Session        string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"toolName"`
	Tool           string          `json:"tool_name"`
	ToolArgs       json.RawMessage `json:"toolArgs"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResult     any             `json:"toolResult"`
	ToolResultS    any             `json:"tool_result"`
	Error          any             `json:"error"`
	ErrorContext   string          `json:"errorContext"`
	Prompt         *string         `json:"prompt"`
	InitialPrompt  *string         `json:"initialPrompt"`
	InitialPromptS *string         `json:"initial_prompt"`
	Source         string          `json:"source"`
	Reason         *string         `json:"reason"`
	StopReason     *string         `json:"stopReason"`
	StopReasonS    *string         `json:"stop_reason"`
	StopHookActive bool            `json:"stop_hook_active"`
	StopActiveC    bool            `json:"stopHookActive"`
	AgentName      *string         `json:"agentName"`
	AgentID        string          `json:"agentId"`
	AgentType      string          `json:"agentType"`
	Response       *string         `json:"response"`
	Trigger        *string         `json:"trigger"`
}

// name tells a camelCase event by its fields.
func (in *copilotInput) name() string {
	switch {
	case in.ToolName != "" && in.ToolResult != nil:
		return "postToolUse"
	case in.ToolName != "" && in.Error != nil:
		return "postToolUseFailure"
	case in.ToolName != "":
		return "preToolUse"
	case in.ErrorContext != "":
		return "errorOccurred"
	case in.AgentName != nil && in.StopReason != nil:
		return "subagentStop"
	case in.AgentName != nil:
		return "subagentStart"
	case in.StopReason != nil || in.StopActiveC:
		return "agentStop"
	case in.Prompt != nil:
		return "userPromptSubmitted"
	case in.InitialPrompt != nil || in.Source != "":
		return "sessionStart"
	case in.Reason != nil:
		return "sessionEnd"
	case in.Trigger != nil:
		return "preCompact"
	}
	return ""
}

// parseCopilot reads either form: the event told by its fields when it
// carries no name.
func parseCopilot(d Dialect, data []byte) (Event, error) {
	var in copilotInput
	if err := json.Unmarshal(data, &in); err != nil {
		return d.bad(in.Event, err)
	}
	name := in.Event
	if name == "" {
		name = in.name()
	}
	k, err := d.known(name, "hook_event_name, and no field tells which event it is")
	if err != nil {
		return Event{Name: name}, err
	}
	first := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	ev := Event{Kind: k, Name: name, Session: first(in.SessionID, in.Session), Cwd: in.Cwd,
		Tool: first(in.ToolName, in.Tool), StopActive: in.StopHookActive || in.StopActiveC,
		AgentID: in.AgentID, AgentType: in.AgentType, LastMessage: in.Response}
	if t, ok := copilotTools[ev.Tool]; ok && in.ToolName == "" {
		ev.Tool = t
	}
	if in.Prompt != nil {
		ev.Prompt = *in.Prompt
	}
	switch in.Source {
	case "new", "startup":
		ev.Source = "startup"
	default:
		ev.Source = in.Source
	}
	if ev.Kind == SubagentStop && ev.AgentID == "" && in.AgentName != nil {
		ev.AgentID = *in.AgentName
	}
	if ev.Kind == SubagentStop && ev.AgentType == "" && in.AgentName != nil {
		ev.AgentType = *in.AgentName
	}
	args := in.ToolArgs
	if len(args) == 0 {
		args = in.ToolInput
	}
	if len(args) > 0 && string(args) != "null" {
		var s string
		if json.Unmarshal(args, &s) == nil { // toolArgs as JSON text
			args = json.RawMessage(s)
		}
		if err := json.Unmarshal(args, &ev.ToolInput); err != nil {
			return ev, fmt.Errorf("%w: toolArgs: %v", ErrBadEvent, err)
		}
	}
	ev.ToolResponse = in.ToolResult
	if ev.ToolResponse == nil {
		ev.ToolResponse = in.ToolResultS
	}
	ev.Error = toolError(in.Error, ev.Kind)
	if err := noSession(ev, "sessionId"); err != nil {
		return ev, err
	}
	d.withCallID(&ev, "")
	return ev, nil
}

// renderCopilot: permissionDecision, modifiedArgs and additionalContext
// top level; decision block refuses a prompt or a stop.
func renderCopilot(ev Event, a Answer) []byte {
	out := map[string]any{}
	switch ev.Kind {
	case ToolPre:
		putPermission(out, a)
		if a.UpdatedInput != nil && a.Decision != "deny" {
			out["modifiedArgs"] = a.UpdatedInput
		}
	case Prompt, Stop, SubagentStop:
		if a.Decision == "block" {
			out["decision"] = "block"
			out["reason"] = a.Reason
		}
	}
	if a.Context != "" {
		switch ev.Kind {
		case Prompt, ToolPre, ToolPost, ToolFail, SessionStart:
			out["additionalContext"] = a.Context
		}
	}
	if a.SystemMessage != "" {
		out["systemMessage"] = a.SystemMessage
	}
	return marshal(out)
}
