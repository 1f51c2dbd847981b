package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Gemini is the dialect of Gemini CLI's hooks (read from Gemini CLI
// 0.61.0's own events, testdata/captured/gemini-0.61.0): BeforeAgent (the
// prompt), BeforeTool and AfterTool, AfterAgent (the final response),
// SessionStart, SessionEnd and PreCompress; answers carry decision allow
// or deny, reason, and hookSpecificOutput (additionalContext; tool_input,
// which replaces the model's arguments: a rewrite is sent whole).
//
// Gemini CLI gives a tool call no id: BeforeTool and AfterTool of one call
// are matched by the tool's name and the model's arguments. A failed tool
// is an AfterTool whose tool_response has an error.
//
// After a blocked AfterAgent, Gemini CLI submits the reason as the next
// prompt (a BeforeAgent): the turn goes on in the round the stop
// activated (Runtime.prompt). It fires PreCompress with trigger "auto"
// before every model request, whether it then compresses or not, and says
// nothing after a compression: only a /compress (trigger "manual") makes
// the next turn context_fresh. Gemini CLI shows additionalContext to the
// model with < and > written as &lt; and &gt;.
//
// Gemini CLI can ask for a confirmation, but a headless run (-p, --yolo)
// then waits for nobody without end: a call marked with an ask mark is
// denied with the reason.
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
	"PreCompress":         Compact, // trigger "manual" only: Parse
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
	if ev.Kind == Compact && in.Trigger != "manual" {
		ev.Kind = Other // before every request; nothing says it compressed
	}
	if ev.Kind == ToolPost {
		if m, ok := ev.ToolResponse.(map[string]any); ok {
			if e, ok := m["error"]; ok && e != nil && e != "" {
				ev.Kind = ToolFail
				switch x := e.(type) {
				case string:
					ev.Error = x
				case map[string]any:
					if msg, ok := x["message"].(string); ok && msg != "" {
						ev.Error = msg
						break
					}
					ev.Error = string(marshal(e))
				default:
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
	if ev.Kind == ToolPre && a.Decision == "ask" { // headless, it would hang: fail closed
		a = askDenied(a)
	}
	switch a.Decision {
	case "deny", "block":
		out["decision"] = "deny"
		out["reason"] = a.Reason
	}
	if ev.Kind == ToolPre && a.UpdatedInput != nil && a.Decision != "deny" {
		specific["tool_input"] = a.UpdatedInput // replaces the arguments
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
