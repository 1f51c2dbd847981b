// An MCP client built on the official TypeScript SDK (@modelcontextprotocol/sdk):
// it spawns the server command given in the plan over stdio, runs the plan's
// steps in order and prints one JSON line per step on stdout.
//
//   node client.mjs PLAN.json
//
// PLAN.json: {"peers": "<dir holding node_modules>", "command": "...", "args": [...],
//             "env": {...}, "steps": [{"op": "list"}, {"op": "call", "name": "...",
//             "arguments": {...}}, ...]}
// Ops: list, call (optional killUpstreamAfterMs: SIGKILL the server's child
// processes while the call runs; progress: true asks for progress
// notifications, printed as "progress"), resources, templates, prompts, prompt, read,
// ping, wait (ms), notifications (the methods of every notification received
// so far), complete (ref, argument), setLevel (level), logs (the params of
// the notifications/message received since the last logs, in order),
// elicited (the elicitation requests received so far), close. A step that
// throws prints {"error": message}.
// plan.sampling: the client declares sampling and answers every
// sampling/createMessage with that text; plan.roots: it declares roots and
// lists these folders; plan.elicit: it declares elicitation and answers every
// elicitation/create with that result (the requests are listed by the op
// elicited).
import { readFileSync, readdirSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const sdk = path.join(plan.peers, "node_modules/@modelcontextprotocol/sdk/dist/esm");
const { Client } = await import(pathToFileURL(path.join(sdk, "client/index.js")).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(sdk, "client/stdio.js")).href);

// children lists the pids whose parent is pid (Linux /proc).
function children(pid) {
  const out = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(d));
    } catch {}
  }
  return out;
}

const transport = new StdioClientTransport({
  command: plan.command,
  args: plan.args ?? [],
  env: { ...process.env, ...(plan.env ?? {}) },
  stderr: "inherit",
});
const types = await import(pathToFileURL(path.join(sdk, "types.js")).href);
const capabilities = {};
if (plan.sampling !== undefined) capabilities.sampling = {};
if (plan.roots !== undefined) capabilities.roots = { listChanged: false };
if (plan.elicit !== undefined) capabilities.elicitation = {};
const client = new Client({ name: "attune-e2e", version: "1.0.0" }, { capabilities });
const sampled = [];
if (plan.sampling !== undefined) {
  client.setRequestHandler(types.CreateMessageRequestSchema, async (req) => {
    sampled.push(req.params);
    return { model: "attune-e2e", role: "assistant", content: { type: "text", text: plan.sampling } };
  });
}
if (plan.roots !== undefined) {
  client.setRequestHandler(types.ListRootsRequestSchema, async () => ({
    roots: plan.roots.map((r) => ({ uri: pathToFileURL(r).href, name: path.basename(r) })),
  }));
}
const elicited = [];
if (plan.elicit !== undefined) {
  client.setRequestHandler(types.ElicitRequestSchema, async (req) => {
    elicited.push(req.params);
    return plan.elicit;
  });
}
const notifications = [];
const logs = [];
client.setNotificationHandler(types.LoggingMessageNotificationSchema, async (n) => { logs.push(n.params); });
client.fallbackNotificationHandler = async (n) => { notifications.push(n.method); };
client.setNotificationHandler(types.ToolListChangedNotificationSchema, async (n) => { notifications.push(n.method); });
await client.connect(transport);
const emit = (v) => process.stdout.write(JSON.stringify(v) + "\n");
emit({ op: "connected", pid: transport.pid, server: client.getServerVersion(), capabilities: client.getServerCapabilities() });

for (const step of plan.steps) {
  const started = Date.now();
  const progress = [];
  try {
    let result;
    switch (step.op) {
      case "list":
        result = await client.listTools();
        break;
      case "call": {
        let timer;
        if (step.killUpstreamAfterMs !== undefined) {
          timer = setTimeout(() => {
            for (const c of children(transport.pid)) process.kill(c, "SIGKILL");
          }, step.killUpstreamAfterMs);
        }
        try {
          const options = { timeout: step.timeoutMs ?? 60000 };
          if (step.progress) options.onprogress = (p) => progress.push(p);
          result = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, options);
        } finally {
          clearTimeout(timer);
        }
        break;
      }
      case "resources":
        result = await client.listResources();
        break;
      case "templates":
        result = await client.listResourceTemplates();
        break;
      case "prompts":
        result = await client.listPrompts();
        break;
      case "prompt":
        result = await client.getPrompt({ name: step.name, arguments: step.arguments ?? {} });
        break;
      case "read":
        result = await client.readResource({ uri: step.uri });
        break;
      case "wait":
        await new Promise((r) => setTimeout(r, step.ms ?? 100));
        result = {};
        break;
      case "notifications":
        result = { methods: notifications, sampled };
        break;
      case "complete":
        result = await client.complete({ ref: step.ref, argument: step.argument });
        break;
      case "setLevel":
        result = await client.setLoggingLevel(step.level);
        break;
      case "logs":
        result = { logs: logs.splice(0) };
        break;
      case "elicited":
        result = { requests: elicited };
        break;
      case "ping":
        result = await client.ping();
        break;
      case "close":
        await client.close();
        result = {};
        break;
      default:
        throw new Error("unknown op " + step.op);
    }
    emit({ op: step.op, result, ms: Date.now() - started, progress });
  } catch (e) {
    emit({ op: step.op, error: String(e && e.message ? e.message : e), ms: Date.now() - started });
  }
}
if (!plan.steps.some((s) => s.op === "close")) await client.close();
