// Unit tests of the slot panel (node --test): the strip's column stacks and merging, the
// overview's incremental counts against a full recount, and the panel's layout and hit testing.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Fake2D, installOffscreen } from './fake2d.js';
import {
  drawStrip, classify, Overview, SlotsView, LABEL_W, fontPx, NCLS, C_NULL, C_NEW, C_ADDR, C_BAD, C_FLASH, C_BRK,
} from '../js/slotsview.js';
import { RunState, NULL_ADDR, NEW_ADDR } from '../js/state.js';
import { RunMap } from '../js/colour.js';
import { OI, INK, fillsFor } from '../js/palette.js';
import { columnStart } from '../js/columns.js';

installOffscreen();

const FILLS = ['#a00000', '#00a000', '#0000a0'];
const HATCH = 'hatch';

/** Column stacks given as class counts per column. */
function colsOf(counts, keys = []) {
  return (x, a, b, cnt) => {
    cnt.fill(0);
    const c = counts(x, a, b);
    for (const [k, v] of Object.entries(c)) cnt[Number(k)] = v;
    return keys[x] ?? 0;
  };
}

test('a uniform strip is one rectangle whatever its length', () => {
  const ctx = new Fake2D();
  const cnt = new Uint32Array(NCLS);
  const col = colsOf((x, a, b) => ({ [C_ADDR]: b - a }));
  drawStrip(/** @type {any} */ (ctx), HATCH, FILLS, 10, 20, 300, 14, 1, 100_000, cnt, (x, a, b) => col(x, a, b, cnt));
  assert.deepEqual(ctx.rects(FILLS[0]), [[10, 20, 300, 14]]);
  assert.equal(ctx.ops.filter((o) => o.op === 'strokeRect').length, 1, 'one border');
});

test('each column stacks flash, invalid, address, NEW from the top, NULL below', () => {
  const ctx = new Fake2D();
  const cnt = new Uint32Array(NCLS);
  // 4 slots in 4 px: a flashing slot, an invalid one, an address, a NEW one.
  const by = [{ [C_FLASH]: 1 }, { [C_BAD]: 1 }, { [C_ADDR]: 1 }, { [C_NEW]: 1 }];
  drawStrip(/** @type {any} */ (ctx), HATCH, FILLS, 0, 0, 4, 8, 1, 4, cnt, (x) => { cnt.fill(0); for (const [k, v] of Object.entries(by[x])) cnt[Number(k)] = v; return 1; });
  assert.deepEqual(ctx.rects(OI.yellow), [[0, 0, 1, 8]]);
  assert.deepEqual(ctx.rects(OI.vermillion), [[1, 0, 1, 8]]);
  assert.deepEqual(ctx.rects(FILLS[1]), [[2, 0, 1, 8]]);
  assert.deepEqual(ctx.ops.filter((o) => o.op === 'fillRect' && o.fillStyle === HATCH).map((o) => o.args), [[3, 0, 1, 8]]);
});

test('a few addresses among many holes still get a quarter of the height', () => {
  const ctx = new Fake2D();
  const cnt = new Uint32Array(NCLS);
  drawStrip(/** @type {any} */ (ctx), HATCH, FILLS, 0, 0, 1, 20, 1, 1000, cnt, () => { cnt.fill(0); cnt[C_ADDR] = 1; cnt[C_NULL] = 999; return 2; });
  const [r] = ctx.rects(FILLS[2]);
  assert.ok(r && r[3] >= 5, `address stack ${r}`);
});

test('a run break gets a dark bar with a white halo at its column, at any zoom', () => {
  const ctx = new Fake2D();
  const cnt = new Uint32Array(NCLS);
  drawStrip(/** @type {any} */ (ctx), HATCH, FILLS, 0, 0, 100, 10, 1, 100, cnt, (x, a) => { cnt.fill(0); cnt[C_ADDR] = 1; cnt[C_BRK] = a === 40 ? 1 : 0; return 0; });
  const bars = ctx.rects(INK);
  assert.equal(bars.length, 1);
  assert.ok(Math.abs(bars[0][0] - (40 - 1)) < 1e-9, `bar at ${bars[0][0]}`);
});

