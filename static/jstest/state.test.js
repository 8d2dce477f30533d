// Unit tests of the player's model (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  RunState, overlayExtents, writeExtents, slotValue, groupDigits, hexMap, testBit, countStates,
  NULL_ADDR, NEW_ADDR,
} from '../js/state.js';

/** Expands extents into slot values over [lo, hi) (NULL where no extent says). */
function expand(ext, lo, hi) {
  const s = new Uint32Array(hi - lo);
  writeExtents(s, lo, ext);
  return Array.from(s);
}

/** A tiny seeded generator (mulberry32), so failures repeat. */
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

/** Random sorted, non-overlapping extents over [0, n). */
function randomExtents(r, n) {
  const out = [];
  for (let i = 0; i < n;) {
    const count = 1 + Math.floor(r() * 20);
    if (r() < 0.6) {
      const st = ['addr', 'new', 'null', 'compress'][Math.floor(r() * 4)];
      const e = { index: i, count: Math.min(count, n - i), state: st };
      if (st === 'addr') e.addr = 4096 + Math.floor(r() * 100000);
      out.push(e);
    }
    i += count;
  }
  return out;
}

test('overlayExtents lays changes over a base, slot for slot', () => {
  const r = rng(7);
  for (let k = 0; k < 500; k++) {
    const n = 1 + Math.floor(r() * 200);
    const base = randomExtents(r, n);
    const changes = randomExtents(r, n);
    const want = expand(base, 0, n);
    const ch = expand(changes, 0, n);
    const covered = new Uint8Array(n);
    writeExtents(new Uint32Array(n), 0, changes, covered);
    for (let i = 0; i < n; i++) if (covered[i]) want[i] = ch[i];
    const got = overlayExtents(base, changes);
    assert.deepEqual(expand(got, 0, n), want, `case ${k}`);
    for (let i = 1; i < got.length; i++) assert.ok(got[i].index >= got[i - 1].index + got[i - 1].count, 'sorted, no overlap');
  }
});

test('slotValue and writeExtents spell addresses out', () => {
  assert.equal(slotValue({ index: 10, count: 5, state: 'addr', addr: 100 }, 12), 102);
  assert.equal(slotValue({ index: 0, count: 1, state: 'new' }, 0), NEW_ADDR);
  assert.deepEqual(expand([{ index: 2, count: 2, state: 'addr', addr: 7 }], 0, 5), [0, 0, 7, 8, 0]);
});

test('hexMap and testBit read f2fs bitmaps MSB first', () => {
  const m = hexMap('80' + '00'.repeat(62) + '01');
  assert.ok(testBit(m, 0));
  assert.ok(!testBit(m, 1));
  assert.ok(testBit(m, 511));
});

test('groupDigits keeps big decimal strings exact', () => {
  assert.equal(groupDigits('9223372036854775807'), '9,223,372,036,854,775,807');
  assert.equal(groupDigits('-1234'), '-1,234');
  assert.equal(groupDigits(16384), '16,384');
});

/** A hello as the server sends it for a small run. */
function hello(extra = {}) {
  return {
    v: 2, type: 'hello',
    run: { image: 'demo', path: '/a', ino: 5, size: '40960', offset: '0', length: '40960', keepSize: false, mode: 'both', modes: ['per-block', 'batched'], before: [] },
    totalSteps: 40, step: 0, playing: false, pace: '30', stepsPerSecond: 1.33, timeLeft: 30,
    geometry: { blockSize: 4096, blocksPerSeg: 512, segment0Blkaddr: 512, mainBlkaddr: 4096, maxBlkaddr: 65536, segsPerSec: 1 },
    range: { start: 0, end: 10 },
    chunks: [{ start: 0, len: 10, node: 'inode', kind: 'inode', nid: 5, missing: 0, step: 2, calls: [8, 1] }],
    markers: [], stops: [{ step: 0, kind: 'start', title: 't', text: 'x', terms: [] }],
    segments: [{ segno: 1, validBefore: 10, valid: 10, mapBefore: 'ff', map: 'ff', classBefore: 'dirty', class: 'dirty' }],
    segTypes: { 1: 2 },
    initial: { from: 0, next: 6, extents: [{ index: 0, count: 4, state: 'addr', addr: 4608 }, { index: 4, count: 2, state: 'null' }] },
    changed: [],
    state: [
      { mode: 'per-block', step: 0, done: false, errno: '', cursor: 0, chunk: -1, pending: null, counters: { calls: 0 }, segments: [], calls: [], narration: '' },
      { mode: 'batched', step: 0, done: false, errno: '', cursor: 0, chunk: -1, pending: null, counters: { calls: 0 }, segments: [], calls: [], narration: '' },
    ],
    score: { right: 0, asked: 0 },
    ...extra,
  };
}

