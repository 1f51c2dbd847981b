package harness

import "strings"

// Caps is what one agent's answers can say beyond allow and deny. The
// runtime decides the answer in the agent's terms from them: what an agent
// cannot carry, or would ignore, becomes the stricter answer it can (a
// denied call, a blocked prompt or result), never a silent allow.
type Caps struct {
	// Ask: a PreToolUse answer can ask the agent's user (permissionDecision
	// "ask"). Without it an ask verdict, or an ask mark, denies.
	Ask bool
	// RewriteAlone: the agent applies a rewritten input that comes with no
	// decision. Without it a rewrite no guard gave a verdict asks (Ask), or
	// is denied with the rewritten call in the reason.
	RewriteAlone bool
	// RewriteAllow: the agent applies a rewritten input only with an
	// allow (Codex, Copilot CLI). A rewrite no guard gave a verdict is
	// then answered allow with it: denied, no rewrite could ever run there.
	RewriteAllow bool
	// Halt: any answer can end the agent's turn (continue: false,
	// stopReason). Without it a halt denies the tool call, or blocks the
	// prompt or the result; elsewhere it goes to the user.
	Halt bool
	// ReplaceResult: a PostToolUse answer can replace the tool's result
	// the model sees. Without it a replaced result is withheld.
	ReplaceResult bool
	// WithholdResult: a PostToolUse answer can keep the result from the
	// model (decision block). Without it a withheld result is said to the
	// model as context, the strongest answer left (see the dialect's doc).
	WithholdResult bool
}

// tighten rewrites answer a to ev into what dialect caps c can carry.
func tighten(c Caps, ev Event, a Answer) Answer {
	if a.Halt && !c.Halt {
		why := "attune: " + a.StopReason
		switch ev.Kind {
		case ToolPre:
			a.Decision, a.Reason = "deny", why
		case Prompt, Stop, SubagentStop:
			if ev.Kind == Prompt {
				a.Decision, a.Reason = "block", why
			}
		case ToolPost:
			a.Decision, a.Reason = "block", why
		}
		a.SystemMessage = joinText(a.SystemMessage, why)
		a.Halt, a.StopReason = false, ""
	}
	if ev.Kind == ToolPre && a.Decision == "ask" && !c.Ask {
		a.Decision = "deny"
		a.Reason = strings.TrimSpace(a.Reason + " (this call needs a person's confirmation, which the agent cannot ask for here: it was not run; ask the user to run it)")
	}
	if ev.Kind == ToolPre && a.Decision == "deny" {
		a.UpdatedInput = nil
	}
	if ev.Kind == ToolPost && a.HasOutput && !c.ReplaceResult {
		a.HasOutput, a.UpdatedOutput = false, nil
		a.Decision = "block"
		a.Reason = joinText(a.Reason, "attune: a guard replaced this result and the agent cannot be given the new one")
	}
	if ev.Kind == ToolPost && a.Decision == "block" && !c.WithholdResult {
		a.Decision = ""
		a.Context = joinText(a.Context, "attune withheld this tool's result: "+a.Reason+". Do not use it.")
		a.Reason = ""
	}
	return a
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}
