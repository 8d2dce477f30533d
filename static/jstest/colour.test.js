// Unit tests of address colouring (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunMap, colourIndex, colourBy, contrast, textOn, UNKNOWN_LOG } from '../js/colour.js';

const NEW = 0xffffffff;
const isAddr = (v) => v !== 0 && v !== NEW && v !== 0xfffffffe;

test('bench64 is three physical runs, across its 17 dnode chunks', () => {
  // /seed/bench64.bin: 34304…34815, 6144…18943, 19456…22527 (imgio/demo/README.md; kernel case 1), one
  // extent per dnode chunk as the server pages them.
  const runs = [[34304, 512], [6144, 12800], [19456, 3072]];
  const ext = [];
  let index = 0;
  for (const [a, n] of runs) {
    for (let k = 0; k < n;) {
      const chunkEnd = index < 873 ? 873 : 873 + Math.ceil((index - 872) / 1018) * 1018;
      const c = Math.min(n - k, chunkEnd - index);
      ext.push({ index, count: c, state: 'addr', addr: a + k });
      index += c;
      k += c;
    }
  }
  const m = RunMap.fromExtents(ext, 0, 16384);
  assert.deepEqual(Array.from(m.starts), [0, 512, 13312]);
  assert.equal(m.runAt(0), 0);
  assert.equal(m.runAt(511), 0);
  assert.equal(m.runAt(512), 1);
  assert.equal(m.runAt(16383), 2);
  assert.equal(m.breakIn(0, 512), false, 'the first run starting is no break');
  assert.equal(m.breakIn(500, 513), true);
  assert.equal(m.breakIn(513, 13312), false);
  assert.equal(m.breakIn(13312, 13313), true);
});

test('NEW and NULL slots do not break a run; a jump does', () => {
  // prealloc-like: 24 written pages in one run with NEW_ADDR between them, then a jump.
  const slots = new Uint32Array([0, 500, NEW, NEW, 501, 0, 502, 900, 901, 0xfffffffe, 902, 400]);
  const m = RunMap.fromSlots(slots, isAddr);
  assert.deepEqual(Array.from(m.starts), [1, 7, 11]);
  assert.equal(m.runAt(0), -1, 'before the first address');
  assert.equal(m.runAt(5), 0);
  assert.equal(m.runAt(10), 1, 'COMPRESS_ADDR is no address and breaks nothing');
  // The same from extents, offset by a base.
  const ext = [
    { index: 101, count: 1, state: 'addr', addr: 500 }, { index: 102, count: 2, state: 'new' },
    { index: 104, count: 1, state: 'addr', addr: 501 }, { index: 106, count: 1, state: 'addr', addr: 502 },
    { index: 107, count: 2, state: 'addr', addr: 900 }, { index: 109, count: 1, state: 'compress' },
    { index: 110, count: 1, state: 'addr', addr: 902 }, { index: 111, count: 1, state: 'addr', addr: 400 },
  ];
  assert.deepEqual(Array.from(RunMap.fromExtents(ext, 100, 12).starts), [1, 7, 11]);
  // Clipped to a range that starts inside a run: the run starts at the range's first slot.
  assert.deepEqual(Array.from(RunMap.fromExtents(ext, 108, 4).starts), [0, 3]);
});

test('fromExtents and fromSlots agree on random maps', () => {
  let seed = 11;
  const r = () => { seed = (seed * 1103515245 + 12345) >>> 0; return seed / 4294967296; };
  for (let k = 0; k < 300; k++) {
    const n = 1 + Math.floor(r() * 300);
    const slots = new Uint32Array(n);
    let a = 5000;
    for (let i = 0; i < n; i++) {
      const x = r();
      if (x < 0.15) slots[i] = 0;
      else if (x < 0.3) slots[i] = NEW;
      else { if (r() < 0.1) a += 1 + Math.floor(r() * 50); slots[i] = a++; }
    }
    const ext = [];
    for (let i = 0; i < n; i++) {
      const v = slots[i];
      const st = v === 0 ? 'null' : v === NEW ? 'new' : 'addr';
      const last = ext[ext.length - 1];
      if (last && last.state === st && (st !== 'addr' || last.addr + last.count === v)) last.count++;
      else ext.push(st === 'addr' ? { index: i, count: 1, state: st, addr: v } : { index: i, count: 1, state: st });
    }
    assert.deepEqual(Array.from(RunMap.fromExtents(ext, 0, n).starts), Array.from(RunMap.fromSlots(slots, isAddr).starts), `case ${k}`);
  }
});