test('wide slots show their boundaries as thin gaps', () => {
  const ctx = new Fake2D();
  const cnt = new Uint32Array(NCLS);
  drawStrip(/** @type {any} */ (ctx), HATCH, FILLS, 0, 0, 40, 10, 1, 5, cnt, () => { cnt.fill(0); cnt[C_ADDR] = 1; return 0; });
  const gaps = ctx.rects('#ffffff').filter((r) => r[2] === 1);
  assert.deepEqual(gaps.map((r) => r[0]), [7.5, 15.5, 23.5, 31.5]);
});

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

/** A state of n slots made of random extents (addresses in and out of the main area). */
function randomState(r, n) {
  const extents = [];
  const slots = new Uint32Array(n);
  for (let i = 0; i < n;) {
    const count = Math.min(n - i, 1 + Math.floor(r() * 40));
    const kind = ['addr', 'new', 'null', 'addr'][Math.floor(r() * 4)];
    const addr = r() < 0.1 ? 4000 + Math.floor(r() * 200) : 4096 + Math.floor(r() * 60000);
    if (kind !== 'null') extents.push(kind === 'addr' ? { index: i, count, state: kind, addr } : { index: i, count, state: kind });
    for (let k = 0; k < count; k++) slots[i + k] = kind === 'addr' ? addr + k : kind === 'new' ? NEW_ADDR : NULL_ADDR;
    i += count;
  }
  return {
    n, slots, extents, range: { start: 0, end: n }, initialComplete: true, changed: null,
    flash: new Map(), bad: new Set(), geometry: { mainBlkaddr: 4096, maxBlkaddr: 65536, blocksPerSeg: 512 },
  };
}

test('the overview counted from extents equals a recount of every column from the slots', () => {
  const r = rng(42);
  for (let k = 0; k < 60; k++) {
    const n = 50 + Math.floor(r() * 5000);
    const st = randomState(r, n);
    const pw = 1 + Math.floor(r() * Math.min(n, 700));
    for (const by of ['run', 'segment']) {
      const o = { colour: { by, runs: RunMap.fromExtents(st.extents, 0, n), geometry: st.geometry, segTypes: new Map() }, present: false, quiz: false, version: k };
      const K = fillsFor(by).length;
      const fast = new Overview();
      fast.update(/** @type {any} */ (st), o, pw, new Uint32Array(NCLS), K);
      const slow = new Overview();
      Object.assign(slow, { pw, n, counts: new Uint32Array(pw * NCLS), keys: new Int32Array(pw), brk: new Uint8Array(pw) });
      for (let x = 0; x < pw; x++) slow.recount(/** @type {any} */ (st), o, x, new Uint32Array(NCLS), K);
      assert.deepEqual(fast.counts, slow.counts, `case ${k} ${by}: counts`);
      assert.deepEqual(fast.keys, slow.keys, `case ${k} ${by}: colours`);
      assert.deepEqual(fast.brk, slow.brk, `case ${k} ${by}: breaks`);
    }
  }
});

test('the overview recounts only the columns holding changed slots', () => {
  const st = randomState(rng(3), 1000);
  const o = { colour: { by: 'segment', runs: null, geometry: st.geometry, segTypes: new Map() }, present: false, quiz: false, version: 1 };
  const ov = new Overview();
  ov.update(/** @type {any} */ (st), o, 100, new Uint32Array(NCLS), 8);
  st.slots[505] = NEW_ADDR;
  st.changed = [505];
  const before = ov.counts.slice();
  ov.update(/** @type {any} */ (st), o, 100, new Uint32Array(NCLS), 8);
  const cnt = new Uint32Array(NCLS);
  classify(/** @type {any} */ (st), o, columnStart(50, 1000, 100), columnStart(51, 1000, 100), cnt, 8);
  assert.deepEqual(ov.counts.subarray(50 * NCLS, 51 * NCLS), cnt);
  for (let x = 0; x < 100; x++) {
    if (x !== 50) assert.deepEqual(ov.counts.subarray(x * NCLS, (x + 1) * NCLS), before.subarray(x * NCLS, (x + 1) * NCLS), `column ${x} untouched`);
  }
});

