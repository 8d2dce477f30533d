// Unit tests of the compare page's logic (node --test): one set of controls driving two sessions
// by slot, the span, the summary line, the figures and each side's socket query.
import { served } from './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  controlFor, playStride, spanOf, Lockstep, summaryLine, figuresOf, sideQuery, PLAY_TICKS, AT, atOf, withAt, callWords, whereText,
} from '../js/compare.js';

/** A seeded generator (mulberry32): the same sequences on every run. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('a position is step 0, the end, or the first step whose cursor reaches its slot', () => {
  assert.deepEqual(controlFor(0, 100, 192), { type: 'reset' });
  assert.deepEqual(controlFor(-3, 100, 192), { type: 'reset' });
  assert.deepEqual(controlFor(192, 100, 192), { type: 'end' });
  assert.deepEqual(controlFor(500, 100, 192), { type: 'end' });
  assert.deepEqual(controlFor(1, 100, 192), { type: 'gotoSlot', slot: 101 });
  assert.deepEqual(controlFor(191, 100, 192), { type: 'gotoSlot', slot: 291 });
  // A range of no slots: the start is the end.
  assert.deepEqual(controlFor(0, 7, 0), { type: 'reset' });
});

test('play covers any range in at most PLAY_TICKS ticks, one slot a tick at least', () => {
  for (const n of [1, 2, 149, 150, 151, 192, 1024, 16384, 2 ** 24 + 3]) {
    const k = playStride(n);
    assert.ok(k >= 1, `${n}`);
    assert.ok(Math.ceil(n / k) <= PLAY_TICKS, `${n} slots by ${k}: ${Math.ceil(n / k)} ticks`);
    // No larger than it needs to be: one slot less would take more ticks.
    if (k > 1) assert.ok(Math.ceil(n / (k - 1)) > PLAY_TICKS, `${n}`);
  }
});

test('the span is the union of the ready sides\' ranges', () => {
  assert.deepEqual(spanOf([]), { start: 0, n: 0 });
  assert.deepEqual(spanOf([{ ready: false, range: { start: 5, end: 9 } }]), { start: 0, n: 0 });
  assert.deepEqual(spanOf([{ ready: true, range: { start: 0, end: 192 } }, { ready: true, range: { start: 0, end: 192 } }]), { start: 0, n: 192 });
  assert.deepEqual(spanOf([{ ready: true, range: { start: 10, end: 20 } }, { ready: true, range: { start: 4, end: 12 } }]), { start: 4, n: 16 });
  assert.deepEqual(spanOf([{ ready: true, range: { start: 10, end: 20 } }, { ready: false, range: { start: 0, end: 99 } }]), { start: 10, n: 10 });
});

/**
 * The position a sequence of actions leads to, computed afresh from the actions alone.
 * @param {Array<[string, number?]>} actions
 * @param {number} n
 */
function expectedPos(actions, n) {
  let pos = 0;
  let playing = false;
  // A range of no slots still has two positions: its start and its end (an errno, a new size).
  const last = Math.max(1, n);
  const clamp = (p) => Math.max(0, Math.min(last, Math.round(p)));
  for (const [a, v] of actions) {
    if (a === 'step') { playing = false; pos = clamp(pos + v); }
    if (a === 'seek') { playing = false; pos = clamp(v); }
    if (a === 'home') { playing = false; pos = 0; }
    if (a === 'end') { playing = false; pos = last; }
    if (a === 'toggle') {
      if (playing) playing = false;
      else { if (pos >= last) pos = 0; playing = true; }
    }
    if (a === 'tick' && playing) {
      pos = clamp(pos + Math.max(1, Math.ceil(last / PLAY_TICKS)));
      if (pos >= last) playing = false;
    }
  }
  return { pos, playing };
}

