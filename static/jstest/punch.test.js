// Unit tests of punch hole and truncate in the player's modules (node --test, issue 28): the run
// query carries op (and size for a truncate), the permalink and the chain keep the call, the call
// log names the new reasons, the run form shows the call's fields, released and skipped slots are
// marked as a zero's are.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setRunQuery } from '../js/links.js';
import { permalinkSearch } from '../js/permalink.js';
import { opLine, opWords, nextRange, chainURL, isPlayed, playedNext } from '../js/chain.js';
import { callWhy } from '../js/calllog.js';
import { csvURL } from '../js/figure.js';
import { frameURL } from '../js/nextstate.js';
import { opFields, showFields } from '../js/runform.js';
import { RunState, NEW_ADDR, blockWord } from '../js/state.js';
import { hello } from './player.fixture.js';
import { servedPaces } from './paces.fixture.js';

const q = (/** @type {any} */ run) => Object.fromEntries(setRunQuery(new URLSearchParams('keepSize=true&offset=9&size=7'), run));

test('setRunQuery writes op and only the fields request.Parse reads for the call', () => {
  assert.deepEqual(q({ path: '/a', offset: 4096, length: 8192, keepSize: true }),
    { path: '/a', offset: '4096', length: '8192', keepSize: 'true' }, 'a zero: no op, no size');
  assert.deepEqual(q({ op: 'punch', path: '/a', offset: 4096, length: 8192, keepSize: true }),
    { path: '/a', op: 'punch', offset: '4096', length: '8192' }, 'a punch always keeps the size: no keepSize');
  assert.deepEqual(q({ op: 'truncate', path: '/a', offset: '1048576', length: '0', keepSize: true, mode: 'both' }),
    { path: '/a', op: 'truncate', size: '1048576', mode: 'both' }, 'a truncate: its size (the run\'s offset), no range');
  assert.deepEqual(q({ op: 'truncate', path: '/a', size: 100, offset: 0 }), { path: '/a', op: 'truncate', size: '100' });
  // Back to a zero, the truncate's fields go.
  const s = setRunQuery(new URLSearchParams('op=truncate&size=5'), { path: '/a', offset: 0, length: 1 });
  assert.ok(!s.has('op') && !s.has('size'));
});

test('the calls CSV and the next-state API ask for the same call', () => {
  const u = new URL(csvURL({ image: 'demo', path: '/a', op: 'truncate', offset: '4096', length: '0', mode: 'both', keepSize: false }), 'http://x');
  assert.deepEqual([u.pathname, u.searchParams.get('op'), u.searchParams.get('size'), u.searchParams.get('format')], ['/api/images/demo/run', 'truncate', '4096', 'csv']);
  const n = new URL(frameURL({ image: 'demo', path: '/a', op: 'punch', offset: '0', length: '8192', keepSize: false, before: [] }, { policy: 'greedy', now: 0, at: 0 }, false), 'http://x');
  assert.deepEqual([n.searchParams.get('op'), n.searchParams.get('length')], ['punch', '8192']);
});

test('the permalink keeps the call the hello names', () => {
  const st = new RunState();
  st.hello(hello({ run: { ...hello().run, op: 'truncate', offset: '1048676', length: '0' } }));
  const params = { path: '/a', offset: '1048676', length: '', mode: 'both', keepSize: false, before: [], sandbox: '' };
  const p = new URLSearchParams(permalinkSearch('?offset=1&length=2', params, st, { colour: { by: 'run' }, present: false, quiz: false }, servedPaces()));
  assert.deepEqual([p.get('op'), p.get('size'), p.has('offset'), p.has('length')], ['truncate', '1048676', false, false]);
  st.hello(hello({ run: { ...hello().run, op: 'punch' } }));
  const z = new URLSearchParams(permalinkSearch('', params, st, { colour: { by: 'run' }, present: false, quiz: false }, servedPaces()));
  assert.deepEqual([z.get('op'), z.get('offset'), z.get('length')], ['punch', '0', '40960']);
});

