// A host written in JavaScript, driving `attune serve` with the npm package
// vscode-jsonrpc (its requests, callbacks, cancellation and error handling;
// only the line framing is ours). Run by server/hosts_test.go:
//   ATTUNE_BIN=... ATTUNE_CONFIG=... PEERS=testdata/peers node node_host.cjs
// Prints "ok" and exits 0 when every check passed; otherwise exits 1.
'use strict';
const path = require('path');
const { spawn } = require('child_process');
const rpc = require(path.join(process.env.PEERS, 'node_modules', 'vscode-jsonrpc', 'node'));

// One JSON value per line (docs/protocol.md, Framing).
class LineReader extends rpc.AbstractMessageReader {
  constructor(readable) { super(); this.readable = readable; this.buf = ''; }
  listen(callback) {
    this.readable.on('data', (chunk) => {
      this.buf += chunk.toString('utf8');
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        if (!line.trim()) continue;
        const msg = JSON.parse(line);
        (Array.isArray(msg) ? msg : [msg]).forEach(callback);
      }
    });
    this.readable.on('error', (e) => this.fireError(e));
    this.readable.on('close', () => this.fireClose());
    return { dispose: () => {} };
  }
}
class LineWriter extends rpc.AbstractMessageWriter {
  constructor(writable) { super(); this.w = writable; }
  write(msg) {
    return new Promise((resolve, reject) => this.w.write(JSON.stringify(msg) + '\n', (e) => (e ? reject(e) : resolve())));
  }
  end() {}
}

function check(cond, what, value) {
  if (!cond) throw new Error(what + ': ' + JSON.stringify(value));
}

async function main() {
  const child = spawn(process.env.ATTUNE_BIN, ['serve', process.env.ATTUNE_CONFIG], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const conn = rpc.createMessageConnection(new LineReader(child.stdout), new LineWriter(child.stdin));

  const seen = { cores: [], floors: [], reads: 0, logs: [], notes: [] };
  conn.onRequest('host/read', (p) => { seen.reads++; check(p.key === 'vcs/branch' && p.instance === 'a', 'read params', p); return 'main'; });
  conn.onRequest('host/floor', (p) => { seen.floors.push(p); return { refused: p.args && p.args.path === 'secret', reason: 'not that one' }; });
  conn.onRequest('host/core', (p) => {
    seen.cores.push(p);
    if (p.path === 'slow/never' || p.path === 'slow/block') return new Promise(() => {}); // never answers
    return { content: 'data of ' + p.args.path };
  });
  conn.onNotification('log', (p) => seen.logs.push(p));
  conn.onNotification('notes', (p) => seen.notes.push(p));
  conn.listen();

  const init = await conn.sendRequest('initialize', { protocol_version: 1, client: { name: 'node-host' }, capabilities: { floor: true, log: true, notes: true }, host_timeout_ms: 500 });
  check(init.protocol_version === 1 && init.engine.name === 'attune' && init.capabilities.host_timeout_ms === 500, 'initialize', init);
  for (const [p, effects] of [['fs/read', ['read']], ['slow/never', ['slow']], ['slow/block', ['slow']]]) {
    await conn.sendRequest('tools/register', { path: p, effects });
  }
  const started = await conn.sendRequest('start', { instance: 'a', bot: 'main' });
  check(started.instance === 'a' && started.bot === 'main', 'start', started);

  // a turn: rounds, a tool call through a guard, the floor and a host core
  const tb = await conn.sendRequest('turn/begin', { instance: 'a', input: 'hello' });
  check(tb.status === 'ok' && tb.turn === 1, 'turn/begin', tb);
  await conn.sendRequest('round/begin', { instance: 'a' });
  const out = await conn.sendRequest('tool', { instance: 'a', path: 'fs/read', args: { path: 'x' } });
  check(out.status === 'ok' && out.result.content === 'data of x' && out.diagnostics[0] === 'read x' && out.call_id, 'tool', out);
  const core = seen.cores[0];
  check(core.instance === 'a' && core.call_id === out.call_id && core.marks[0] === 'checked', 'core params', core);
  check(seen.floors[0].call_id === out.call_id, 'floor params', seen.floors);
  const refused = await conn.sendRequest('tool', { instance: 'a', path: 'fs/read', args: { path: 'secret' } });
  check(refused.status === 'refused' && refused.refused_by === 'floor' && refused.reason === 'not that one', 'floor refusal', refused);
  const re = await conn.sendRequest('round/end', { instance: 'a', host_continue: false });
  check(re.continue === true && re.notes[0].text === 'on branch main' && seen.reads === 1, 'round/end', re);

  // a method, and its owner's state
  const m = await conn.sendRequest('method', { instance: 'a', owner: 'counter', method: 'add', input: { by: 5 } });
  check(m.status === 'ok' && m.result === 5 && m.revision === 1, 'method', m);
  const st = await conn.sendRequest('state', { instance: 'a', owner: 'counter' });
  check(st.state.n === 5 && st.revision === 1, 'state', st);

  // cancellation: vscode-jsonrpc sends $/cancelRequest; the server answers -32800
  const src = new rpc.CancellationTokenSource();
  const pending = conn.sendRequest('tool', { instance: 'a', path: 'slow/block', args: {} }, src.token);
  setTimeout(() => src.cancel(), 100);
  let cancelled = null;
  try { await pending; } catch (e) { cancelled = e; }
  check(cancelled && cancelled.code === -32800 && cancelled.data.code === 'cancelled', 'cancel', cancelled && [cancelled.code, cancelled.message]);

  // a callback that never answers times out (host_timeout_ms 500); the instance stays usable
  const t0 = Date.now();
  const slow = await conn.sendRequest('tool', { instance: 'a', path: 'slow/never', args: {} });
  check(slow.status === 'failed' && slow.code === 'host-timeout' && Date.now() - t0 < 10000, 'timeout', slow);
  const again = await conn.sendRequest('tool', { instance: 'a', path: 'fs/read', args: { path: 'y' } });
  check(again.status === 'ok', 'after the timeout', again);

  // errors: JSON-RPC and engine
  let err = null;
  try { await conn.sendRequest('rollback', { instance: 'a' }); } catch (e) { err = e; }
  check(err && err.code === -32602 && err.data.param === 'to_turn', 'invalid params', err);
  err = null;
  try { await conn.sendRequest('round/end', { instance: 'nobody' }); } catch (e) { err = e; }
  check(err && err.code === -32000 && err.data.code === 'not-running', 'engine error', err);

  const te = await conn.sendRequest('turn/end', { instance: 'a', addenda: ['done'] });
  check(te.loop_end.addenda[0] === 'done', 'turn/end', te);
  const rp = await conn.sendRequest('replay', { instance: 'a' });
  check(rp.steps >= 4 && rp.diverged.length === 0, 'replay', rp);

  check(seen.logs.some((l) => l.message === 'print' && l.fields.text === 'turn 1 begins'), 'log notification', seen.logs);
  check(seen.notes.some((n) => n.instance === 'a' && n.note.text === 'on branch main'), 'notes notification', seen.notes);

  child.stdin.end(); // end of input: the server exits 0
  const code = await exited;
  check(code === 0, 'exit code', code);
  conn.dispose();
  console.log('ok');
}

main().then(() => process.exit(0), (e) => { console.error('node host: ' + (e && e.stack || e)); process.exit(1); });