test('any sequence of controls: both sessions are sent the same controls, and the last shows the position a fresh load of it would', () => {
  const r = rng(28);
  for (let run = 0; run < 300; run++) {
    const n = Math.floor(r() * 400);
    const start = Math.floor(r() * 5000);
    const sent = [[], []];
    const lock = new Lockstep(sent.map((log) => (m) => log.push(m)));
    lock.setSpan({ start, n });
    /** @type {Array<[string, number?]>} */
    const actions = [];
    const len = 1 + Math.floor(r() * 60);
    for (let i = 0; i < len; i++) {
      const k = Math.floor(r() * 7);
      if (k === 0) actions.push(['step', Math.floor(r() * 7) - 3]);
      else if (k === 1) actions.push(['seek', r() * (n + 20) - 10]);
      else if (k === 2) actions.push([r() < 0.5 ? 'home' : 'end']);
      else if (k === 3) actions.push(['toggle']);
      else actions.push(['tick']);
      const [a, v] = actions[actions.length - 1];
      if (a === 'step') lock.step(/** @type {number} */ (v));
      else if (a === 'seek') lock.seek(/** @type {number} */ (v));
      else if (a === 'home') lock.home();
      else if (a === 'end') lock.end();
      else if (a === 'toggle') lock.toggle();
      else lock.tick();
      const want = expectedPos(actions, n);
      assert.equal(lock.pos, want.pos, `run ${run}, after ${JSON.stringify(actions)}`);
      assert.equal(lock.playing, want.playing, `run ${run}, after ${JSON.stringify(actions)}`);
      assert.deepEqual(sent[0], sent[1], 'both sessions hear the same controls');
      assert.deepEqual(sent[0].at(-1), controlFor(lock.pos, start, Math.max(1, n)), `run ${run}: the last control shows the position`);
    }
    // Played from anywhere, a run reaches its end and stops there.
    {
      if (lock.playing) lock.toggle();
      lock.toggle();
      for (let i = 0; i <= PLAY_TICKS && lock.playing; i++) lock.tick();
      assert.equal(lock.pos, Math.max(1, n));
      assert.equal(lock.playing, false);
      assert.deepEqual(sent[1].at(-1), { type: 'end' });
    }
  }
});

test('a new span (a side reconnected) sends the position again, clamped to it', () => {
  const sent = [];
  const lock = new Lockstep([(m) => sent.push(m)]);
  lock.setSpan({ start: 0, n: 192 });
  lock.seek(150);
  lock.setSpan({ start: 0, n: 100 });
  assert.equal(lock.pos, 100);
  assert.deepEqual(sent.at(-1), { type: 'end' });
  lock.setSpan({ start: 0, n: 100 });
  assert.equal(sent.length, 4, 'every setSpan sends, a repeated one too');
});

test('the summary line names each side\'s calls, its SIT lock acquisitions where they differ, and says "so far" until the end', () => {
  assert.equal(summaryLine([{ op: 'zero', calls: 1, locks: 1 }, { op: 'punch', calls: 2, locks: 2 }], true), 'zero: 1 call; punch: 2 calls');
  assert.equal(summaryLine([{ op: 'zero', calls: 0, locks: 0 }, { op: 'punch', calls: 1, locks: 1 }], false), 'zero: 0 calls; punch: 1 call so far');
  assert.equal(summaryLine([{ op: 'zero', calls: 0, locks: 0 }, { op: 'punch', calls: 256, locks: 0 }], true),
    'zero: 0 calls; punch: 256 calls (0 SIT lock acquisitions)');
  assert.equal(summaryLine([{ op: 'zero', calls: 1, locks: 1 }, { op: 'punch', calls: 16384, locks: 1 }], true),
    'zero: 1 call; punch: 16,384 calls (1 SIT lock acquisition)');
  assert.equal(summaryLine([{ op: 'zero', calls: 1, locks: 1 }, { op: 'punch', calls: null, locks: null }], false), 'connecting…');
});

