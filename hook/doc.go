// Package hook is how coding agents' hook events reach attune and its
// answers leave: `attune hook DIALECT` as one process per event, the event
// as JSON on stdin and the answer as JSON on stdout (command.go), and
// `attune hook serve claude`, the same events over HTTP (serve.go); both
// answer through package harness. It also installs and removes the hook
// entries of each agent (install.go) and checks an installed project
// (doctor.go).
//
// The threat model of `hook serve` (serve.go). Its answers decide what the
// agent may run, so it answers only the agent's own requests:
//
//   - A secret per install: 32 random bytes in .attune/hook-token beside
//     the configuration (mode 0600, folder 0700; LoadToken creates it at
//     `hook install --http` or serve start), sent by the harness's http
//     entry as the X-Attune-Token header (TokenHeader). Without it: 401.
//     Other local users cannot read it, so they cannot invent sessions or
//     change the project's owners through serve.
//   - Web pages: the Host header must name a loopback address (127.0.0.1,
//     [::1], localhost) or the server's own address, with its port (403
//     otherwise: a DNS-rebinding page's Host is its own name); an Origin,
//     when present, must be loopback (403); the body must be sent as
//     application/json (415), which a page cannot send across origins
//     without a preflight that serve does not answer.
//   - Exhaustion: headers within 5 s, a body within --timeout, idle
//     connections closed after 60 s; at most --max-conns connections
//     served, and past them a connection is answered at once from the
//     event's first 64 KiB (a tool call: deny; "not judged"), past twice
//     that closed; bodies over 16 MiB denied; a decode budget of 16 MiB of
//     bodies read and judged at once (a decoded event costs some 25 times
//     its bytes), an event without room in it within half the timeout
//     denied; at most --max-warm sessions warm (least recently used
//     first) and none idle past 30 minutes, evicted with their lock and
//     reach files.
//   - Out of scope: a process running as the same user (it can read the
//     token, the store and the configuration, and run attune itself).
package hook
