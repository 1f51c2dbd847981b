// Package harness is the one answer path of coding agents' hook events:
// Claude Code, and on the same core Codex, Gemini CLI, Copilot CLI and
// Cursor (codex.go, gemini.go, copilot.go, cursor.go say how each
// differs). Every event, however it arrived (a command hook's stdin, a
// POST to `hook serve`: package hook), is read by its dialect into an
// Event, taken to the engine by the Runtime (runtime.go), decided as an
// Answer the agent can carry (caps.go) and rendered by the dialect
// (Responder, respond.go).
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
//     the agent's own execution. Refused: deny with the reason. A guard's
//     (allow REASON) or (ask REASON): permissionDecision allow or ask with
//     the reason (ask wins over allow and over nothing). Arguments a guard
//     rewrote go out whole as updatedInput; with no verdict that is ask
//     (Claude Code applies a rewrite only with a decision, and allow would
//     skip its permission rules). A mark named in ask_marks: ask. A script error: deny naming the program's file and
//     line (fail closed), or a warning and no decision with fail_open.
//     Otherwise no decision: the agent's own permission rules apply.
//   - PostToolUse / PostToolUseFailure: the same call completed
//     (Instance.ToolEnd, matched by tool_use_id through the journal): the
//     result guards judge tool_response first; a replaced result goes out as
//     updatedToolOutput in the tool's own shape (Bash: {stdout, stderr,
//     interrupted, isImage}; a text becomes stdout) or updatedMCPToolOutput
//     for mcp__ tools; a withheld one (refuse, or a result guard that threw)
//     as decision block with the reason, and its text replaces the output
//     where the shape is known. :post diagnostics go out as additional
//     context; :post-fail runs on failures.
//   - SessionStart: hook/session "start" with source (startup, resume,
//     clear, compact); its notes are additionalContext. SubagentStart: the
//     child instance's session start (source "subagent") and its first
//     turn. SessionEnd: the open turn ends, then hook/session "end" with
//     source = Claude Code's reason.
//   - Records: every call and boundary record carries harness = {name =
//     "claude", event = {...}}, the event's JSON fields except tool_input
//     and tool_response (hook_event_name, session_id, cwd, transcript_path,
//     permission_mode, model, source, reason, agent_id, agent_type,
//     prompt, stop_hook_active, last_assistant_message, ...). Codex's carry
//     its fields the same way (turn_id, model); another dialect's, the
//     fields attune read (session_id, cwd, tool_name, prompt, source...).
//   - Reads: admit/read is answered by attune from [harness.reads] (package
//     hostreads), git and exec in the event's cwd.
//   - Notes: a note emitted mid-round goes out with the next answer that
//     carries additionalContext (PreToolUse, PostToolUse, the next
//     prompt), once; a user note ((notify TEXT "user")) is systemMessage,
//     from any event.
//   - A prompt /NAME TEXT naming a pack command runs it in the prompt's
//     turn (Claude Code passes the prompt to UserPromptSubmit as typed).
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
//     (FILE.locks/ beside an SQLite store, else in the user's own runtime
//     folder, $XDG_RUNTIME_DIR/attune or the user cache folder; 0700
//     folders, 0600 files, a folder open to others refused: lock.go),
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
//   - A command hook hands its event to a warm server when one runs for
//     its configuration (`attune hook serve --socket`, started by the
//     first event with [harness] warm = true), on this user's Unix socket,
//     and answers in-process whenever that server is absent, stale, not
//     the user's own, for other files, or not whole in time (handoff.go
//     says when, and how ownership is checked).
//   - A tool event that nothing of the session can see is answered with
//     no decision without opening the store, from the instance's reach that
//     the last event left beside the session's lock, and is not journaled
//     (quick.go says when, and why that is safe).
//   - With no opinion attune answers no decision, never "allow": allowing
//     would skip the agent's own permission rules.
//   - A (halt REASON) in any guard or hook during an event: continue false
//     with stopReason REASON, beside the event's own answer.
//   - What an agent cannot say (Caps, caps.go) becomes its stricter
//     answer: an ask or a halt a tool call is denied, a halt at a prompt
//     blocks it, a result that cannot be replaced is withheld.
//   - Fail closed. A tool call (PreToolUse, BeforeTool, preToolUse,
//     beforeShellExecution, ...) that attune cannot read, judge or answer
//     in time is denied with the reason: more than 16 MiB, not valid
//     UTF-8, not one JSON value (a byte order mark, truncated, trailing
//     junk), nested past Go's decoder (10,000 levels), a field of the wrong
//     type, no session, an event not whole within --timeout (which runs
//     from the start, reading stdin included), a missing or broken
//     configuration, a store or lock error, a crash. The name is read from
//     the start of the input by a scanner with no depth limit (read.go);
//     input that names no event the dialect knows gets the strictest
//     answer, a deny of the dialect's PreToolUse. fail_open lets a call
//     through on a script's error only, never on these. An event of another
//     kind that cannot be read gets no decision and a message on stderr; a
//     well-formed unknown event too. The answer is always JSON with exit
//     status 0, within --timeout.
//   - What fails open is the harness's: when the attune process cannot
//     run at all (the binary moved or deleted, killed by the harness's own
//     timeout), the harness decides; hook install writes entries that
//     block on failure where the harness can, and `attune hook doctor`
//     checks an installed project (hook/doctor.go).
package harness