test('the chain writes a punch or truncate line, as request.Run.OpLine does', () => {
  const run = { image: 'demo', path: '/cases/holes.bin', offset: '4096', length: '8192', keepSize: false, mode: 'both', before: ['write /cases/holes.bin 0 4096'] };
  assert.equal(opLine({ ...run, op: 'punch' }), 'punch /cases/holes.bin 4096 8192');
  assert.equal(opLine({ ...run, op: 'punch', keepSize: true }), 'punch /cases/holes.bin 4096 8192', 'punch has no keep_size word');
  assert.equal(opLine({ ...run, op: 'truncate', length: '0' }), 'truncate /cases/holes.bin 4096');
  assert.equal(opLine(run), 'zero /cases/holes.bin 4096 8192');
  assert.equal(opWords('punch /a 1048576 2097152'), 'punch /a 1,048,576 2,097,152');
  assert.equal(opWords('truncate /a 1048576'), 'truncate /a 1,048,576');
  // The next zero after a punch: the punch is a before= line, the zero plays (no op).
  const u = new URL(chainURL({ ...run, op: 'punch' }, { offset: '0', length: '4096', keepSize: false }), 'http://x');
  assert.deepEqual(u.searchParams.getAll('before'), ['write /cases/holes.bin 0 4096', 'punch /cases/holes.bin 4096 8192']);
  assert.ok(!u.searchParams.has('op') && !u.searchParams.has('size'));
  // After a truncate the file is its new size: the next range lies inside it; a punch keeps the size.
  assert.deepEqual(nextRange({ op: 'truncate', size: '1048576', offset: '65536', length: '0', keepSize: false }), { offset: '0', length: '32768' });
  assert.deepEqual(nextRange({ op: 'punch', size: '8192', offset: '4096', length: '8192', keepSize: false }), { offset: '0', length: '4096' });
});

test('the call log names NEW_ADDR calls, run breaks and node frees', () => {
  assert.equal(callWhy('per-block', 5000), '');
  assert.equal(callWhy('discontiguous', 5000), 'discontiguous');
  assert.match(callWhy('per-block', NEW_ADDR), /^NEW_ADDR: returns at once$/);
  assert.match(callWhy('discontiguous', NEW_ADDR), /^NEW_ADDR: returns at once · discontiguous$/);
  assert.match(callWhy('run-break', 5000), /NULL or skipped slot ends the run/);
  assert.match(callWhy('node-free', 5000), /truncate_node/);
});

test('the run form shows and enables the fields of the chosen call only', () => {
  assert.deepEqual(opFields({ dataset: { range: 'true', keepSize: 'true', size: 'false' } }), { range: true, keepSize: true, size: false });
  assert.deepEqual(opFields(null), { range: false, keepSize: false, size: false });
  /** @type {Record<string, {hidden: boolean, disabled: boolean}>} */
  const els = {};
  for (const id of ['f-range', 'preset', 'f-offset', 'f-length', 'f-size-field', 'f-size', 'f-keep-label', 'f-keep']) els[id] = { hidden: false, disabled: false };
  const doc = /** @type {any} */ ({ getElementById: (/** @type {string} */ id) => els[id] || null });
  showFields(doc, { range: false, keepSize: false, size: true });
  assert.deepEqual(Object.fromEntries(Object.entries(els).map(([k, v]) => [k, k.startsWith('f-size') || k === 'f-size' ? !v.disabled && !v.hidden : v.disabled || v.hidden])),
    Object.fromEntries(Object.keys(els).map((k) => [k, true])), 'truncate: size shown and enabled, the rest hidden or disabled');
  showFields(doc, { range: true, keepSize: false, size: false });
  assert.ok(!els['f-offset'].disabled && !els['f-range'].hidden && els['f-keep'].disabled && els['f-size'].disabled, 'punch: range, no KEEP_SIZE');
});

