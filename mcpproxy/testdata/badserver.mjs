// An MCP server over stdio that misbehaves on purpose, written line by line
// (no SDK), for the proxy's bad-input tests. It answers initialize and
// tools/list; a tools/call's tool name picks the misbehaviour:
//   truncated  an answer with its id, cut off mid-JSON
//   notobject  a result that is a string, not an object
//   strayid    first an answer to an id the proxy never sent, then the answer
//   silent     no answer ever
//   notjson    a line of text without an id, then nothing
//   echo       a good answer
import { createInterface } from "node:readline";

const out = (s) => process.stdout.write(s + "\n");
const answer = (id, result) => out(JSON.stringify({ jsonrpc: "2.0", id, result }));
const tools = ["truncated", "notobject", "strayid", "silent", "notjson", "echo"];
for await (const line of createInterface({ input: process.stdin })) {
  const m = JSON.parse(line);
  if (m.id === undefined) continue; // notifications
  switch (m.method) {
    case "initialize":
      answer(m.id, { protocolVersion: m.params.protocolVersion, capabilities: { tools: {}, prompts: {} }, serverInfo: { name: "bad", version: "1" } });
      break;
    case "tools/list":
      answer(m.id, { tools: tools.map((name) => ({ name, inputSchema: { type: "object" } })) });
      break;
    case "prompts/get":
      break; // silent
    case "tools/call":
      switch (m.params.name) {
        case "truncated":
          out(`{"jsonrpc":"2.0","id":${m.id},"result":{"content":[{"type":"text","text":"cut`);
          break;
        case "notobject":
          answer(m.id, "a string");
          break;
        case "strayid":
          answer(987654, { content: [] });
          answer(m.id, { content: [{ type: "text", text: "after the stray" }] });
          break;
        case "silent":
          break;
        case "notjson":
          out("Server started, listening on stdio");
          break;
        default:
          answer(m.id, { content: [{ type: "text", text: "echo " + JSON.stringify(m.params.arguments) }] });
      }
      break;
    default:
      out(JSON.stringify({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } }));
  }
}