test('colour index by run, segment and log type', () => {
  const runs = new RunMap(Int32Array.from([0, 10, 20, 30, 40]));
  const geometry = { mainBlkaddr: 4096, maxBlkaddr: 65536, blocksPerSeg: 512 };
  const segTypes = new Map([[4, 1], [5, 3]]);
  const c = { by: 'run', runs, geometry, segTypes };
  assert.deepEqual([0, 9, 10, 35, 45].map((off) => colourIndex(c, off, 0, 4)), [0, 0, 1, 3, 0]);
  // Neighbouring runs always differ.
  for (let k = 1; k < 5; k++) assert.notEqual(colourIndex(c, k * 10, 0, 4), colourIndex(c, k * 10 - 1, 0, 4));
  c.by = 'segment';
  assert.equal(colourIndex(c, 0, 4096 + 4 * 512, 2), 0);
  assert.equal(colourIndex(c, 0, 4096 + 5 * 512 + 511, 2), 1);
  c.by = 'log';
  assert.equal(colourIndex(c, 0, 4096 + 4 * 512, 2), 1);
  assert.equal(colourIndex(c, 0, 4096 + 5 * 512, 2), 3);
  assert.equal(colourIndex(c, 0, 4096 + 6 * 512, 2), UNKNOWN_LOG);
  c.by = 'run';
  c.runs = null;
  assert.equal(colourIndex(c, 25, 0, 4), 0, 'runs not known yet');
});

test('colourBy keeps known choices only', () => {
  assert.equal(colourBy('segment'), 'segment');
  assert.equal(colourBy('log'), 'log');
  for (const x of [null, undefined, '', 'hue', 'RUN']) assert.equal(colourBy(x), 'run');
});

test('contrast is WCAG 2\'s; text on a fill picks the readable ink', () => {
  assert.ok(Math.abs(contrast('#000000', '#ffffff') - 21) < 1e-9);
  assert.ok(Math.abs(contrast('#7a8591', '#ffffff') - 3.7) < 0.1, 'the muted grey the sandbox flagged');
  assert.equal(textOn('#332288', '#1d232a'), '#ffffff');
  assert.equal(textOn('#f0e442', '#1d232a'), '#1d232a');
});

test('the physical runs of the shared vectors (core.RunStarts has the same)', async () => {
  const { readFile } = await import('node:fs/promises');
  const v = JSON.parse(await readFile(new URL('./testdata/runs.json', import.meta.url), 'utf8'));
  assert.ok(v.cases.length >= 5);
  for (const c of v.cases) {
    const base = 0;
    const n = Math.max(0, ...c.extents.map((e) => e.index + e.count), ...c.spans.map((s) => s[1]));
    const m = RunMap.fromExtents(c.extents, base, n, c.spans);
    assert.deepEqual(Array.from(m.starts).map((o) => o + base), c.want, c.name);
    // The same with the range starting further on (offsets are relative to it).
    const b2 = Math.min(...c.spans.map((s) => s[0]), n);
    if (b2 > 0 && b2 < n) {
      const m2 = RunMap.fromExtents(c.extents, b2, n - b2, c.spans);
      assert.deepEqual(Array.from(m2.starts).map((o) => o + b2), c.want, `${c.name}, base ${b2}`);
    }
  }
});
