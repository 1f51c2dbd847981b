package hook

import "encoding/json"

// Kind is what an agent's hook event means to attune, whatever the
// dialect calls it.
type Kind int

// Event kinds.
const (
	Other        Kind = iota // an event attune does not act on (Notification, ...): answered with no decision
	SessionStart             // start or bring back the session's instance
	Prompt                   // the user's prompt: turn begin and round begin
	ToolPre                  // before a tool runs: the chain up to the core
	ToolPost                 // after a tool ran: :post
	ToolFail                 // after a tool failed: :post-fail
	Stop                     // the agent is about to stop: round end
	SubagentStop             // a subagent is about to stop: its round end
	SessionEnd               // the session ends: end the turn, stop the instance
	Compact                  // the context is about to be compacted: the next turn is context_fresh
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
}

// Answer is attune's decision about one event; a dialect renders it.
type Answer struct {
	// Decision: "" (no opinion), "allow", "deny" or "ask" for ToolPre;
	// "block" for Prompt (the prompt is refused) and Stop (the agent
	// continues with Reason).
	Decision string
	Reason   string
	// UpdatedInput is the whole rewritten tool input (ToolPre).
	UpdatedInput map[string]any
	// Context is text for the model (additional context).
	Context string
	// SystemMessage is text for the user.
	SystemMessage string
}

// Dialect reads one agent's hook events and writes its answers.
type Dialect interface {
	// Name is the dialect's name: the [harness.NAME] table and the
	// instance id prefix.
	Name() string
	// Parse reads one event from the agent's JSON.
	Parse(data []byte) (Event, error)
	// Render writes the answer to ev in the agent's JSON.
	Render(ev Event, a Answer) []byte
	// ToolPath is attune's path of the agent's tool name.
	ToolPath(tool string) string
	// Effects are a tool's effects when the config does not name them.
	Effects(tool string) []string
}

// Dialects returns the dialect of an agent by name.
func Dialects(name string) (Dialect, bool) {
	switch name {
	case "claude":
		return Claude{}, true
	case "codex":
		return Codex{}, true
	case "copilot":
		return Copilot{}, true
	case "cursor":
		return Cursor{}, true
	case "gemini":
		return Gemini{}, true
	}
	return nil, false
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("{}")
	}
	return b
}
