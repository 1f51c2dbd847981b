// A small MCP server built on the official TypeScript SDK's Server class
// (@modelcontextprotocol/sdk), for the tests of several upstreams: every
// answer names the server, so a test can tell which upstream answered.
//
//   node upstream.mjs PEERS_DIR NAME
//
// prompts/list: NAME-prompt (argument word); resources/templates/list:
// NAME://item/{id}; completion/complete answers "NAME:REF:VALUE"; the tool
// log sends one logging message per level (logger NAME; the SDK drops those
// below the level logging/setLevel set), then answers "NAME logged".
import { pathToFileURL } from "node:url";
import path from "node:path";

const [peers, name] = process.argv.slice(2);
const sdk = path.join(peers, "node_modules/@modelcontextprotocol/sdk/dist/esm");
const { Server } = await import(pathToFileURL(path.join(sdk, "server/index.js")).href);
const { StdioServerTransport } = await import(pathToFileURL(path.join(sdk, "server/stdio.js")).href);
const types = await import(pathToFileURL(path.join(sdk, "types.js")).href);

const server = new Server(
  { name: "upstream-" + name, version: "1.0.0" },
  { capabilities: { prompts: {}, resources: {}, completions: {}, logging: {}, tools: {} } },
);
server.setRequestHandler(types.ListPromptsRequestSchema, async () => ({
  prompts: [{ name: name + "-prompt", arguments: [{ name: "word", required: true }] }],
}));
server.setRequestHandler(types.GetPromptRequestSchema, async (req) => ({
  messages: [{ role: "user", content: { type: "text", text: name + " says " + (req.params.arguments?.word ?? "") } }],
}));
server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({ resources: [] }));
server.setRequestHandler(types.ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: [{ uriTemplate: name + "://item/{id}", name: name + "-items" }],
}));
server.setRequestHandler(types.CompleteRequestSchema, async (req) => {
  const ref = req.params.ref.name ?? req.params.ref.uri;
  return { completion: { values: [name + ":" + ref + ":" + req.params.argument.value], total: 1, hasMore: false } };
});
server.setRequestHandler(types.ListToolsRequestSchema, async () => ({
  tools: [{ name: "log", inputSchema: { type: "object" } }],
}));
server.setRequestHandler(types.CallToolRequestSchema, async () => {
  for (const level of ["debug", "info", "warning", "error"]) {
    await server.sendLoggingMessage({ level, logger: name, data: name + " " + level });
  }
  return { content: [{ type: "text", text: name + " logged" }] };
});
await server.connect(new StdioServerTransport());
