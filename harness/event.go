package harness

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Kind is what an agent's hook event means to attune, whatever the
// dialect calls it.
type Kind int

// Event kinds.
const (
	Other         Kind = iota // an event attune does not act on (Notification, ...): answered with no decision
	SessionStart              // start or bring back the session's instance
	Prompt                    // the user's prompt: turn begin and round begin
	ToolPre                   // before a tool runs: the chain up to the core
	ToolPost                  // after a tool ran: :post
	ToolFail                  // after a tool failed: :post-fail
	Stop                      // the agent is about to stop: round end
	SubagentStop              // a subagent is about to stop: its round end
	SessionEnd                // the session ends: end the turn, stop the instance
	Compact                   // the context is about to be compacted: the next turn is context_fresh
	SubagentStart             // a subagent starts: its child instance opens (session start, source "subagent")
)

// Event is one hook event, read by a dialect.
type Event struct {
	Kind Kind
	// Name is the event's name as the agent spells it.
	Name    string
	Session string
	Cwd     string
	// Turn is the agent's own turn id, when it has one (Codex).
	Turn string

	Tool      string
	ToolInput map[string]any
	ToolUseID string
	// ToolResponse is the tool's result (ToolPost); Error the failure (ToolFail).
	ToolResponse any
	Error        string

	Prompt      string
	StopActive  bool
	LastMessage *string
	AgentID     string
	AgentType   string
	// Source is why a session started: startup, resume, clear or compact.
	Source string
	// Reason is why a session ended (SessionEnd: clear, logout,
	// prompt_input_exit, other).
	Reason string
	// Fields are the event's own fields as the agent sent them, except
	// the tool's input and response (records' harness.event; nil: the
	// runtime names the fields it read).
	Fields map[string]any
}

// EventFields are the fields of an event's JSON except the tool's input
// and response (which records carry as args and the outcome).
func EventFields(data []byte) map[string]any {
	var raw map[string]json.RawMessage // the tool's input and response are skipped, not decoded
	if json.Unmarshal(data, &raw) != nil || raw == nil {
		return nil
	}
	m := make(map[string]any, len(raw))
	for k, v := range raw {
		switch k {
		case "tool_input", "tool_response", "tool_output", "result_json":
			continue
		}
		if str, ok := plainString(v); ok {
			m[k] = str
			continue
		}
		var x any
		if json.Unmarshal(v, &x) == nil {
			m[k] = x
		}
	}
	return m
}

// plainString is the string a JSON value that the decoder checked is,
// when it is one with no escape and valid UTF-8 (ids, names, paths: most
// of an event's fields), whose text is then its value: decoding it again
// cost more than the rest of reading the event.
func plainString(v json.RawMessage) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// fields is what records carry as harness.event for ev.
func (ev Event) fields() map[string]any {
	if ev.Fields != nil {
		return ev.Fields
	}
	m := map[string]any{"hook_event_name": ev.Name}
	for k, v := range map[string]string{"session_id": ev.Session, "cwd": ev.Cwd, "turn_id": ev.Turn, "tool_name": ev.Tool,
		"tool_use_id": ev.ToolUseID, "prompt": ev.Prompt, "agent_id": ev.AgentID, "agent_type": ev.AgentType, "source": ev.Source, "reason": ev.Reason} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// Answer is attune's decision about one event; a dialect renders it.
type Answer struct {
	// Decision: "" (no opinion), "allow", "deny" or "ask" for ToolPre;
	// "block" for Prompt (the prompt is refused), Stop (the agent
	// continues with Reason) and ToolPost (the result is withheld).
	Decision string
	Reason   string
	// UpdatedInput is the whole rewritten tool input (ToolPre).
	UpdatedInput map[string]any
	// Context is text for the model (additional context).
	Context string
	// SystemMessage is text for the user.
	SystemMessage string
	// Halt ends the agent's turn (a behavior's halt): Claude Code's
	// continue false, with StopReason.
	Halt       bool
	StopReason string
	// UpdatedOutput replaces the tool's result the model sees (ToolPost,
	// when HasOutput): a result guard's replace. A withheld result is
	// Decision "block" with Reason.
	UpdatedOutput any
	HasOutput     bool
}