test('classify counts each class and marks invalid addresses and run breaks', () => {
  const st = randomState(rng(1), 10);
  st.slots.set([NULL_ADDR, NEW_ADDR, 5000, 5001, 100, 70000, 9000, 9001, NEW_ADDR, 5002]);
  st.flash.set(2, 0);
  st.bad.add(3);
  const runs = RunMap.fromExtents([{ index: 2, count: 2, state: 'addr', addr: 5000 }, { index: 6, count: 2, state: 'addr', addr: 9000 }], 0, 10);
  const o = { colour: { by: 'run', runs, geometry: st.geometry, segTypes: new Map() } };
  const cnt = new Uint32Array(NCLS);
  classify(/** @type {any} */ (st), o, 0, 10, cnt, 8);
  assert.deepEqual([cnt[C_NULL], cnt[C_NEW], cnt[C_ADDR], cnt[C_BAD], cnt[C_FLASH], cnt[C_BRK]], [1, 2, 3, 3, 1, 1]);
});

/** The hello of a 10-slot run (the shape state.test.js uses). */
function hello() {
  return {
    v: 2, type: 'hello',
    run: { image: 'demo', path: '/a', ino: 5, size: '40960', offset: '0', length: '40960', keepSize: false, mode: 'both', modes: ['per-block', 'batched'], before: [] },
    totalSteps: 40, step: 0, playing: false, pace: '30', stepsPerSecond: 1.33, timeLeft: 30,
    geometry: { blockSize: 4096, blocksPerSeg: 512, segment0Blkaddr: 512, mainBlkaddr: 4096, maxBlkaddr: 65536, segsPerSec: 1 },
    range: { start: 0, end: 10 },
    chunks: [{ start: 0, len: 10, node: 'inode', kind: 'inode', nid: 5, missing: 0, step: 2, calls: [8, 1] }],
    markers: [], stops: [{ step: 0, kind: 'start', title: 't', text: 'x', terms: [] }],
    segments: [{ segno: 1, validBefore: 10, valid: 10, mapBefore: 'ff03', map: 'ff03', classBefore: 'dirty', class: 'dirty' }],
    segTypes: { 1: 2 },
    initial: { from: 0, next: 10, extents: [{ index: 0, count: 4, state: 'addr', addr: 4608 }, { index: 4, count: 2, state: 'null' }, { index: 6, count: 4, state: 'addr', addr: 9000 }] },
    changed: [],
    state: [
      { mode: 'per-block', step: 0, done: false, errno: '', cursor: 0, chunk: -1, pending: null, counters: { calls: 0 }, segments: [], calls: [], narration: '' },
      { mode: 'batched', step: 0, done: false, errno: '', cursor: 0, chunk: -1, pending: null, counters: { calls: 0 }, segments: [], calls: [], narration: '' },
    ],
    score: { right: 0, asked: 0 },
  };
}


test('the slot panel lays out the range, the zoom lane and the chunk rows, and hits map back to slots', () => {
  const st = new RunState();
  st.hello(hello());
  const v = new SlotsView(/** @type {any} */ ({}));
  v.opts.colour.runs = RunMap.fromExtents(st.extents, 0, st.n);
  v.opts.colour.geometry = st.geometry;
  const ctx = new Fake2D(900, 400);
  v.draw(st, { ctx: /** @type {any} */ (ctx), w: 900, h: 400, dpr: 1 }, 0);
  const L = v.layout;
  assert.equal(L.labelW, LABEL_W);
  assert.equal(L.stripW, 900 - LABEL_W - 6);
  assert.ok(L.ovY < L.zoomY && L.zoomY < L.rowsY, `range ${L.ovY}, zoom ${L.zoomY}, rows ${L.rowsY}`);
  assert.equal(L.zoomCount, 10, 'a 10-slot file shows whole in the zoom lane');
  assert.equal(L.rows, 1);
  assert.ok(ctx.texts().includes('range 0…9'));
  assert.ok(ctx.texts().includes('at the cursor'));
  // The whole-range strip: x maps proportionally to a slot.
  assert.deepEqual(v.hit(st, L.labelW + 0.5, L.ovY + 1), { slot: 0, where: 'range' });
  assert.deepEqual(v.hit(st, L.labelW + L.stripW - 0.5, L.ovY + 1), { slot: 9, where: 'range' });
  // The zoom lane: one cell per slot.
  assert.deepEqual(v.hit(st, L.labelW + 3 * v.cell + 1, L.zoomY + 2), { slot: 3, where: 'zoom' });
  // The chunk row.
  assert.deepEqual(v.hit(st, L.labelW + L.stripW / 2, L.rowsY + 1), { slot: 5, where: 'chunk' });
  assert.equal(v.hit(st, 10, L.ovY + 1), null, 'the label column is not a slot');
  // Everything changed so far is drawn.
  assert.deepEqual(st.changed, []);
});