test('a hello, pages of the initial map and frames give the server’s slots', () => {
  const st = new RunState();
  st.hello(hello());
  assert.equal(st.info.offset, '0');
  assert.equal(st.per['per-block'].segments.get(1).type, 2);
  assert.ok(!st.initialComplete);
  // A frame changes slots 0 and 1 before the rest of the initial map arrives.
  st.frame({ step: 5, full: false, events: [{ kind: 'slot', action: 'invalidate', slot: 0, step: 3 }], changed: [{ index: 0, count: 2, state: 'new' }], state: [] }, 0);
  assert.deepEqual(Array.from(st.slots.slice(0, 4)), [NEW_ADDR, NEW_ADDR, 4610, 4611]);
  assert.ok(st.flash.has(0));
  // The last page: it must not undo the change.
  st.addInitial({ from: 6, next: 10, extents: [{ index: 6, count: 4, state: 'addr', addr: 9000 }] });
  assert.ok(st.initialComplete);
  assert.deepEqual(Array.from(st.slots), [NEW_ADDR, NEW_ADDR, 4610, 4611, NULL_ADDR, NULL_ADDR, 9000, 9001, 9002, 9003]);
  assert.ok(!st.extentsClean || expand(st.extents, 0, 10).every((v, i) => v === st.slots[i]));
  // A full frame (a seek back) starts again from the initial map.
  st.frame({ step: 1, full: true, events: [], changed: [{ index: 1, count: 1, state: 'new' }], state: [] }, 0);
  assert.deepEqual(Array.from(st.slots.slice(0, 3)), [4608, NEW_ADDR, 4610]);
  assert.ok(st.extentsClean);
  assert.deepEqual(expand(st.extents, 0, 10), Array.from(st.slots));
  // A repeated page is ignored.
  st.addInitial({ from: 6, next: 10, extents: [{ index: 6, count: 4, state: 'null' }] });
  assert.equal(st.slots[6], 9000);
});

test('states: counters, segments classed by the server, pending run, errors marked', () => {
  const st = new RunState();
  st.hello(hello({ initial: { from: 0, next: 10, extents: [{ index: 0, count: 10, state: 'addr', addr: 4608 }] } }));
  st.frame({
    step: 7, full: false, changed: [],
    events: [{ kind: 'error', action: 'sit-bit', slot: 4, step: 7 }],
    state: [{ mode: 'batched', step: 4, done: true, errno: 'EFSCORRUPTED', message: 'Inconsistent error blkaddr:4612, sit bitmap:0', cursor: 4, chunk: 0,
      pending: { start: 4608, len: 3, slot: 0 }, counters: { calls: 1 }, calls: [{ start: 4608, len: 3, reason: 'after-error' }],
      segments: [{ segno: 1, validBefore: 10, valid: 7, map: '1f', mapBefore: 'ff', class: 'dirty', classBefore: 'dirty' }], narration: 'n' }],
  }, 0);
  const bt = st.per.batched;
  assert.equal(bt.errno, 'EFSCORRUPTED');
  assert.equal(st.runStart('batched'), 0);
  assert.deepEqual(bt.calls, [[4608, 3, 'after-error']]);
  assert.equal(bt.segments.get(1).valid, 7);
  assert.equal(bt.segments.get(1).status, 'dirty');
  assert.ok(st.bad.has(4));
  assert.equal(st.stopAt(0), 0);
});

