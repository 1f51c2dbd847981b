// Package hook makes attune the hook runtime of coding agents: Claude Code,
// and on the same core Codex, Gemini CLI, Copilot CLI and Cursor (codex.go,
// gemini.go, copilot.go, cursor.go say how each differs). The agent runs
// a hook as one process per event, with the event as JSON on stdin and the
// answer as JSON on stdout; `attune hook claude` is that process, and
// `attune hook serve claude` answers the same events over HTTP.
//
// The mapping (one dialect per file; claude.go is Claude Code's):
//
//   - Instance: the agent's session (session_id), id "claude/SESSION",
//     started on first sight with the bot of [harness.claude] (default
//     "main") and brought back from the store on every later event. A
//     subagent (agent_id) is a child instance "claude/SESSION/agent/ID"
//     running the bot its agent_type maps to ([harness.claude.agents]).
//   - Tools: claude/NAME for built-in tools, mcp/SERVER/TOOL for
//     mcp__SERVER__TOOL, with the effects of [harness.claude.tools] or the
//     defaults (Read/Grep/Glob/LS read; Edit/Write/MultiEdit/NotebookEdit
//     write; Bash exec; WebFetch/WebSearch network; Task/Agent spawn; any
//     other tool none).
//   - UserPromptSubmit: turn begin and round begin; a refusal blocks the
//     prompt; the notes placed go out as additional context.
//   - PreToolUse: the chain up to the core (Instance.ToolBegin); the core is
//     the agent's own execution. Refused: deny with the reason. Arguments a
//     guard rewrote: allow with the whole updatedInput. A mark named in
//     ask_marks: ask. A script error: deny naming the program's file and
//     line (fail closed), or a warning and no decision with fail_open.
//     Otherwise no decision: the agent's own permission rules apply.
//   - PostToolUse / PostToolUseFailure: the same call completed
//     (Instance.ToolEnd, matched by tool_use_id through the journal): :post
//     diagnostics go out as additional context; :post-fail runs on failures.
//   - Stop / SubagentStop: round end with host_continue false and output the
//     last assistant message. An activating note continues the loop: the
//     answer blocks the stop with the text of the notes placed into the next
//     (activated) round. Otherwise the turn ends; its loop-end notes go to
//     the user as a system message. Agents that send the text of a blocked
//     stop back as the next prompt (Gemini CLI, Copilot CLI, Cursor) do not
//     open a new turn with it: the prompt continues the activated round.
//   - SessionStart clear/compact and PreCompact: the next turn is
//     context_fresh. SessionEnd: the open turn ends, the instance stops.
//
// Choices:
//
//   - A guard's invoke() cannot wait for a core that runs after the hook
//     process has answered: it returns an outcome with status "pending"
//     (no result). A guard that returns it lets the call through; a guard
//     that refuses after invoke denies the call. :post hooks see the real
//     outcome, in the PostToolUse process.
//   - The events of one session are serialized by an exclusive file lock
//     (FILE.locks/ beside an SQLite store, else in the temporary folder),
//     held from reading the session to flushing its journal, so parallel
//     hook processes never duplicate or lose journal entries, note ids or
//     owner actions. Sessions do not wait for each other: two sessions
//     committing to one project owner at once are told stale-revision (the
//     engine's optimistic concurrency); a behavior retries the method.
//   - `hook serve` keeps instances warm between events (Options.Warm).
//     Under the session's lock it compares the length of the instance's
//     journal in the store with what the warm instance read or wrote, and
//     brings the instance back when another process (a command hook of the
//     same session) journaled since (engine.Instance.Stale).
//   - A tool event that nothing of the session can see is answered with
//     no decision without opening the store, from the instance's reach that
//     the last event left beside the session's lock, and is not journaled
//     (quick.go says when, and why that is safe).
//   - With no opinion attune answers no decision, never "allow": allowing
//     would skip the agent's own permission rules.
//   - Bad input (not JSON, an unknown event) is answered with no decision
//     and a message on stderr, but a tool call the input names and attune
//     cannot read (a PreToolUse with no session_id, a field of the wrong
//     type, or more than 16 MiB of JSON) is denied; a missing or broken
//     configuration denies tool calls (fail closed) and lets other events
//     through; the answer is always JSON with exit status 0, within
//     --timeout.
package hook
