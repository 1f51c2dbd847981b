package harness

import "encoding/json"

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
// denied with the reason (its Caps have no Ask). A rewrite is applied
// alone, with no decision.
func Gemini() Dialect {
	return Dialect{name: "gemini", kinds: []map[string]Kind{geminiKinds}, pre: "BeforeTool",
		caps:  Caps{RewriteAlone: true},
		tools: "gemini", mcp: true, parse: parseGemini, render: renderGemini, callID: "gemini",
		effects: map[string][]string{
			"read":    {"read_file", "read_many_files", "glob", "search_file_content", "grep_search", "list_directory", "ls"},
			"write":   {"write_file", "replace", "edit"},
			"exec":    {"run_shell_command"},
			"network": {"web_fetch", "google_web_search"}}}
}

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

// parseGemini reads Claude Code's fields, prompt_response as the last
// message; a tool_response with an error is a failure.
func parseGemini(d Dialect, data []byte) (Event, error) {
	var in geminiInput
	if err := json.Unmarshal(data, &in); err != nil {
		return d.bad(in.Event, err)
	}
	in.LastMessage = in.PromptResponse
	ev, err := in.event(d)
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
				ev.Error = toolError(e, ToolFail)
				if x, ok := e.(map[string]any); ok { // {message, ...}: its message
					if msg, ok := x["message"].(string); ok && msg != "" {
						ev.Error = msg
					}
				}
			}
		}
	}
	d.withCallID(&ev, "")
	return ev, nil
}

// renderGemini: decision deny with the reason, hookSpecificOutput
// (additionalContext; tool_input, the rewritten arguments whole).
func renderGemini(ev Event, a Answer) []byte {
	out := map[string]any{}
	if a.SystemMessage != "" {
		out["systemMessage"] = a.SystemMessage
	}
	specific := map[string]any{}
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
