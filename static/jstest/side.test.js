// Unit tests of the player's side panels (node --test) on what the server really sends
// (testdata/side.json, web's TestSideVectors): the ops language's forms and the next operation's
// lines (opsform.js, chain.js), writeback's events in words (writeback.js), the after-image
// check's verdict, lists and marks (aftercheck.js).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseForms, formLine, onFile, placeholder, ZERO_FORM } from '../js/opsform.js';
import { chainURL, chainRefusal, nextTraceOp, MAX_BEFORE } from '../js/chain.js';
import { pageWords, groupWords, summaryWords, bitWords, addrWords, narrationWords } from '../js/writeback.js';
import { verdict, marksOf, markedWords, differenceWords, explainedWords, explainedCount, explainedRest, valueWords, slotMarkBox, sitMarkBox, MAX_MARKS } from '../js/aftercheck.js';
import { runQuery } from '../js/sidepanel.js';

const side = JSON.parse(await readFile(new URL('./testdata/side.json', import.meta.url), 'utf8'));
const forms = parseForms(JSON.stringify(side.forms));
const form = (/** @type {string} */ k) => /** @type {import('../js/opsform.js').OpForm} */ (forms.find((f) => f.kind === k));

test('parseForms reads the server\'s forms, and keeps a zero whatever it is given', () => {
  // The server's forms, whatever the grammar holds now: zero first, each kind once.
  assert.equal(forms[0].kind, 'zero');
  for (const k of ['write', 'fsync', 'sync', 'tune']) assert.ok(form(k), k);
  assert.equal(new Set(forms.map((f) => f.kind)).size, forms.length);
  assert.deepEqual(parseForms('not json'), [ZERO_FORM]);
  assert.deepEqual(parseForms('[{"kind":"sync","args":[]}]').map((f) => f.kind), ['zero', 'sync']);
  assert.deepEqual(parseForms('[{"kind":"Bad Kind","args":[]},{"kind":"gc","args":[{"name":"N","optional":true}]}]').map((f) => f.kind), ['zero', 'gc']);
  assert.equal(onFile(form('write')), true);
  assert.equal(onFile(form('sync')), false);
  assert.equal(placeholder('LENGTH').count, true);
});

test('formLine writes every operation of the language as request.ParseOp reads it', () => {
  const p = '/cases/holes.bin';
  assert.deepEqual(formLine(form('zero'), [undefined, '4096', '64KiB', true], p), { line: `zero ${p} 4096 65536 keep_size`, error: '', arg: -1 });
  assert.equal(formLine(form('zero'), [undefined, '0x1000', '8192', false], p).line, `zero ${p} 4096 8192`);
  assert.equal(formLine(form('write'), [undefined, '1,048,576', '4k'], p).line, `write ${p} 1048576 4096`);
  assert.equal(formLine(form('fsync'), [undefined], p).line, `fsync ${p}`);
  assert.equal(formLine(form('sync'), [], p).line, 'sync');
  assert.equal(formLine(form('tune'), ['ipu_policy', '16'], p).line, 'tune ipu_policy 16');
  assert.equal(formLine(form('tune'), ['reserved_blocks', '0x65'], p).line, 'tune reserved_blocks 101');
  // What is missing or wrong is named, with the word's place.
  assert.deepEqual(formLine(form('write'), [undefined, '', '4096'], p), { line: '', error: 'offset: a byte count: 4096, 0x1000 or 64MiB', arg: 1 });
  assert.equal(formLine(form('write'), [undefined, '4096', '1_000'], p).arg, 2);
  // A negative count is a size as request.ParseOp reads it (units.ParseSize): the kernel answers it.
  assert.equal(formLine(form('write'), [undefined, '4096', '-1'], p).line, `write ${p} 4096 -1`);
  // A choice names its words as the server's form lists them (request.Ops: the tunables).
  assert.equal(formLine(form('tune'), ['swappiness', '1'], p).error, `one of ${form('tune').args[0].words.join(', ')}`);
  assert.ok(form('tune').args[0].words.includes('max_victim_search'));
  assert.match(formLine(form('fsync'), [], '/a b').error, /spaces/);
  // Every form the server sends makes a line with its words filled in.
  for (const f of forms) {
    const vals = f.args.map((a) => (a.name ? '16' : (a.words || [])[0]));
    const r = formLine(f, vals, p);
    assert.equal(r.error, '', f.line);
    assert.equal(r.line.split(' ')[0], f.kind);
  }
  // A form the page has never seen needs nothing new.
  const gc = parseForms('[{"kind":"gc","args":[{"words":["foreground","background"]},{"name":"N","optional":true}]}]')[1];
  assert.equal(formLine(gc, ['background', ''], p).line, 'gc background');
  assert.equal(formLine(gc, ['foreground', '3'], p).line, 'gc foreground 3');
});