test('countStates counts slots by state, uncovered slots as holes', () => {
  const ext = [{ index: 2, count: 3, state: 'addr', addr: 100 }, { index: 5, count: 2, state: 'new' },
    { index: 8, count: 1, state: 'compress' }, { index: 9, count: 4, state: 'null' }];
  assert.deepEqual(countStates(ext, 0, 12), { addr: 3, new: 2, null: 6, compress: 1 });
  assert.deepEqual(countStates(ext, 3, 6), { addr: 2, new: 1, null: 0, compress: 0 });
  assert.deepEqual(countStates([], 10, 20), { addr: 0, new: 0, null: 10, compress: 0 });
  // Random maps agree with the slots they spell.
  const r = rng(3);
  for (let k = 0; k < 200; k++) {
    const n = 1 + Math.floor(r() * 100);
    const e = randomExtents(r, n);
    const slots = expand(e, 0, n);
    const c = countStates(e, 0, n);
    assert.equal(c.addr + c.new + c.null + c.compress, n);
    assert.equal(c.new, slots.filter((v) => v === NEW_ADDR).length);
  }
});

test('the physical runs, the before/after slot counts and SIT totals of a run', () => {
  const st = new RunState();
  // 4608…4611, two holes, then (last page) 9000…9003: two runs, the holes between do not break one.
  st.hello(hello());
  assert.equal(st.runs, null, 'runs wait for the whole initial map');
  assert.equal(st.slotStates(), null);
  st.addInitial({ from: 6, next: 10, extents: [{ index: 6, count: 4, state: 'addr', addr: 4612 }] });
  assert.deepEqual(Array.from(st.runs.starts), [0], '4608…4611 and 4612…4615 are one run across the holes');
  st.hello(hello());
  st.addInitial({ from: 6, next: 10, extents: [{ index: 6, count: 4, state: 'addr', addr: 9000 }] });
  assert.deepEqual(Array.from(st.runs.starts), [0, 6]);
  st.frame({ step: 3, full: true, events: [], changed: [{ index: 0, count: 6, state: 'new' }],
    state: [{ mode: 'batched', segments: [{ segno: 1, validBefore: 10, valid: 6, mapBefore: 'ff', map: '0f', classBefore: 'dirty', class: 'dirty' }] }] }, 0);
  assert.deepEqual(st.slotStates(), {
    before: { addr: 8, new: 0, null: 2, compress: 0 },
    now: { addr: 4, new: 6, null: 0, compress: 0 },
  });
  assert.deepEqual(st.sitTotals('batched'), { before: 10, now: 6, segments: 1 });
  assert.deepEqual(st.sitTotals('per-block'), { before: 10, now: 10, segments: 1 });
  assert.deepEqual(st.sitTotals('none'), { before: 0, now: 0, segments: 0 });
  // The runs stay those of the map before the run, whatever it does.
  assert.deepEqual(Array.from(st.runs.starts), [0, 6]);
});

test('a full state starts the SIT again from the hello: a seek back before the first update', () => {
  // The bug of issue 16: Home after End kept the segments the end had changed.
  const st = new RunState();
  st.hello(hello());
  const at = (step, full, segs, sit) => st.frame({ step, full, events: [], changed: [],
    state: [{ mode: 'batched', step, counters: { calls: 1 }, calls: [{ start: 4608, len: 3, reason: 'end-of-chunk' }], segments: segs, sit }] }, 0);
  at(30, true, [{ segno: 1, validBefore: 10, valid: 0, map: '00', mapBefore: 'ff', class: 'prefree', classBefore: 'dirty' }],
    { before: 10, valid: 0, touched: 1, segments: 1 });
  assert.equal(st.per.batched.segments.get(1).valid, 0);
  at(0, true, [], { before: 10, valid: 10, touched: 0, segments: 1 });
  const s = st.per.batched.segments.get(1);
  assert.equal(s.valid, 10);
  assert.equal(s.status, 'dirty');
  assert.deepEqual(Array.from(s.map.slice(0, 1)), [0xff]);
  // The totals are the server's (exact past the listed segments), the calls its latest.
  assert.deepEqual(st.sitTotals('batched'), { before: 10, now: 10, segments: 1 });
  assert.deepEqual(st.per.batched.calls, [[4608, 3, 'end-of-chunk']]);
  // Newest activity on top: the segments of the latest calls first.
  assert.deepEqual(st.segmentsByActivity(), [1]);
});
