// Unit tests of the figures to take away (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { caption, figureName, csvURL, slotClass, stripSVG, modeParam, SVG_MAX_COLUMNS } from '../js/figure.js';
import { NULL_ADDR, NEW_ADDR, COMPRESS_ADDR } from '../js/state.js';

const segnoOf = (/** @type {number} */ a) => (a < 1000 ? -1 : Math.floor((a - 1000) / 512));

test('caption and file names say what the figure shows', () => {
  assert.equal(caption({ name: 'demo', path: '/seed/bench64.bin', step: 2056, total: 65675, mode: 'both', first: 0, last: 16383 }),
    'zrviz · demo /seed/bench64.bin · slots 0…16,383 · step 2,056 of 65,675 · both');
  assert.equal(caption({ name: '', path: 'sandbox', step: 0, total: 9, mode: 'batched', first: 0, last: 4 }),
    'zrviz · sandbox · slots 0…4 · step 0 of 9 · batched');
  assert.equal(figureName('/seed/bench64.bin', 'slots', 2056, 'png'), 'bench64.bin-slots-step2056.png');
  assert.equal(figureName('/a b/c:d', 'sit', 1, 'png'), 'c_d-sit-step1.png');
  assert.equal(figureName('', 'strip', 0, 'svg'), 'run-strip-step0.svg');
});

test('csvURL is the page run as format=csv, none for the sandbox', () => {
  assert.equal(csvURL({ image: 'demo', path: '/seed/bench64.bin', offset: '0', length: '67108864', mode: 'both', keepSize: false }),
    '/api/images/demo/run?path=%2Fseed%2Fbench64.bin&offset=0&length=67108864&mode=both&format=csv');
  const u = new URL(csvURL({ image: 'my img', path: '/x', offset: 4096, length: 8192, mode: 'batched', keepSize: true, before: ['/x 0 4096', '/y 0 1'] }), 'http://h');
  assert.equal(u.pathname, '/api/images/my%20img/run');
  assert.deepEqual(u.searchParams.getAll('before'), ['/x 0 4096', '/y 0 1']);
  assert.equal(u.searchParams.get('keepSize'), 'true');
  assert.equal(u.searchParams.get('format'), 'csv');
  assert.equal(csvURL({ image: '', path: 'sandbox', offset: 0, length: 0, mode: 'both', keepSize: false }), '');
  assert.equal(modeParam(['per-block', 'batched']), 'both');
  assert.equal(modeParam(['batched']), 'batched');
});

test('slotClass names NULL, NEW, COMPRESS_ADDR and the segment of an address', () => {
  assert.equal(slotClass(NULL_ADDR, segnoOf), 'null');
  assert.equal(slotClass(NEW_ADDR, segnoOf), 'new');
  assert.equal(slotClass(COMPRESS_ADDR, segnoOf), 'compress');
  assert.equal(slotClass(1000 + 512 * 3 + 7, segnoOf), 'seg:3');
  assert.equal(slotClass(5, segnoOf), 'seg:-1');
});

test('stripSVG draws a rectangle per stretch, each slot in one', () => {
  // 2 in segment 0, 3 NEW, 1 NULL, 2 in segment 1.
  const slots = [1000, 1001, NEW_ADDR, NEW_ADDR, NEW_ADDR, NULL_ADDR, 1512, 1513];
  const svg = stripSVG({ slots, segnoOf, title: 'a <title> & more', first: 100 });
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /<\/svg>$/);
  assert.match(svg, /<title>a &lt;title&gt; &amp; more<\/title>/);
  const titles = [...svg.matchAll(/<rect [^>]*><title>([^<]*)<\/title><\/rect>/g)].map((m) => m[1]);
  assert.deepEqual(titles, ['slots 100–101: segment 0', 'slots 102–104: new', 'slots 105–105: null', 'slots 106–107: segment 1']);
  const widths = [...svg.matchAll(/<rect x="([\d.]+)" y="26" width="([\d.]+)"[^>]*><title>/g)].map((m) => Number(m[2]));
  assert.equal(Math.round(widths.reduce((a, b) => a + b, 0)), 1000);
  assert.match(svg, /slot 107<\/text>/);
});

test('stripSVG of a long range stays within SVG_MAX_COLUMNS rectangles', () => {
  const n = 100_000;
  const slots = new Uint32Array(n);
  for (let i = 0; i < n; i++) slots[i] = i % 2 ? NEW_ADDR : 1000 + i; // alternating: worst case
  const svg = stripSVG({ slots, segnoOf, title: 't', first: 0 });
  const rects = (svg.match(/<rect [^>]*><title>/g) || []).length;
  assert.ok(rects > 0 && rects <= SVG_MAX_COLUMNS, `${rects} rects`);
  const empty = stripSVG({ slots: [], segnoOf, title: 'none', first: 0 });
  assert.match(empty, /<\/svg>$/);
  assert.doesNotMatch(empty, /<title>slots/);
});