test('chainURL runs the added operations between the run shown and the next zero, in order', () => {
  const run = { image: 'demo', path: '/cases/holes.bin', offset: '0', length: '524288', keepSize: false, mode: 'both', before: ['zero /cases/holes.bin 67584 195560', 'sync'] };
  const u = new URL(chainURL(run, { offset: '0', length: '4096', keepSize: false }, undefined, { id: 't', op: 3, ops: 6 }, ['write /cases/holes.bin 65536 8192', 'sync']), 'http://x');
  assert.deepEqual(u.searchParams.getAll('before'), [
    'zero /cases/holes.bin 67584 195560', 'sync', 'zero /cases/holes.bin 0 524288', 'write /cases/holes.bin 65536 8192', 'sync']);
  // The trace marks every operation: the zero after a write and a sync is its sixth.
  assert.equal(u.searchParams.get('traceOp'), '6');
  assert.deepEqual(nextTraceOp({ id: 't', op: 3, ops: 5 }, 3), null, 'past the trace');
  assert.deepEqual(nextTraceOp({ id: 't', op: 3, ops: 6 }, 3), { id: 't', op: 6 });
  assert.equal(chainRefusal({ ...run, before: Array(MAX_BEFORE - 2).fill('sync') }, 1), '');
  assert.match(chainRefusal({ ...run, before: Array(MAX_BEFORE - 2).fill('sync') }, 2), /at most 64/);
});

