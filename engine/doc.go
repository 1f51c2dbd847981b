// Package engine is the facade hosts import: an Engine built from a
// configuration, instances, turns and rounds, tool calls, method calls,
// spawn, re-attunement, replay and hydration (R9.1).
//
// Concepts:
//
//   - Engine: the configuration, the store, the packs, the host's tools, the
//     floor, and the live instances. Safe for concurrent use.
//   - Instance: one running agent (foreground, bot, oneshot or child) with an
//     id, a bot, a session and a pin. Its methods are safe for concurrent
//     use; the boundaries of one instance are serialized.
//   - registry: what one program registered for one instance and
//     configuration, with its own Lua state (never shared between
//     instances). A regSet holds one pin's registries in pin order and what
//     the pin resolves once (the tool table, the boundary guards and hooks).
//     Sets are reference-counted: a running turn or call keeps the set it
//     started with; the last release closes the Lua states. A registry's
//     state runs one thread at a time (statelock.go: the lock, its
//     invariant and the wait-for-graph borrowing).
//   - frame: the per-callback state (instance, registration, call id,
//     authority, lineage through its parent frames) that engine functions
//     find on their registry's frame stack.
//   - Tool chain (toolchain.go): ceiling, fast path, guards with a
//     single-use invoke, marks, floor, :pre, core, :post, :post-fail, retry,
//     re-entry. The fast path (no guard or hook matches) runs no script and
//     allocates nothing.
//   - Boundaries (boundary.go): guards when a turn or round opens, hooks in
//     parallel across registries, notes placed, consumed and expired.
//   - Owners (owners.go: reducers, fold, state, reset; ownercache.go: log
//     names, ABIs, snapshots, rollback; methods.go): reducers folded over
//     append-only logs with snapshots, methods admitted in the order of R5.2.
//   - Pack commands (command.go) and child instances (spawn.go).
//   - Journal (sessionstate.go, replay.go, package session): every boundary,
//     host delivery and host call of a session, for replay and hydration;
//     recording.go reads a stored session back (`attune record`).
//
// Names of what is kept or handed over: a journal entry (session.Entry,
// sessionState.journal) is one step of a session's journal; the boundary
// record, call record, outcome record and failure record are the tables
// handlers receive (docs/forms.md, Records; boundaryRecord, chain.callRecord,
// outcomeRecord, failureTable); a method's call record (store.CallRecord)
// is what a query or command left under its call id; the instance record
// (instanceRecord) is what the store keeps of an instance; a Recording is
// a stored session read back.
//
// Errors a host may act on are typed: every error the facade returns, and
// the Err of every refused or failed Outcome, MethodOutcome,
// BoundaryResult and CommandResult, is an *Error with a Code
// (CodeStaleRevision, CodeCallID, CodeGrant, CodeSchema, CodePinMissing,
// CodeCancelled, CodeBudget, CodeHostTimeout, CodeNotPlain, CodeNotRunning,
// CodeNoOpenTurn, CodeUnknownBot, ... and the refused_by words), the
// Status of the outcome it stands behind (one Status type for every
// outcome), the program, position and call stack (Frames) of a script
// failure, and the cause; all of them are fields, none is read back from
// text. Its text is the message the result carries (Error or Reason),
// unchanged. Check a kind with errors.Is against a sentinel
// (errors.Is(err, engine.ErrNotRunning), errors.Is(out.Err,
// engine.ErrRefused)) or with CodeOf(err) and StatusOf(err);
// errors.As(err, &schemaErr) finds a *SchemaError.
//
// Choices where the specification leaves room (see also README.md):
//
//   - Tool calls made while no turn is open are not journaled: replay
//     re-runs turns. Inside a turn every call is journaled.
//   - A guard that called invoke and then returns refuse withholds the
//     outcome (status refused, by guard): the core ran once. A guard that
//     called invoke and returns anything else returns invoke's outcome: a
//     guard cannot forge a result. A retry after invoke is ignored (the core
//     must not run twice).
//   - EndTurn with a round still open ends that round first (round-end hooks
//     run with host_continue false).
//   - A refused boundary does not count: the turn or round number is not
//     used up.
//   - The default floor (config [floor] refuse_marks) refuses only marked
//     calls; a call with no marks skips it. A host floor always runs.
//   - Boundary call ids are deterministic (session, rollback generation,
//     turn, round, phase, hook index), so replay and call-id replay of
//     methods see the same ids.
package engine
