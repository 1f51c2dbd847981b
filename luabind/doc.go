// Package luabind owns attune's Lua states: one sandboxed *lua.LState per
// registry, the ambients that say what a piece of script may call, the one
// choke point every script-visible engine function passes through, the time
// budget every callback runs under, and the conversion of plain data between
// Go and Lua.
//
// Concepts:
//
//   - State: one Lua interpreter with the sandbox of R1.11 (base,
//     string, table and math; dofile, loadfile, binary chunks,
//     collectgarbage, module, getfenv, setfenv, newproxy, _printregs and
//     string.dump removed; print routed to the host's logger; math.random
//     seeded per state). A State is not safe for concurrent use: the engine
//     serializes access to it.
//   - Ambient: Register (a program's top level), Callback (dispatch, methods,
//     subscriptions, commands) or Reducer (pure folds). A State is always in
//     exactly one ambient while script runs.
//   - Func: a script-visible engine function declared as data (its dotted
//     name, the ambients that allow it, whether it leaves the script for host
//     work). A Library builds a set of Funcs once for every state; Open puts
//     it into a State. The dispatch wrapper is the single place that enforces
//     ambients and pauses the time budget for host work.
//   - Sharing: the standard libraries and a Library's functions are built
//     once and shared read-only by every state, behind per-state tables with
//     protected metatables; the first read of a name copies it into the
//     state. A state costs about 15 KiB and 15 µs.
//   - Budget: a callback that runs past its limit is cancelled with
//     "cancelled: time budget"; time spent outside the script (host tools,
//     nested chains, method calls) is not counted against it.
//   - Plain data: nil, boolean, number (float64), string, list ([]any) and
//     map (map[string]any). ToLua and FromLua convert exactly; an empty list
//     keeps its list-ness through a marker metatable. CopyPlain, Plain,
//     ToNumber and KindOf are the one place Go values become plain data
//     (engine, config and scenario use them).
//   - JSONDecoder: JSON straight into Lua values (owner logs), held to
//     encoding/json by FuzzDecode.
//   - RecordPool: recycled record tables for handlers (call, outcome and
//     boundary records); TestRecordPoolSeesKeys pins that it tells a
//     record a handler added keys to.
package luabind