test('a side\'s figures are its one mode\'s counters, none before its hello', () => {
  assert.deepEqual(figuresOf(/** @type {any} */ ({ ready: false, modes: [], per: {} })), { calls: null, locks: null, blocks: null, done: false });
  const st = { ready: true, modes: ['m'], per: { m: { counters: { calls: 2, sitLockAcquisitions: 1, blocksInvalidated: 128 }, done: true } } };
  assert.deepEqual(figuresOf(/** @type {any} */ (st)), { calls: 2, locks: 1, blocks: 128, done: true });
  const early = { ready: true, modes: ['m'], per: { m: { counters: null, done: false } } };
  assert.deepEqual(figuresOf(/** @type {any} */ (early)), { calls: null, locks: null, blocks: null, done: false });
});

test('a side\'s socket query is the page\'s, at the step asked', () => {
  const q = 'image=demo&path=%2Fcases%2Fholes.bin&offset=0&length=786432&op=punch&before=zero+%2Fcases%2Fholes.bin+0+4096';
  const got = new URLSearchParams(sideQuery(q, 42));
  const want = new URLSearchParams(q);
  want.set('step', '42');
  assert.deepEqual([...got].sort(), [...want].sort());
  // A step already there is replaced, not repeated.
  assert.deepEqual(new URLSearchParams(sideQuery(`${q}&step=3`, 7)).getAll('step'), ['7']);
});

test('the address keeps the position: a whole number of slots walked, left out at 0', () => {
  const base = '?image=demo&path=%2Fcases%2Fholes.bin&offset=0';
  assert.equal(atOf(base), 0);
  assert.equal(atOf(`${base}&${AT}=100`), 100);
  for (const bad of ['-1', '1.5', 'x', '', '1e3', '9999999999999999']) assert.equal(atOf(`${base}&${AT}=${bad}`), 0, bad);
  // Round trip for any position, the page's other fields untouched.
  const r = rng(7);
  for (let i = 0; i < 200; i++) {
    const p = Math.floor(r() * 1e6);
    const s = withAt(base, p);
    assert.equal(atOf(`?${s}`), p);
    const q = new URLSearchParams(s);
    q.delete(AT);
    assert.equal(q.toString(), new URLSearchParams(base).toString());
    assert.equal(new URLSearchParams(withAt(`?${s}`, p)).getAll(AT).length, p > 0 ? 1 : 0, 'set, not added');
  }
  assert.equal(new URLSearchParams(withAt(`${base}&${AT}=5`, 0)).has(AT), false);
});

test('a call names NEW_ADDR and COMPRESS_ADDR, not their numbers, and says why it was made', () => {
  const a = served.contract.addr;
  assert.deepEqual(callWords([23552, 64, 'run-break']), { call: 'f2fs_invalidate_blocks(23552, 64)', why: 'run-break' });
  assert.deepEqual(callWords([a.new, 1, 'discontiguous']), { call: 'f2fs_invalidate_blocks(NEW_ADDR, 1)', why: 'discontiguous' });
  assert.deepEqual(callWords([a.compress, 2]), { call: 'f2fs_invalidate_blocks(COMPRESS_ADDR, 2)', why: '' });
});

test('a range of no slots has a start and an end, and says so', () => {
  const sent = [];
  const lock = new Lockstep([(m) => sent.push(m)]);
  lock.toggle();
  assert.equal(lock.playing, false, 'no span yet: nothing to play');
  lock.setSpan({ start: 192, n: 0 });
  assert.deepEqual(sent.at(-1), { type: 'reset' });
  assert.equal(whereText(lock), 'at the start (no slots in the range)');
  lock.end();
  assert.deepEqual(sent.at(-1), { type: 'end' });
  assert.equal(whereText(lock), 'at the end (no slots in the range)');
  lock.setSpan({ start: 0, n: 1024 });
  lock.seek(700);
  assert.equal(whereText(lock), '700 / 1,024 slots walked');
});
