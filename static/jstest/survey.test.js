// Unit tests of the survey page's pure parts (node --test), on the demo's survey as
// `zrviz survey --json` prints it (testdata/survey.json; survey's TestJSFixture keeps it current).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  ops, COLUMNS, estimateMs, parseCost, saved, savedMs, outcome, sortFiles, cumulativeSaved,
  histogramSVG, plotSVG, playerURL, progressText, short, esc, pathHTML,
} from '../js/survey.js';
import { MODEL } from '../js/cost.js';

const survey = JSON.parse(readFileSync(new URL('./testdata/survey.json', import.meta.url), 'utf8'));
const seed = { perCall: survey.costs.perCallMicros, perBlock: survey.costs.perBlockMicros };

test('the estimate is the seed\'s two measurements, as cost.js fits them', () => {
  assert.ok(Math.abs(estimateMs(16384, 16384, seed) - 16.436) < 1e-9);
  assert.ok(Math.abs(estimateMs(19, 16384, seed) - 10.011) < 1e-9);
  assert.ok(Math.abs(seed.perCall / 1000 - MODEL.b) < 1e-12 && Math.abs(seed.perBlock / 1000 - MODEL.a) < 1e-12);
  assert.match(survey.costs.source, /16,?384 .*16\.436 ms.*19 calls in 10\.011 ms/);
});

test('a typed cost is a number ≥ 0, else the default', () => {
  for (const [s, want] of [['0.5', 0.5], [' 2 ', 2], ['0', 0], ['', 7], ['-1', 7], ['abc', 7], ['Infinity', 7], ['1e400', 7]]) {
    assert.equal(parseCost(s, 7), want, JSON.stringify(s));
  }
});

test('every total the page prints is the sum of the rows it lists', () => {
  for (const op of ops()) {
    for (const m of ['per-block', 'batched']) {
      const t = survey.totals.ops[op][m];
      let calls = 0, blocks = 0, errnos = 0, files = 0;
      for (const f of survey.files) {
        const r = f.ops[op][m];
        if (r.error) continue;
        files++; calls += r.calls; blocks += r.blocksInvalidated; if (r.errno) errnos++;
      }
      assert.deepEqual([t.files, t.calls, t.blocksInvalidated, t.errnos], [files, calls, blocks, errnos], `${op} ${m}`);
      assert.ok(Math.abs(t.estimatedMs - estimateMs(calls, blocks, seed)) < 1e-6, `${op} ${m} estimate`);
    }
  }
  let top = survey.files.map((f) => ({ path: f.path, s: saved(f, 'zero') })).filter((x) => x.s > 0);
  top.sort((a, b) => b.s - a.s || (a.path < b.path ? -1 : 1));
  assert.deepEqual(survey.top.map((n) => n.path), top.slice(0, survey.top.length).map((x) => x.path));
  assert.equal(saved(survey.files.find((f) => f.path === '/seed/bench64.bin'), 'zero'), 16365);
});

test('the histogram holds every block the zeros invalidate; the plot ends at the total saved', () => {
  const z = survey.totals.ops.zero['per-block'];
  assert.equal(survey.histogram.reduce((a, b) => a + b.blocks, 0), z.blocksInvalidated);
  assert.equal(survey.histogram.reduce((a, b) => a + b.runs, 0), z.runs);
  assert.deepEqual(survey.histogram.map((b) => b.label), ['1', '2–3', '4–7', '8–15', '16–31', '32–63', '64–127', '128–255', '256–511', '512+']);
  const pts = cumulativeSaved(survey.files, 'zero');
  assert.equal(pts.at(-1).saved, z.calls - survey.totals.ops.zero.batched.calls);
  for (let i = 1; i < pts.length; i++) assert.ok(pts[i].size >= pts[i - 1].size && pts[i].saved > pts[i - 1].saved);
  const h = histogramSVG(survey.histogram);
  assert.match(h, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.equal((h.match(/<rect [^>]*fill="#0072b2"/g) || []).length, 10);
  assert.ok(!/style=/.test(h), 'presentation attributes only: the CSP refuses inline styles');
  const p = plotSVG(pts);
  assert.match(p, /<path d="M[^"]+"/);
  assert.match(plotSVG([]), /no file saves a call/);
});

test('sorting by any column orders by its value, ties by path, in either direction', () => {
  for (const col of COLUMNS) {
    for (const desc of [false, true]) {
      const rows = sortFiles(survey.files, col.key, desc, 'zero', seed);
      assert.equal(rows.length, survey.files.length);
      for (let i = 1; i < rows.length; i++) {
        const a = col.value(rows[i - 1], 'zero', seed), b = col.value(rows[i], 'zero', seed);
        if (a === b) assert.ok(rows[i - 1].path < rows[i].path, `${col.key} tie`);
        else assert.ok(desc ? a > b : a < b, `${col.key} ${desc ? 'desc' : 'asc'} at ${i}`);
      }
    }
  }
  assert.equal(sortFiles(survey.files, 'saved', true, 'zero', seed)[0].path, '/seed/bench64.bin');
  assert.ok(savedMs(survey.files.find((f) => f.path === '/seed/bench64.bin'), 'zero', seed) > 6.4);
});

test('a row links to the player at its file, for the operation shown', () => {
  const f = { path: '/a b/c+d', size: 8192 };
  assert.equal(playerURL('demo', f, 'zero'), '/images/demo/run?path=%2Fa+b%2Fc%2Bd&offset=0&length=8192&mode=both');
  assert.equal(playerURL('demo', f, 'punch'), '/images/demo/run?path=%2Fa+b%2Fc%2Bd&op=punch&offset=0&length=8192&mode=both');
  assert.equal(playerURL('my id', f, 'truncate'), '/images/my%20id/run?path=%2Fa+b%2Fc%2Bd&op=truncate&size=0&mode=both');
});

test('outcomes, progress and numbers read as the page shows them', () => {
  assert.equal(outcome({ errno: '', error: '' }), '');
  assert.equal(outcome({ errno: 'EOPNOTSUPP' }), 'EOPNOTSUPP');
  assert.equal(outcome({ error: 'core: not modelled: x', refused: true }), 'refused');
  assert.equal(outcome({ error: 'imgio: corrupt' }), 'error');
  assert.equal(progressText({ state: 'running', done: 1234, total: 10001 }), '1,234 of 10,001 files (12%)');
  assert.equal(progressText({ state: 'listing', done: 0, total: 0 }), 'listing the files…');
  assert.equal(progressText({ state: 'failed', done: 0, total: 0, error: 'busy' }), 'failed: busy');
  assert.equal(short(999), '999');
  assert.equal(short(1234), '1.2k');
  assert.equal(short(2500000), '2.5M');
  assert.equal(esc('<a href="x">&\''), '&lt;a href=&quot;x&quot;&gt;&amp;&#39;');
  assert.equal(pathHTML('/a<b/c'), '/<wbr>a&lt;b/<wbr>c');
});
