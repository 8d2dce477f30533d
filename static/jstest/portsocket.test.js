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
    waiting: /** @type {{n: number, resolve: () => void}[]} */ ([]),
    postMessage(/** @type {any} */ msg, /** @type {any[]} */ transfer) {
      w.posted.push(msg);
      w.port = transfer[0];
      w.port.onmessage = (ev) => {
        w.got.push(ev.data);
        w.waiting = w.waiting.filter((x) => (w.got.length >= x.n ? (x.resolve(), false) : true));
      };
    },
    /** Resolves once n messages have arrived: an event, not a wait for time. */
    received(/** @type {number} */ n) {
      return new Promise((resolve) => (w.got.length >= n ? resolve(undefined) : w.waiting.push({ n, resolve: () => resolve(undefined) })));
    },
  };
  return w;
}

/**
 * Resolves with the next event of this type on s.
 * @param {EventTarget} s
 * @param {string} type
 * @returns {Promise<any>}
 */
const next = (s, type) => new Promise((resolve) => s.addEventListener(type, resolve, { once: true }));

test('PortSocket hands the worker a port with the path, opens, carries messages both ways, closes', async (t) => {
  const w = fakeWorker();
  const env = fakeEnv();
  const s = new PortSocket('/ws/run?image=demo&step=3', w, env);
  t.after(() => w.port?.close()); // an open port would keep the test process alive after a failure
  const events = [];
  s.addEventListener('open', () => events.push('open'));
  s.addEventListener('message', (ev) => events.push(`message ${ev.data}`));
  s.addEventListener('close', (ev) => events.push(`close ${ev.code} ${ev.reason}`));
  assert.deepEqual(w.posted, [{ type: 'zrviz-ws', path: '/ws/run?image=demo&step=3' }]);
  assert.throws(() => s.send('early'), /not open/);
  // A message before open is not delivered (the handler has not accepted the run); a port keeps
  // its order, so once the hello is delivered the early message has been seen and dropped.
  const hello = next(s, 'message');
  w.port.postMessage({ kind: 'message', data: 'too early' });
  w.port.postMessage({ kind: 'open' });
  w.port.postMessage({ kind: 'message', data: '{"v":2,"type":"hello"}' });
  await hello;
  assert.equal(s.readyState, OPEN);
  s.send('{"type":"play"}');
  // The page pings while open.
  const [ping] = env.intervals.values();
  assert.equal(ping.ms, PING_EVERY_MS);
  ping.f();
  await w.received(2);
  assert.deepEqual(w.got, [{ kind: 'message', data: '{"type":"play"}' }, { kind: 'ping' }]);
  const closed = next(s, 'close');
  w.port.postMessage({ kind: 'close', code: 1008, reason: 'image "x": not found' });
  await closed;
  assert.equal(s.readyState, CLOSED);
  assert.equal(env.intervals.size, 0, 'the pinger stops');
  assert.deepEqual(events, ['open', 'message {"v":2,"type":"hello"}', 'close 1008 image "x": not found']);
});

test('PortSocket tells the worker when the page closes it or goes away', async (t) => {
  const w = fakeWorker();
  const env = fakeEnv();
  const s = new PortSocket('/ws/run?image=demo', w, env);
  t.after(() => w.port?.close());
  const opened = next(s, 'open');
  w.port.postMessage({ kind: 'open' });
  await opened;
  for (const f of env.listeners.pagehide) f();
  await w.received(1);
  assert.deepEqual(w.got, [{ kind: 'close', code: 1001, reason: 'page closed' }]);
  assert.equal(s.readyState, CLOSED);
  // Once only: a second close posts nothing.
  let posts = 0;
  const post = s.post.bind(s);
  s.post = (m) => { posts++; post(m); };
  s.close(1000);
  assert.equal(posts, 0);
});

test('PortSocket without a controlling worker closes with the reason', async () => {
  const s = new PortSocket('/ws/run?image=demo', null, fakeEnv());
  const got = await new Promise((resolve) => s.addEventListener('close', (ev) => resolve([ev.code, ev.reason])));
  assert.equal(got[0], 1011);
  assert.match(got[1], /not running in this tab/);
});
