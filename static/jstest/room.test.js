// Unit tests of rooms in the player (node --test): the presenter's answer bars, what a follower is
// told, the socket a follower opens.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerBars, followersText, answeredText, followerStatus, tokenKey } from '../js/room.js';
import { runQuery, socketPath, FOLLOWER_CONTROLS } from '../js/ws.js';

test('answerBars: most given first, ties by value, the right answer kept, the rest summed', () => {
  const { bars, other, total } = answerBars({ 19: 12, 17: 3, 1018: 3, 2: 1 });
  assert.equal(total, 19);
  assert.deepEqual(bars.map((b) => [b.answer, b.count]), [['19', 12], ['17', 3], ['1018', 3], ['2', 1]]);
  assert.equal(other, null);
  assert.ok(Math.abs(bars[0].frac - 12 / 19) < 1e-9);
  assert.ok(bars.every((b) => !b.right));

  // Past the bars shown: the rest in one line, the right answer always among the bars.
  const counts = { a: 9, b: 8, c: 7, d: 6, e: 5, f: 4, g: 3, h: 1 };
  const x = answerBars(counts, 'h', 6);
  assert.deepEqual(x.bars.map((b) => b.answer), ['a', 'b', 'c', 'd', 'e', 'h']);
  assert.equal(x.bars[5].right, true);
  assert.deepEqual(x.other, { answers: 2, count: 7 });
  assert.equal(x.total, 43);
  const y = answerBars({ yes: 2, no: 5 }, 'yes');
  assert.deepEqual(y.bars.map((b) => [b.answer, b.right]), [['no', false], ['yes', true]]);
  // Numbers before words on a tie; zero counts dropped; nothing yet.
  assert.deepEqual(answerBars({ zz: 1, 7: 1, 10: 1, x: 0 }).bars.map((b) => b.answer), ['7', '10', 'zz']);
  assert.deepEqual(answerBars({}), { bars: [], other: null, total: 0 });
  assert.deepEqual(answerBars(undefined).bars, []);
  // A right answer nobody gave is not invented.
  assert.ok(answerBars({ 1: 2 }, '3').bars.every((b) => !b.right));
});

test('what the pages say of the room', () => {
  assert.equal(followersText(1), '1 follower');
  assert.equal(followersText(0), '0 followers');
  assert.equal(followersText(1200), '1,200 followers');
  assert.equal(answeredText(15, 30), '15 of 30 followers answered');
  const r = { code: 'k4x7q2ab', role: 'follower', url: '/follow/k4x7q2ab', followers: 2, presenter: true, ui: { stop: -1, quiz: false, question: -1 } };
  assert.equal(followerStatus(null, false), 'connecting');
  assert.equal(followerStatus(r, false), 'following the presenter');
  assert.equal(followerStatus(r, true), 'detached: exploring on your own');
  assert.equal(followerStatus({ ...r, presenter: false }, false), 'the presenter has left: the room waits 5 minutes for them');
  assert.equal(followerStatus({ ...r, presenter: false }, true), 'detached · the presenter has left');
  assert.equal(followerStatus({ ...r, presenter: false, ended: true }, false), 'the room has ended');
  assert.equal(followerStatus({ ...r, ended: true }, true), 'the room has ended');
  assert.equal(tokenKey('k4x7q2ab'), 'zrviz.room.k4x7q2ab.token');
});

test('a follower opens /ws/follow and sends only what a follower may; a presenter\'s socket carries its room', () => {
  const run = { image: 'demo', path: '/seed/bench64.bin', offset: '0', length: '', mode: 'both', keepSize: false, before: [], step: 7, pace: '' };
  assert.equal(socketPath({ ...run, follow: 'k4x7q2ab' }), '/ws/follow?code=k4x7q2ab');
  const q = new URLSearchParams(socketPath({ ...run, room: 'k4x7q2ab', token: 'secret', trace: 't1', traceOp: '2' }).split('?')[1]);
  assert.equal(q.get('room'), 'k4x7q2ab');
  assert.equal(q.get('token'), 'secret');
  assert.equal(q.get('trace'), 't1');
  assert.equal(q.get('traceOp'), '2');
  assert.equal(q.get('step'), '7');
  const plain = runQuery({ ...run, room: 'k4x7q2ab', token: '', trace: '', traceOp: '3' });
  assert.equal(plain.get('room'), null, 'no room without its token');
  assert.equal(plain.get('traceOp'), null, 'no traceOp without a trace');
  assert.deepEqual([...FOLLOWER_CONTROLS].sort(), ['answer', 'initial']);
});

