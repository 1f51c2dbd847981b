// The benchmark's client on the official TypeScript SDK
// (@modelcontextprotocol/sdk): it connects to every way in the plan (each a
// server command over stdio: the server itself, or attune mcp in front of
// it), warms each up, then calls the tool on each in turn, the order turning
// every round so that the machine's load falls on every way alike, and
// prints one JSON line: {"WAY": {"n": N, "p50": NS, "p99": NS, "mean": NS,
// "cpu": NS, "runs": R}}, cpu being the CPU time per call of the way's
// spawned process (every thread of it, not its children) over the timed
// calls, and runs the times per call one of its threads was put on a CPU
// (each a wake-up), from /proc/PID/task/*/schedstat (-1 where /proc is not
// there).
//
//   node benchclient.mjs PLAN.json
//
// PLAN.json: {"peers": "<dir holding node_modules>", "ways": [{"name": "...",
//             "command": "...", "args": [...], "env": {...}}], "tool": "...",
//             "arguments": {...}, "warmup": 50, "calls": 2000}
import { readFileSync, readdirSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const sdk = path.join(plan.peers, "node_modules/@modelcontextprotocol/sdk/dist/esm");
const { Client } = await import(pathToFileURL(path.join(sdk, "client/index.js")).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(sdk, "client/stdio.js")).href);

// sched is [the CPU time every thread of process pid has used in ns, the
// times they were put on a CPU]; null when unknown. A thread that ended
// before is not counted: Go's and node's threads live as long as the
// process.
function sched(pid) {
  try {
    const sum = [0, 0];
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const f = readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ");
      sum[0] += Number(f[0]);
      sum[1] += Number(f[2]);
    }
    return sum;
  } catch {
    return null;
  }
}

const clients = [];
const transports = [];
for (const w of plan.ways) {
  const opts = { command: w.command, args: w.args ?? [], stderr: "inherit" };
  if (w.env) opts.env = { ...process.env, ...w.env };
  const transport = new StdioClientTransport(opts);
  const client = new Client({ name: "attune-bench", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  clients.push(client);
  transports.push(transport);
}
const params = { name: plan.tool, arguments: plan.arguments ?? {} };
async function call(c) {
  const start = process.hrtime.bigint();
  const res = await c.callTool(params);
  const took = Number(process.hrtime.bigint() - start);
  if (res.isError) throw new Error("the call failed: " + JSON.stringify(res));
  return took;
}
for (let i = 0; i < (plan.warmup ?? 50); i++) for (const c of clients) await call(c);
const times = clients.map(() => []);
const s0 = transports.map((t) => sched(t.pid));
for (let i = 0; i < plan.calls; i++) {
  for (let j = 0; j < clients.length; j++) {
    const k = (i + j) % clients.length;
    times[k].push(await call(clients[k]));
  }
}
const s1 = transports.map((t) => sched(t.pid));
const out = {};
plan.ways.forEach((w, k) => {
  const t = times[k].sort((a, b) => a - b);
  const at = (q) => t[Math.min(t.length - 1, Math.floor(q * t.length))];
  out[w.name] = { n: t.length, p50: at(0.5), p99: at(0.99), mean: t.reduce((a, b) => a + b, 0) / t.length,
    cpu: s0[k] && s1[k] ? (s1[k][0] - s0[k][0]) / t.length : -1,
    runs: s0[k] && s1[k] ? (s1[k][1] - s0[k][1]) / t.length : -1 };
});
for (const c of clients) await c.close();
process.stdout.write(JSON.stringify(out) + "\n");
