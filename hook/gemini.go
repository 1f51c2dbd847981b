package hook

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Gemini is the dialect of Gemini CLI's hooks: BeforeAgent (the prompt),
// BeforeTool and AfterTool, AfterAgent (the final response), SessionStart,
// SessionEnd and PreCompress; answers carry decision allow or deny, reason,
// and hookSpecificOutput (additionalContext; tool_input, which Gemini CLI
// merges over the model's arguments; a rewrite that drops an argument
// cannot be said that way, so it is denied with the rewritten call in the
// reason).
//
// Gemini CLI gives a tool call no id: BeforeTool and AfterTool of one call
// are matched by the tool's name and the model's arguments. It has no
// "ask": a call marked with an ask mark is denied with the reason.
type Gemini struct{}

// Name implements Dialect.
func (Gemini) Name() string { return "gemini" }

var geminiKinds = map[string]Kind{
	"SessionStart":        SessionStart,
	"BeforeAgent":         Prompt,
	"BeforeTool":          ToolPre,
	"AfterTool":           ToolPost,
	"AfterAgent":          Stop,
	"SessionEnd":          SessionEnd,
	"PreCompress":         Compact,
	"BeforeModel":         Other,
	"AfterModel":          Other,
	"BeforeToolSelection": Other,
	"Notification":        Other,
}

type geminiInput struct {
	claudeInput
	PromptResponse *string `json:"prompt_response"`
}

// Parse implements Dialect.
func (Gemini) Parse(data []byte) (Event, error) {
	var in geminiInput
	if err := json.Unmarshal(data, &in); err != nil {
		return Event{Kind: geminiKinds[in.Event], Name: in.Event}, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	in.LastMessage = in.PromptResponse
	ev, err := in.event(geminiKinds)
	if err != nil {
		return ev, err
	}
	if ev.Kind == ToolPost {
		if m, ok := ev.ToolResponse.(map[string]any); ok {
			if e, ok := m["error"]; ok && e != nil && e != "" {
				ev.Kind = ToolFail
				if s, ok := e.(string); ok {
					ev.Error = s
				} else {
					ev.Error = string(marshal(e))
				}
			}
		}
	}
	if ev.Kind == ToolPre || ev.Kind == ToolPost || ev.Kind == ToolFail {
		ev.ToolUseID = "gemini:" + ev.Tool + ":" + string(marshal(ev.ToolInput))
	}
	return ev, nil
}

// Render implements Dialect.
func (Gemini) Render(ev Event, a Answer) []byte {
	out := map[string]any{}
	if a.SystemMessage != "" {
		out["systemMessage"] = a.SystemMessage
	}
	specific := map[string]any{}
	if ev.Kind == ToolPre && a.UpdatedInput != nil && a.Decision != "deny" && a.Decision != "block" {
		for k := range ev.ToolInput {
			if _, kept := a.UpdatedInput[k]; !kept {
				// Gemini CLI merges tool_input over the model's arguments: a
				// key a guard removed would stay. Refuse, naming the call.
				a.Decision, a.Reason = "deny", "attune rewrote this call to "+string(marshal(a.UpdatedInput))+"; run that instead"
				a.UpdatedInput = nil
				break
			}
		}
	}
	switch a.Decision {
	case "deny", "block":
		out["decision"] = "deny"
		out["reason"] = a.Reason
	case "ask": // Gemini CLI cannot ask: fail closed
		out["decision"] = "deny"
		out["reason"] = a.Reason + " (this call needs a person's confirmation)"
	}
	if ev.Kind == ToolPre && a.UpdatedInput != nil && a.Decision != "ask" {
		specific["tool_input"] = a.UpdatedInput
	}
	if a.Context != "" && (ev.Kind == Prompt || ev.Kind == ToolPost || ev.Kind == ToolFail || ev.Kind == SessionStart) {
		specific["additionalContext"] = a.Context
	}
	if len(specific) > 0 {
		specific["hookEventName"] = ev.Name
		out["hookSpecificOutput"] = specific
	}
	return marshal(out)
}

// ToolPath implements Dialect: gemini/NAME, or mcp/SERVER/TOOL.
func (Gemini) ToolPath(tool string) string {
	if p := claudeToolPath(tool); strings.HasPrefix(p, "mcp/") {
		return p
	}
	return "gemini/" + tool
}

// Effects implements Dialect: Gemini CLI's built-in tools.
func (Gemini) Effects(tool string) []string {
	switch tool {
	case "read_file", "read_many_files", "glob", "search_file_content", "grep_search", "list_directory", "ls":
		return []string{"read"}
	case "write_file", "replace", "edit":
		return []string{"write"}
	case "run_shell_command":
		return []string{"exec"}
	case "web_fetch", "google_web_search":
		return []string{"network"}
	}
	return nil
}
