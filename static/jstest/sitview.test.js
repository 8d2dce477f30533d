// Unit tests of the SIT panel (node --test): which segments are listed, the 512-bit maps painted
// bit for bit, what the tooltip says under a bit, and that an unchanged SIT is not redrawn.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Fake2D, installOffscreen } from './fake2d.js';
import { SITView } from '../js/sitview.js';
import { RunState } from '../js/state.js';

installOffscreen();

/** The hello of a 10-slot run whose one segment (1) has bits 0–7, 14 and 15 set. */
function hello(segments) {
  return {
    v: 2, type: 'hello',
    run: { image: 'demo', path: '/a', ino: 5, size: '40960', offset: '0', length: '40960', keepSize: false, mode: 'both', modes: ['per-block', 'batched'], before: [] },
    totalSteps: 40, step: 0, playing: false, pace: '30', stepsPerSecond: 1.33, timeLeft: 30,
    geometry: { blockSize: 4096, blocksPerSeg: 512, segment0Blkaddr: 512, mainBlkaddr: 4096, maxBlkaddr: 65536, segsPerSec: 1 },
    range: { start: 0, end: 10 },
    chunks: [{ start: 0, len: 10, node: 'inode', kind: 'inode', nid: 5, missing: 0, step: 2, calls: [8, 1] }],
    markers: [], stops: [{ step: 0, kind: 'start', title: 't', text: 'x', terms: [] }],
    segments,
    segTypes: { 1: 2 },
    initial: { from: 0, next: 10, extents: [{ index: 0, count: 10, state: 'addr', addr: 4608 }] },
    changed: [],
    state: [
      { mode: 'per-block', step: 0, done: false, errno: '', cursor: 0, chunk: -1, pending: null, counters: { calls: 0 }, segments: [], calls: [], narration: '' },
      { mode: 'batched', step: 0, done: false, errno: '', cursor: 0, chunk: -1, pending: null, counters: { calls: 0 }, segments: [], calls: [], narration: '' },
    ],
    score: { right: 0, asked: 0 },
  };
}

const SEG1 = { segno: 1, validBefore: 10, valid: 10, mapBefore: 'ff03', map: 'ff03', classBefore: 'dirty', class: 'dirty' };

/** Draws st on a fresh fake canvas. */
function draw(v, st, w = 700, h = 300, dpr = 1) {
  const ctx = new Fake2D(w, h);
  v.draw(st, { ctx: /** @type {any} */ (ctx), w, h, dpr });
  return ctx;
}

test('each segment gets its name, its valid counts and one map per mode, side by side', () => {
  const st = new RunState();
  st.hello(hello([SEG1]));
  const v = new SITView(/** @type {any} */ ({}));
  const ctx = draw(v, st);
  const t = ctx.texts();
  assert.ok(t.includes('seg 1'), t.join('|'));
  assert.ok(t.includes('valid 10 · 10'));
  assert.ok(t.includes('per-block mode') && t.includes('batched mode'));
  const puts = ctx.ops.filter((o) => o.op === 'putImageData');
  assert.equal(puts.length, 2);
  const L = v.layout;
  assert.equal(L.mapX.length, 2);
  assert.ok(L.mapX[1] >= L.mapX[0] + L.cell * L.cols + 12, 'the maps do not overlap');
  assert.deepEqual(puts.map((o) => o.args[1]), L.mapX.map((x) => Math.round(x)));
});

test('the map is painted bit for bit, MSB first: set bits dark, clear bits white', () => {
  const st = new RunState();
  st.hello(hello([SEG1]));
  const v = new SITView(/** @type {any} */ ({}));
  const ctx = draw(v, st);
  const img = ctx.ops.find((o) => o.op === 'putImageData').args[0];
  const c = Math.round(v.layout.cell);
  const cols = v.layout.cols;
  const px = (k) => img.data[((Math.floor(k / cols) * c) * img.width + (k % cols) * c) << 2];
  for (let k = 0; k < 8; k++) assert.equal(px(k), 51, `bit ${k} set`);
  for (const k of [8, 9, 13, 16, 511]) assert.equal(px(k), 255, `bit ${k} clear`);
  for (const k of [14, 15]) assert.equal(px(k), 51, `bit ${k} set`);
});

test('the tooltip names the segment, the block under the pointer and its bit in each mode', () => {
  const st = new RunState();
  st.hello(hello([SEG1]));
  const v = new SITView(/** @type {any} */ ({}));
  draw(v, st);
  const L = v.layout;
  const at = (k) => v.hit(st, L.mapX[0] + (k % L.cols) * L.cell + L.cell / 2, L.top + 2 + Math.floor(k / L.cols) * L.cell + L.cell / 2);
  const s15 = at(15);
  assert.match(s15, /^segment 1\n/);
  assert.match(s15, new RegExp(`block offset 15, address ${4096 + 512 + 15}`));
  assert.match(s15, /per-block: valid 10 → 10 of 512, .*bit set/);
  assert.match(at(9), /bit clear/);
  assert.equal(v.hit(st, 0, L.top + 100 * L.rowH), '', 'below the last segment: nothing');
});

test('an unchanged SIT is not redrawn; a run that touches no segment says so', () => {
  const st = new RunState();
  st.hello(hello([SEG1]));
  const v = new SITView(/** @type {any} */ ({}));
  const ctx = new Fake2D(700, 300);
  ctx.canvas.width = 700;
  v.draw(st, { ctx: /** @type {any} */ (ctx), w: 700, h: 300, dpr: 1 });
  const n = ctx.ops.length;
  v.draw(st, { ctx: /** @type {any} */ (ctx), w: 700, h: 300, dpr: 1 });
  assert.equal(ctx.ops.length, n, 'the second frame drew nothing');
  const empty = new RunState();
  empty.hello(hello([]));
  const t = draw(new SITView(/** @type {any} */ ({})), empty).texts();
  assert.ok(t.includes('the run touches no segment: no block is invalidated'), t.join('|'));
});

test('presenter mode lists only the segments whose rows fit: one legible map on a short projector panel, never a flat bar', () => {
  const st = new RunState();
  st.hello(hello([SEG1, { ...SEG1, segno: 2 }, { ...SEG1, segno: 3 }]));
  for (let h = 110; h <= 420; h += 10) {
    const v = new SITView(/** @type {any} */ ({}));
    v.opts = /** @type {any} */ ({ present: true, version: 0 });
    draw(v, st, 530, h);
    const L = v.layout;
    const shown = v.shown[1] - v.shown[0] + 1;
    const mapH = L.cell * (512 / L.cols);
    assert.ok(shown >= 1 && shown <= 3, `h=${h}: ${shown} rows`);
    assert.ok(L.top + shown * L.rowH <= h, `h=${h}: ${shown} rows of ${L.rowH} px under ${L.top} px of heads overflow`);
    // A row holds its three label lines (name, per-block and batched counts at 19 px) and its map
    // with the status word under it.
    assert.ok(L.rowH >= 3 * 19 + 12 && L.rowH >= mapH + 18 + 8, `h=${h}: a ${L.rowH} px row for a ${mapH} px map`);
  }
  // A 1280×720 projector's SIT canvas (about 150 px): one segment, 5 px bits (flat 2 px bars before).
  const v = new SITView(/** @type {any} */ ({}));
  v.opts = /** @type {any} */ ({ present: true, version: 0 });
  draw(v, st, 530, 150);
  assert.deepEqual(v.shown, [1, 1]);
  assert.ok(v.layout.cell >= 5, `cell ${v.layout.cell}`);
});