test('writeback words: each page with its function, old → new, the SIT change and the counts', () => {
  const g = side.writeback.groups;
  assert.deepEqual(g.map((x) => x.kind), ['zero', 'sync', 'zero', 'unmount']);
  const [inPlace, outPlace] = g[1].pages;
  assert.equal(pageWords(inPlace), 'f2fs_do_write_data_page → f2fs_inplace_write_data: page 16 of /cases/holes.bin rewritten in place at block 23,568; the SIT does not change.');
  assert.equal(pageWords(outPlace), 'f2fs_do_write_data_page → f2fs_outplace_write_data → f2fs_allocate_data_block: page 64 of /cases/holes.bin written out of place, reserved NEW_ADDR → block 24,159 (hot-data log, current segment 39): segment 39 bit 95 set (valid 95 → 96).');
  assert.equal(groupWords(g[0]), '1. zero /cases/holes.bin 67584 195560 — no page written back; 2 dirty pages left.');
  assert.match(groupWords(g[1]), /^2\. sync — 2 pages written back by sync\(2\).*; then a checkpoint: prefree segments become free \(f2fs_write_checkpoint → f2fs_clear_prefree_segments\); 0 dirty pages left\.$/);
  assert.match(groupWords(g[2]), /^3\. zero \/cases\/holes\.bin 0 524288 \(played here: its writeback comes before the walk\) — no page written back/);
  assert.match(groupWords(g[3]), /^the unmount after the sequence — no page written back; then a checkpoint/);
  assert.equal(summaryWords(g), '2 pages written back: 2 by the sync (operation 2)');
  assert.match(groupWords({ ...g[1], otherSIT: true }), /changed these segments otherwise too \(f2fs_balance_fs's garbage collection\)/);
  assert.equal(summaryWords([]), 'no dirty page is written back in this sequence');
  assert.equal(bitWords({ segno: 3, bit: 2, addr: 5634, set: false, before: 256, after: 255 }), 'segment 3 bit 2 cleared (valid 256 → 255)');
  assert.equal(addrWords(0), 'NULL_ADDR');
  // An out-of-place rewrite of a written block clears the old bit and sets the new.
  assert.equal(pageWords({ path: '/a', index: 1, how: 'out-of-place', old: 22529, new: 24000, log: 'warm-data', segno: 39, func: 'f', sit: [
    { segno: 36, bit: 1, addr: 22529, set: false, before: 512, after: 511 }, { segno: 39, bit: 0, addr: 24000, set: true, before: 0, after: 1 }] }),
  'f: page 1 of /a written out of place, block 22,529 → block 24,000 (warm-data log, current segment 39): segment 36 bit 1 cleared (valid 512 → 511), segment 39 bit 0 set (valid 0 → 1).');
  assert.match(pageWords({ path: '/a', index: 9, how: 'past-eof', old: 0, func: 'f2fs_write_single_data_page', sit: [] }), /past i_size: not written/);
});

test('the narration says what the played zero writes back before its walk', () => {
  // a-holes-partial: the first zero dirties pages 16 and 64, the played one overlaps both.
  const g = side.overlap.groups;
  assert.equal(g[1].played, true);
  assert.equal(g[1].pages.length, 2);
  const w = narrationWords(g);
  assert.match(w, /^before the walk, filemap_write_and_wait_range writes back page 16 of \/cases\/holes\.bin in place at block 23,568 \(f2fs_inplace_write_data: no SIT change\); page 64 of \/cases\/holes\.bin out of place, NEW_ADDR → block [\d,]+ \(f2fs_outplace_write_data, hot-data log\): segment \d+ bit \d+ set \(valid \d+ → \d+\)\.$/);
  // Sync wrote them before: the played zero has nothing to write, and neither has the unmount.
  assert.equal(narrationWords(side.writeback.groups), '');
});

test('the after-image check\'s verdict: agrees in both modes, the explanation naming its function', () => {
  const a = side.agree;
  const v = verdict(a);
  assert.equal(v.agree, true);
  assert.equal(v.text, '✓ 6.after.img.zst agrees with both modes: it is what the kernel leaves after 1 operation and the unmount (1 thing the kernel did after the call explained, below).');
  assert.deepEqual(marksOf(a), { slots: [], sit: [] });
  assert.equal(explainedWords(a.modes[0].explained[0]).split(':')[0], 'f2fs_write_node_page → f2fs_do_write_node_page');
});

test('a doctored after-image: the slot and the SIT bit, in words and as marks of both modes', () => {
  const d = side.differs;
  const v = verdict(d);
  assert.equal(v.agree, false);
  assert.equal(v.text, '✗ 6.after.img.zst differs from the model of 1 operation and the unmount — per-block: 2 differences · batched: 2 differences.');
  const words = d.modes[0].differences.map(differenceWords);
  assert.deepEqual(words, [
    'slot 5 of /cases/fragmented.bin (i_addr[5]): the model has NEW_ADDR, the image block 5,634',
    'segment 3 bit 2 (block 5,634): the model has it clear, the image set',
  ]);
  const m = marksOf(d);
  assert.equal(m.slots.length, 1);
  assert.equal(m.sit.length, 1);
  assert.deepEqual([m.slots[0].index, m.slots[0].model, m.slots[0].image, m.slots[0].modes], [5, 'NEW', '5634', ['per-block', 'batched']]);
  assert.deepEqual([m.sit[0].segno, m.sit[0].bit], [3, 2]);
  assert.match(m.slots[0].text, /\(per-block and batched\)$/);
  // Slots of another file are not marked on this file's panel.
  const other = { ...d, ino: 99 };
  assert.equal(marksOf(other).slots.length, 0);
  assert.equal(valueWords('NULL'), 'NULL_ADDR');
  assert.equal(differenceWords({ what: 'i_size', file: '/a', model: '4096', image: '8192' }), '/a i_size: the model has 4096, the image 8192');
});

test('the marks\' count and the verdict\'s add up: each says what it counts', () => {
  // The real vectors: both modes differ at one slot and one SIT bit, both marked.
  const d = side.differs;
  assert.equal(markedWords(d, marksOf(d), 2), '2 of the 2 differing slots and SIT bits are marked on the panels.');
  assert.equal(markedWords(side.agree, marksOf(side.agree), 0), '');
  // The case: 880 differences in one mode, 879 of them slots and SIT bits, one a counter;
  // 48 marks drawn at most. The verdict's 880 is the marks' 879 and the 1 other.
  /** @type {import('../js/aftercheck.js').Difference[]} */
  const diffs = [];
  for (let i = 0; i < 600; i++) diffs.push({ what: 'slot', file: '/a', ino: 7, index: i, model: 'NEW', image: String(9000 + i) });
  for (let i = 0; i < 279; i++) diffs.push({ what: 'sit-bit', segno: 3, bit: i, addr: 5632 + i, model: 'clear', image: 'set' });
  diffs.push({ what: 'valid_block_count', model: '100', image: '979' });
  const b = { after: { id: 'x', name: 'x.img' }, ops: ['zero /a 0 4096'], path: '/a', ino: 7, modes: [{ mode: 'per-block', agree: false, total: 880, explained: [], differences: diffs }] };
  const m = marksOf(b);
  assert.equal(m.slots.length + m.sit.length, 879);
  assert.match(verdict(b).text, /per-block: 880 differences\.$/);
  assert.equal(markedWords(b, m, MAX_MARKS),
    '48 of the 879 differing slots and SIT bits are marked on the panels; 1 other difference (valid_block_count) has no place on them: see the list.');
  // Another file's slots have no place on this file's panels; a report cut at its list's end says so.
  const cut = { ...b, modes: [{ ...b.modes[0], total: 1500, differences: [...diffs, { what: 'slot', file: '/b', ino: 8, index: 0, model: 'NULL', image: '5' }] }] };
  assert.equal(markedWords(cut, marksOf(cut), 48),
    '48 of the 879 differing slots and SIT bits are marked on the panels; 2 other differences (valid_block_count, another file\'s slot) have no place on them: see the list; 619 more differences were counted, not sent (a report sends a mode\'s first 881).');
  // Two modes: the kinds, not a count (each mode has its own).
  const two = { ...b, modes: [b.modes[0], { ...b.modes[0], mode: 'batched' }] };
  assert.equal(markedWords(two, marksOf(two), 48),
    '48 of the 879 differing slots and SIT bits are marked on the panels; the other differences (valid_block_count) have no place on them: see the list.');
});

test('marks go on the cell the panels draw', () => {
  const L = { labelW: 124, stripW: 640, ovY: 12, ovH: 14, zoomY: 56, zoomFrom: 200, zoomCount: 80, zoomH: 22, zoomPerLine: 40, zoomStep: 48 };
  // In the zoom lane: line 1, cell 5 of it.
  assert.deepEqual(slotMarkBox(L, 256, 245, 16), { x: 124 + 5 * 16, y: 56 + 48, w: 16, h: 22, where: 'zoom' });
  // Outside it: over its place on the whole range's strip.
  const r = slotMarkBox(L, 256, 5, 16);
  assert.equal(r?.where, 'range');
  assert.equal(Math.round((r?.x ?? 0) + 6), Math.round(124 + (5.5 / 256) * 640));
  assert.equal(slotMarkBox(L, 256, 256, 16), null);
  assert.equal(slotMarkBox(L, 0, 0, 16), null);
  const S = { segs: [7, 3], rowH: 40, mapX: [100, 200], cell: 2, top: 17, cols: 64 };
  // Segment 3 is the second row; bit 66 is row 1, column 2 of its map.
  assert.deepEqual(sitMarkBox(S, [1, 2], 3, 66, 1), { x: 200 + 2 * 2 + 1 - 3 - 2, y: 17 + 40 + 2 + 2 + 1 - 3 - 2, w: 10, h: 10 });
  assert.equal(sitMarkBox(S, [1, 1], 3, 66, 0), null, 'scrolled away');
  assert.equal(sitMarkBox(S, [1, 2], 5, 0, 0), null, 'not on the panel');
});

test('runQuery is the player\'s query of a hello\'s run', () => {
  const q = new URLSearchParams(runQuery({ path: '/a', offset: '0', length: '4096', keepSize: true, mode: 'batched', before: ['sync', 'write /a 0 1'] }));
  assert.equal(q.get('keepSize'), 'true');
  assert.deepEqual(q.getAll('before'), ['sync', 'write /a 0 1']);
  assert.equal(new URLSearchParams(side.run6).get('path'), '/cases/fragmented.bin');
});

test('an after-check that lists fewer explanations than it counts says how many, by kind (issue 37)', () => {
  const m = { mode: 'per-block', agree: false, total: 3, explained: [{ kind: 'writeback-new', func: 'f', text: 't' }], differences: [],
    explainedTotal: 16384, explainedSummary: [{ kind: 'writeback-new', func: 'f', segno: 3, n: 16000 }, { kind: 'writeback-new', func: 'f', segno: 4, n: 383 }, { kind: 'checkpoint', func: 'g', n: 1 }] };
  assert.equal(explainedCount(m), 16384);
  assert.equal(explainedRest(m), 'the first 1 of 16,384 (writeback-new 16,383, checkpoint 1)');
  assert.equal(explainedRest({ ...m, explainedTotal: 1 }), '');
  assert.equal(explainedCount({ ...m, explainedTotal: undefined }), 1);
});