test('presenter mode: large type and a wider label column', () => {
  assert.equal(fontPx({ present: false }, 11), 11);
  assert.equal(fontPx({ present: true }, 10), 18);
  assert.equal(fontPx({ present: true }, 20), 31);
  const st = new RunState();
  st.hello(hello());
  const v = new SlotsView(/** @type {any} */ ({}));
  v.opts.present = true;
  const ctx = new Fake2D(900, 500);
  v.draw(st, { ctx: /** @type {any} */ (ctx), w: 900, h: 500, dpr: 1 }, 0);
  assert.equal(v.layout.labelW, 190);
  assert.ok(ctx.texts().includes('whole range'));
  for (const o of ctx.ops.filter((x) => x.op === 'fillText')) assert.ok(parseFloat(o.font) >= 18, `${o.args[0]} in ${o.font}`);
});

test('nothing is drawn before the hello', () => {
  const v = new SlotsView(/** @type {any} */ ({}));
  const ctx = new Fake2D();
  v.draw(new RunState(), { ctx: /** @type {any} */ (ctx), w: 300, h: 150, dpr: 1 }, 0);
  assert.deepEqual(ctx.ops.map((o) => o.op), ['clearRect']);
});

/** A slot panel over the 10-slot hello, coloured by physical run. */
function zoomSetup() {
  const st = new RunState();
  st.hello(hello());
  const v = new SlotsView(/** @type {any} */ ({}));
  v.opts.colour = { by: 'run', runs: RunMap.fromExtents(st.extents, 0, st.n), geometry: st.geometry, segTypes: new Map() };
  return { st, v, fills: fillsFor('run') };
}

/** Draws the zoom lane of all 10 slots at (100, 50) in cells of `cell` px, 20 px high, ghost 8 px. */
function zoom(v, st, fills, cell, now = 0) {
  const ctx = new Fake2D(900, 300);
  v.drawZoom(/** @type {any} */ (ctx), st, HATCH, fills, 100, 50, 10, cell, 20, 8, 0, now, 0, true, 1);
  return ctx;
}

test('the zoom lane: one cell a slot, holes outlined, addresses in their run colour, the ghost below', () => {
  const { st, v, fills } = zoomSetup();
  const ctx = zoom(v, st, fills, 16);
  const cells = ctx.rects().filter((r) => r[1] === 50 && r[3] === 20);
  assert.equal(cells.length, 10);
  assert.deepEqual(cells.map((r) => r[0]), Array.from({ length: 10 }, (_, k) => 100 + k * 16 + 1));
  const fillOf = (k) => ctx.ops.find((o) => o.op === 'fillRect' && o.args[0] === 100 + k * 16 + 1 && o.args[1] === 50).fillStyle;
  assert.equal(fillOf(4), '#fff', 'a NULL slot is white');
  assert.equal(fillOf(0), fillOf(3), 'one run, one colour');
  assert.notEqual(fillOf(0), fillOf(6), 'the second run another');
  const outlines = ctx.ops.filter((o) => o.op === 'strokeRect').map((o) => o.args);
  assert.ok(outlines.some((r) => r[0] === 100 + 4 * 16 + 1.5 && r[1] === 50.5), 'the hole is outlined');
  assert.ok(outlines.some((r) => r[0] === 100 + 4 * 16 + 1.5 && r[1] === 50 + 20 + 3 + 0.5), 'and so is its ghost');
  const ghosts = ctx.rects().filter((r) => r[1] === 73 && r[3] === 8);
  assert.equal(ghosts.length, 8, 'eight addresses before the run, two holes');
});