test('a follower\'s RunSocket drops the controls that drive; detached (no follow), it sends them', async () => {
  const { RunSocket, PROTOCOL_VERSION } = await import('../js/ws.js');
  const all = [];
  class FakeWS {
    static OPEN = 1;
    constructor(url) { this.url = url; this.readyState = 0; this.sent = []; this.h = {}; all.push(this); }
    addEventListener(t, f) { (this.h[t] ||= []).push(f); }
    emit(t, ev) { for (const f of this.h[t] || []) f(ev); }
    send(s) { this.sent.push(JSON.parse(s).type); }
    close() { this.readyState = 3; this.emit('close', { code: 1000 }); }
  }
  globalThis.WebSocket = /** @type {any} */ (FakeWS);
  globalThis.location = /** @type {any} */ ({ protocol: 'http:', host: '127.0.0.1:8080' });
  globalThis.window = /** @type {any} */ ({ setTimeout: () => 0 });
  const params = { image: 'demo', path: '/a', offset: '0', length: '', mode: 'both', keepSize: false, before: [], step: 0, pace: '', follow: 'k4x7q2ab' };
  const sock = new RunSocket(params, { hello() {}, frame() {}, error() {}, status() {} }, () => 42);
  sock.connect();
  const ws = all[0];
  assert.equal(ws.url, 'ws://127.0.0.1:8080/ws/follow?code=k4x7q2ab');
  ws.readyState = 1;
  ws.emit('open', {});
  ws.emit('message', { data: JSON.stringify({ v: PROTOCOL_VERSION, type: 'hello' }) });
  for (const type of ['play', 'seek', 'step', 'pace', 'mode', 'nextCall', 'end', 'reset', 'gotoSlot', 'room', 'ui', 'reveal', 'initial', 'answer']) sock.send({ type });
  assert.deepEqual(ws.sent, ['initial', 'answer']);
  // Detaching: the same socket object on /ws/run at the step shown, and it drives.
  params.follow = '';
  sock.stop();
  sock.resume();
  const run = all[1];
  assert.match(run.url, /\/ws\/run\?.*step=42/);
  run.readyState = 1;
  run.emit('message', { data: JSON.stringify({ v: PROTOCOL_VERSION, type: 'hello' }) });
  sock.send({ type: 'seek', step: 3 });
  assert.deepEqual(run.sent, ['seek']);
});

test('presenterRoomParams: a reloaded presenter takes its room back with the tab\'s token; a gone room leaves the URL', async () => {
  const { presenterRoomParams } = await import('../js/room.js');
  const setup = (search, token, status) => {
    const store = new Map(token ? [['zrviz.room.k4x7q2ab.token', token]] : []);
    const calls = [];
    globalThis.sessionStorage = /** @type {any} */ ({ getItem: (k) => store.get(k) ?? null, removeItem: (k) => store.delete(k), setItem: (k, v) => store.set(k, v) });
    globalThis.location = /** @type {any} */ ({ search, pathname: '/images/demo/run', hash: '' });
    globalThis.history = /** @type {any} */ ({ replaceState: (_s, _t, u) => { calls.push(u); } });
    globalThis.fetch = /** @type {any} */ (async (u, o) => { calls.push(`${o.method} ${u}`); return { ok: status === 200, status }; });
    const doc = /** @type {any} */ ({ body: { dataset: {} } });
    return { store, calls, doc };
  };
  let e = setup('?path=%2Fa&mode=both', 'tok', 200);
  assert.deepEqual(await presenterRoomParams(e.doc), {});
  assert.deepEqual(e.calls, [], 'no room: nothing asked');

  e = setup('?path=%2Fa&room=k4x7q2ab', 'tok', 200);
  assert.deepEqual(await presenterRoomParams(e.doc), { room: 'k4x7q2ab', token: 'tok' });
  assert.deepEqual(e.calls, ['HEAD /follow/k4x7q2ab']);

  e = setup('?path=%2Fa&room=k4x7q2ab', '', 200);
  assert.deepEqual(await presenterRoomParams(e.doc), {}, 'a shared presenter link without the token is no presenter');
  assert.deepEqual(e.calls, ['/images/demo/run?path=%2Fa']);
  assert.equal(e.doc.body.dataset.roomGone, undefined);

  e = setup('?room=k4x7q2ab', 'tok', 404);
  assert.deepEqual(await presenterRoomParams(e.doc), {});
  assert.deepEqual(e.calls, ['HEAD /follow/k4x7q2ab', '/images/demo/run']);
  assert.equal(e.store.size, 0, 'the token of a gone room is forgotten');
  assert.equal(e.doc.body.dataset.roomGone, 'k4x7q2ab');
});