test('a punch\'s cleared slots flash and its skipped addresses are marked, as a zero\'s', () => {
  const st = new RunState();
  st.hello(hello({ run: { ...hello().run, op: 'punch' } }));
  assert.equal(st.info.op, 'punch');
  const ev = (/** @type {string} */ action, /** @type {number} */ slot) => ({ kind: 'slot', action, slot, step: 3 });
  st.frame({ step: 3, full: false, events: [ev('clear', 0), ev('clear-start-run', 1), ev('clear-extend-run', 2), ev('skip-null', 3), ev('skip-sit-bit', 4), ev('skip-bounds', 5)], changed: [], state: [] }, 10);
  assert.deepEqual([...st.flash.keys()].sort(), [0, 1, 2], 'the released slots flash; NULL and skipped ones do not');
  assert.deepEqual([...st.bad].sort(), [4, 5], 'addresses validation refused are marked');
  // After a seek back before them the marks go, and come back from their step on.
  st.frame({ step: 1, full: true, events: [], changed: [], state: [] }, 20);
  assert.equal(st.bad.size, 0);
  st.frame({ step: 4, full: true, events: [], changed: [], state: [] }, 30);
  assert.deepEqual([...st.bad].sort(), [4, 5]);
});

test('a pending run of NEW_ADDR is named, not numbered', () => {
  assert.equal(blockWord(NEW_ADDR), 'NEW_ADDR');
  assert.equal(blockWord(-1), 'NEW_ADDR', 'as the wire may hold it, signed');
  assert.equal(blockWord(22528), '22528');
});

test('the chain plays a punch or a truncate next, after the run shown', () => {
  assert.ok(isPlayed('punch') && isPlayed('truncate') && isPlayed('zero') && !isPlayed('write') && !isPlayed('sync'));
  assert.deepEqual(playedNext('punch /a 4096 8192'), { op: 'punch', offset: '4096', length: '8192', keepSize: false });
  assert.deepEqual(playedNext('truncate /a 1048576'), { op: 'truncate', offset: '1048576', length: '', keepSize: false });
  assert.equal(playedNext('write /a 0 4096'), null);
  const run = { image: 'demo', path: '/cases/contiguous.bin', offset: '1048576', length: '1048576', keepSize: false, mode: 'both', before: [] };
  // Issue 28's demo: a zero, then a punch of the same range — every NEW_ADDR slot its own call.
  const u = new URL(chainURL(run, /** @type {any} */ (playedNext('punch /cases/contiguous.bin 1048576 1048576'))), 'http://x');
  assert.deepEqual(u.searchParams.getAll('before'), ['zero /cases/contiguous.bin 1048576 1048576']);
  assert.deepEqual([u.searchParams.get('op'), u.searchParams.get('offset'), u.searchParams.get('length')], ['punch', '1048576', '1048576']);
  const v = new URL(chainURL(run, /** @type {any} */ (playedNext('truncate /cases/contiguous.bin 65536')), undefined, null, ['sync']), 'http://x');
  assert.deepEqual([v.searchParams.get('op'), v.searchParams.get('size'), v.searchParams.has('offset')], ['truncate', '65536', false]);
  assert.deepEqual(v.searchParams.getAll('before'), ['zero /cases/contiguous.bin 1048576 1048576', 'sync']);
});

test('unlink: the run query carries op and path only, the chain writes and plays its line', () => {
  assert.deepEqual(q({ op: 'unlink', path: '/a', offset: '0', length: '', keepSize: true, mode: 'both' }),
    { path: '/a', op: 'unlink', mode: 'both' }, 'an unlink: no size, range or keepSize');
  assert.equal(opLine({ op: 'unlink', path: '/cases/tiny.txt', offset: '0', length: '0', keepSize: false }), 'unlink /cases/tiny.txt');
  assert.ok(isPlayed('unlink'));
  assert.deepEqual(playedNext('unlink /cases/tiny.txt'), { op: 'unlink', offset: '0', length: '', keepSize: false });
  assert.equal(playedNext('unlink /a 3'), null, 'unlink takes PATH alone');
});