test('the zoom lane marks where a physical run begins, through the cells and the ghost', () => {
  const { st, v, fills } = zoomSetup();
  const bars = zoom(v, st, fills, 16).rects(INK).filter((r) => r[3] === 20 + 8 + 6);
  assert.deepEqual(bars.map((r) => r[0]), [100 + 6 * 16 - 1 + 0.5]);
});

test('zoomed in far enough, each address cell names its block; every 8th slot gets an index tick', () => {
  const { st, v, fills } = zoomSetup();
  const t = zoom(v, st, fills, 40).texts();
  for (const a of ['4608', '4611', '9000', '9003']) assert.ok(t.includes(a), `${a} in ${t}`);
  assert.equal(t.filter((x) => x === '0').length, 1, 'a hole names no block: the one 0 is the index tick');
  assert.ok(t.includes('8'), 'an index tick at 8');
  assert.ok(!zoom(v, st, fills, 16).texts().includes('4608'), 'small cells carry no numbers');
});

test('a canvas too short for the index numbers keeps the ticks and drops the numbers, never cuts them', () => {
  const { st, v, fills } = zoomSetup();
  // The lane is at y 50, 20 high, its ghost 8 under it after 3: the ticks start at 82, their numbers at 85.
  v.layout.h = 85 + 10 - 1;
  const short = zoom(v, st, fills, 40);
  assert.ok(!short.texts().includes('8'), short.texts().join('|'));
  assert.ok(short.rects().some((r) => r[1] === 82 && r[3] === 3), 'the ticks stay');
  v.layout.h = 85 + 10 + 20;
  assert.ok(zoom(v, st, fills, 40).texts().includes('8'), 'with room, the numbers');
});

test('a slot just invalidated flashes yellow, fading over FLASH_MS', () => {
  const { st, v, fills } = zoomSetup();
  st.frame({ step: 5, full: false, events: [{ kind: 'slot', action: 'invalidate', slot: 0, step: 3 }], changed: [{ index: 0, count: 1, state: 'new' }], state: [] }, 1000);
  const flash = (now) => zoom(v, st, fills, 16, now).ops.find((o) => o.op === 'fillRect' && o.fillStyle === OI.yellow);
  const early = flash(1000);
  const late = flash(1000 + 10_000);
  assert.ok(early && early.alpha > 0.9, `alpha ${early && early.alpha}`);
  assert.ok(late && late.alpha === 0, `alpha ${late && late.alpha}`);
});

test('the chunk rows\' heading gives up its explanation rather than run into the count on a phone', () => {
  const chunks = Array.from({ length: 20 }, (_, i) => ({ start: i * 2, len: 2, node: `n${i}`, kind: 'direct', nid: 10 + i, missing: 0, step: i * 3, calls: [2, 1] }));
  for (const [w, want] of [[900, 'dnode chunks (one f2fs_do_zero_range call each)'], [380, 'dnode chunks (one call each)'], [250, 'dnode chunks']]) {
    const st = new RunState();
    st.hello({ ...hello(), range: { start: 0, end: 40 }, chunks, initial: { from: 0, next: 40, extents: [{ index: 0, count: 40, state: 'addr', addr: 4608 }] } });
    const v = new SlotsView(/** @type {any} */ ({}));
    const ctx = new Fake2D(w, 260);
    v.draw(st, { ctx: /** @type {any} */ (ctx), w, h: 260, dpr: 1 }, 0);
    const texts = ctx.texts();
    const count = texts.find((t) => /^chunks \d+–\d+ of 20$/.test(t));
    assert.ok(count, `${w} px: the count of the rows shown (${v.layout.rows} of 20) is drawn: ${texts}`);
    assert.ok(texts.includes(want), `${w} px: heading ${want}, drew ${texts.filter((t) => t.startsWith('dnode'))}`);
    assert.ok(want.length * 6 + 12 + count.length * 6 <= w - 4, `${w} px: the heading and the count overlap`);
  }
});
