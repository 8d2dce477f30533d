// Unit tests of the player's websocket client (node --test), with a fake WebSocket and timers.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunSocket, runQuery, backoff, MAX_FAILED_STARTS, PROTOCOL_VERSION } from '../js/ws.js';

/** A fake WebSocket the tests drive by hand. */
class FakeWS {
  static OPEN = 1;
  /** @type {FakeWS[]} */
  static all = [];
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    this.handlers = {};
    FakeWS.all.push(this);
  }
  addEventListener(t, f) { (this.handlers[t] ||= []).push(f); }
  emit(t, ev) { for (const f of this.handlers[t] || []) f(ev); }
  open() { this.readyState = 1; this.emit('open', {}); }
  message(m) { this.emit('message', { data: JSON.stringify(m) }); }
  close(code) { this.readyState = 3; this.emit('close', { code: code ?? 1006 }); }
  send(s) { this.sent.push(JSON.parse(s)); }
}

/** Installs the fakes; returns the scheduled timers. */
function fakes() {
  FakeWS.all = [];
  const timers = [];
  globalThis.WebSocket = /** @type {any} */ (FakeWS);
  globalThis.location = /** @type {any} */ ({ protocol: 'http:', host: '127.0.0.1:8080' });
  globalThis.window = /** @type {any} */ ({ setTimeout: (f, ms) => { timers.push({ f, ms }); return timers.length; } });
  return timers;
}

const params = () => ({ image: 'demo', path: '/a b', offset: '9223372036854775807', length: '', mode: 'both', keepSize: true, before: ['zero /a b 0 4096'], step: 0, pace: '' });

test('runQuery keeps numbers exact and repeats before', () => {
  const q = runQuery(params());
  assert.equal(q.get('offset'), '9223372036854775807');
  assert.equal(q.has('length'), false);
  assert.equal(q.get('keepSize'), 'true');
  assert.deepEqual(q.getAll('before'), ['zero /a b 0 4096']);
});

test('backoff doubles from 0.5 s to 8 s', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 9].map(backoff), [500, 1000, 2000, 4000, 8000, 8000, 8000]);
});

test('a dropped connection reconnects at the step shown; controls sent meanwhile are replayed', () => {
  const timers = fakes();
  let shown = 0;
  const got = [];
  const sock = new RunSocket(params(), { hello: (h) => got.push(h), frame() {}, error() {}, status() {} }, () => shown);
  sock.connect();
  const a = FakeWS.all[0];
  assert.match(a.url, /^ws:\/\/127\.0\.0\.1:8080\/ws\/run\?/);
  a.open();
  a.message({ v: PROTOCOL_VERSION, type: 'hello', step: 0 });
  shown = 1234;
  a.close(1006);
  assert.equal(timers.length, 1);
  assert.equal(timers[0].ms, 500);
  sock.send({ type: 'play' });
  timers[0].f();
  const b = FakeWS.all[1];
  assert.match(b.url, /step=1234/);
  b.open();
  b.message({ v: PROTOCOL_VERSION, type: 'hello', step: 1234 });
  assert.deepEqual(b.sent, [{ type: 'play' }]);
  assert.equal(got.length, 2);
});

test('a run the server keeps refusing is given up, not retried forever', () => {
  const timers = fakes();
  const errors = [];
  const sock = new RunSocket(params(), { hello() {}, frame() {}, error: (e) => errors.push(e), status() {} }, () => 0);
  sock.connect();
  for (let k = 0; k < MAX_FAILED_STARTS; k++) {
    FakeWS.all[k].close(1006);
    if (k < MAX_FAILED_STARTS - 1) timers[k].f();
  }
  assert.equal(FakeWS.all.length, MAX_FAILED_STARTS);
  assert.equal(timers.length, MAX_FAILED_STARTS - 1);
  assert.equal(errors.length, 1);
  assert.ok(errors[0].fatal);
});

test('another protocol version stops the socket', () => {
  fakes();
  const errors = [];
  const sock = new RunSocket(params(), { hello() {}, frame() {}, error: (e) => errors.push(e), status() {} }, () => 0);
  sock.connect();
  FakeWS.all[0].message({ v: 1, type: 'hello' });
  assert.ok(sock.stopped);
  assert.match(errors[0].error, /protocol v1/);
});

test('other messages (initial pages, quiz verdicts) reach the page', () => {
  fakes();
  const other = [];
  const sock = new RunSocket(params(), { hello() {}, frame() {}, error() {}, status() {}, other: (m) => other.push(m) }, () => 0);
  sock.connect();
  FakeWS.all[0].message({ v: PROTOCOL_VERSION, type: 'initial', from: 0, next: 5, extents: [] });
  assert.equal(other[0].type, 'initial');
});
