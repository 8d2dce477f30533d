// PortSocket: the static site's player connection (static/js/portsocket.js), against a fake worker
// that answers on the MessagePort it is handed as cmd/zrviz-wasm/port.go does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PortSocket, OPEN, CLOSED, PING_EVERY_MS } from '../js/portsocket.js';

/** A fake environment: timers the test fires by hand, and pagehide. */
function fakeEnv() {
  const env = {
    intervals: new Map(),
    next: 1,
    listeners: /** @type {Record<string, Function[]>} */ ({}),
    setInterval(/** @type {Function} */ f, /** @type {number} */ ms) { const id = env.next++; env.intervals.set(id, { f, ms }); return id; },
    clearInterval(/** @type {number} */ id) { env.intervals.delete(id); },
    addEventListener(/** @type {string} */ t, /** @type {Function} */ f) { (env.listeners[t] ||= []).push(f); },
  };
  return env;
}

/** A fake worker: keeps the port it is handed and what arrives on it. */
function fakeWorker() {
  const w = {
    posted: /** @type {any[]} */ ([]),
    port: /** @type {MessagePort|null} */ (null),
    got: /** @type {any[]} */ ([]),
    postMessage(/** @type {any} */ msg, /** @type {any[]} */ transfer) {
      w.posted.push(msg);
      w.port = transfer[0];
      w.port.onmessage = (ev) => w.got.push(ev.data);
    },
  };
  return w;
}

const tick = () => new Promise((r) => setTimeout(r, 10));

test('PortSocket hands the worker a port with the path, opens, carries messages both ways, closes', async () => {
  const w = fakeWorker();
  const env = fakeEnv();
  const s = new PortSocket('/ws/run?image=demo&step=3', w, env);
  const events = [];
  s.addEventListener('open', () => events.push('open'));
  s.addEventListener('message', (ev) => events.push(`message ${ev.data}`));
  s.addEventListener('close', (ev) => events.push(`close ${ev.code} ${ev.reason}`));
  assert.deepEqual(w.posted, [{ type: 'zrviz-ws', path: '/ws/run?image=demo&step=3' }]);
  assert.throws(() => s.send('early'), /not open/);
  // A message before open is not delivered (the handler has not accepted the run).
  w.port.postMessage({ kind: 'message', data: 'too early' });
  w.port.postMessage({ kind: 'open' });
  w.port.postMessage({ kind: 'message', data: '{"v":2,"type":"hello"}' });
  await tick();
  assert.equal(s.readyState, OPEN);
  s.send('{"type":"play"}');
  // The page pings while open.
  const [ping] = env.intervals.values();
  assert.equal(ping.ms, PING_EVERY_MS);
  ping.f();
  await tick();
  assert.deepEqual(w.got, [{ kind: 'message', data: '{"type":"play"}' }, { kind: 'ping' }]);
  w.port.postMessage({ kind: 'close', code: 1008, reason: 'image "x": not found' });
  await tick();
  assert.equal(s.readyState, CLOSED);
  assert.equal(env.intervals.size, 0, 'the pinger stops');
  assert.deepEqual(events, ['open', 'message {"v":2,"type":"hello"}', 'close 1008 image "x": not found']);
  w.port.close();
});

test('PortSocket tells the worker when the page closes it or goes away', async () => {
  const w = fakeWorker();
  const env = fakeEnv();
  const s = new PortSocket('/ws/run?image=demo', w, env);
  w.port.postMessage({ kind: 'open' });
  await tick();
  for (const f of env.listeners.pagehide) f();
  await tick();
  assert.deepEqual(w.got, [{ kind: 'close', code: 1001, reason: 'page closed' }]);
  assert.equal(s.readyState, CLOSED);
  s.close(1000); // once only
  await tick();
  assert.equal(w.got.length, 1);
  w.port.close();
});

test('PortSocket without a controlling worker closes with the reason', async () => {
  const s = new PortSocket('/ws/run?image=demo', null, fakeEnv());
  const got = await new Promise((resolve) => s.addEventListener('close', (ev) => resolve([ev.code, ev.reason])));
  assert.equal(got[0], 1011);
  assert.match(got[1], /not running in this tab/);
});
