// Package mcpproxy is `attune mcp`: an MCP server over stdio that runs
// upstream MCP servers over stdio and relays them, with every tools/call
// going through the bot's tool chain at mcp/UPSTREAM/TOOL, whose core is
// the upstream's tools/call. docs/mcp.md describes what the client sees.
//
// Choices:
//
//   - The relay works on JSON-RPC messages (the official Go SDK's jsonrpc
//     codec) rather than through the SDK's mcp.Server and mcp.Client, which
//     would drop methods and capabilities the SDK has no typed API for.
//     Lines are framed here, not by the SDK's stdio connection, so that one
//     bad line fails alone instead of ending the stream.
//   - One instance per connection, with one turn open for the
//     connection's life; a round ends after a tools/call and the next
//     begins, so round hooks run per call and the notes placed into the new
//     round are appended to the call's result. With no round guard or hook
//     and no note waiting, the round goes on (two journal flushes fewer).
//   - A result is relayed as the upstream sent it (bytes unchanged) unless
//     diagnostics or notes are appended. Post hooks see it as plain data.
//   - An upstream's isError result is a failed call for the chain (its text
//     is the error; :post-fail hooks run) and reaches the client as the
//     upstream sent it.
//   - With several upstreams, list methods are merged into one page, and a
//     request naming a resource, prompt or template goes to the upstream
//     that lists it (the lists are read again when none has yet); an item
//     two upstreams list goes to the first.
//   - An upstream that exits is not restarted: its calls fail at once with
//     the reason, and the client may go on with the other tools.
package mcpproxy
