// A host written in JavaScript on the npm package vscode-jsonrpc with its
// own framing (StreamMessageReader and StreamMessageWriter: Content-Length
// headers, as for a language server), driving `attune serve`, which answers
// in the framing the client's first message used (docs/protocol.md,
// Framing). Run by server/hosts_test.go:
//   ATTUNE_BIN=... ATTUNE_CONFIG=... PEERS=testdata/peers node node_host_headers.cjs
// Prints "ok" and exits 0 when every check passed; otherwise exits 1.
'use strict';
const path = require('path');
const { spawn } = require('child_process');
const rpc = require(path.join(process.env.PEERS, 'node_modules', 'vscode-jsonrpc', 'node'));

function check(cond, what, value) {
  if (!cond) throw new Error(what + ': ' + JSON.stringify(value));
}

async function main() {
  const child = spawn(process.env.ATTUNE_BIN, ['serve', process.env.ATTUNE_CONFIG], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const logs = [];
  conn.onRequest('host/read', () => 'main');
  conn.onRequest('host/core', (p) => {
    if (p.path === 'slow/never') return new Promise(() => {}); // never answers
    return { content: 'data of ' + p.args.path + ' ' + 'é'.repeat(3) };
  });
  conn.onNotification('log', (p) => logs.push(p));
  conn.listen();

  const init = await conn.sendRequest('initialize', { protocol_version: 1, capabilities: { log: true } });
  check(init.protocol_version === 1, 'initialize', init);
  await conn.sendRequest('tools/register', { path: 'fs/read', effects: ['read'] });
  await conn.sendRequest('tools/register', { path: 'slow/never', effects: ['slow'] });
  await conn.sendRequest('start', { instance: 'a', bot: 'main' });
  await conn.sendRequest('turn/begin', { instance: 'a', input: 'hello' });
  await conn.sendRequest('round/begin', { instance: 'a' });
  const out = await conn.sendRequest('tool', { instance: 'a', path: 'fs/read', args: { path: 'notes.txt' } });
  check(out.status === 'ok' && out.result.content === 'data of notes.txt ééé', 'tool over Content-Length framing', out);
  const end = await conn.sendRequest('round/end', { instance: 'a' });
  check(end.status === 'ok' && end.notes.length === 1, 'round/end', end);
  // errors come back as vscode-jsonrpc's ResponseError
  try {
    await conn.sendRequest('no/such', {});
    check(false, 'unknown method', 'answered');
  } catch (e) {
    check(e.code === -32601, 'unknown method', e.code);
  }
  // cancellation through the package's own token ($/cancelRequest)
  const src = new rpc.CancellationTokenSource();
  const pending = conn.sendRequest('tool', { instance: 'a', path: 'slow/never', args: {} }, src.token);
  setTimeout(() => src.cancel(), 200);
  try {
    await pending;
    check(false, 'cancelled request', 'answered');
  } catch (e) {
    check(e.code === -32800, 'cancelled request', e.code);
  }
  check(logs.some((l) => l.message === 'print'), 'log notifications', logs);
  child.stdin.end();
  const code = await exited;
  check(code === 0, 'exit code', code);
  console.log('ok');
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
