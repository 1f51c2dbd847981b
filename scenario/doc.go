// Package scenario reads and runs scenario files (docs/scenarios.md): TOML files
// that drive the engine the way a host would, step by step, against a fake
// host whose tools, reads and floor they declare, and check what each step
// returns.
//
// The concepts:
//
//   - A [Scenario] is one loaded file: its name, the spec rules it
//     exercises, the inline configuration (decoded with config.Decode), the
//     programs written into a scratch pack, the fake [Host] and the [Step]s.
//     [Load] rejects unknown keys anywhere (top level, the keys of each op,
//     expectations, host tables) with a [*LoadError] naming the file, the
//     line and the key path.
//   - [Run] builds one engine for the scenario (the scratch pack searched
//     first, then config.engine.packs, then the engine's own pack), runs the
//     steps in order and checks each step's expectations. It stops at the
//     first step that fails and returns a [Result].
//   - The fake host counts its read calls and its tools' core calls per step
//     and remembers what the floor saw last in the step; expectations
//     core_calls, host_reads and floor read those.
//   - [Match] is the matcher behind result and state: maps as a subset,
//     lists element by element and of the same length, scalars equal,
//     numbers by value, and an empty map matches an empty list.
//
// Choices the format leaves open, written down here:
//
//   - A step's instance defaults to the instance of the nearest start step
//     above it ("main" when there is none); start's instance defaults to
//     "main" and its bot to the only bot of the configuration.
//   - engine.store defaults to "memory:" in a scenario.
//   - A tool call's outcome (status refused or failed) is the step's status.
//     Inside a turn step, the tools' outcomes do not change the turn's
//     status; they are the turn's result.tools, in call order.
//   - Results: tool and method give the call's result; state the owner's
//     state; start, restart and spawn {instance, session, bot, programs};
//     turn-end {addenda, notes}; turn {tools, notes, addenda}.
//   - turn-end takes an optional addenda list (the host's own addenda,
//     R3.8); turn and turn-begin an optional context_fresh.
//   - Host answers call by call (for recorded sessions, docs/testing.md):
//     [host.tools."P"] answers = [{result = X}, {fail = "m"}, {}] and
//     [host.read_answers] "KEY" = [{value = X}, ...] answer in order, then
//     fall back to result/echo/fail and [host.reads];
//     [owners."NAME@project"] entries = [...] seeds a shared owner's log
//     before the first step.
//   - [Record] writes the scenario of a stored session; [RunSuite] runs
//     files with filters, -v traces, JUnit and JSON reports, progress and
//     behavior coverage ([Coverage]).
//   - A replay step fails when the replay diverged from the journal (its
//     error lists each divergence), unless it gives expect.diverged: a list
//     of texts, each contained in the divergence at the same position, same
//     count. A replay that reproduced the session has no divergences.
//   - fails_with (a top-level list of texts) marks a scenario that must
//     fail: it passes when it fails with a report containing every text,
//     and fails when it passes. It proves the matcher catches mismatches.
//
// Scenario values are immutable once loaded and safe to run concurrently:
// each Run has its own engine, store, scratch pack and fake host.
package scenario
