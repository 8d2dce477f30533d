// Unit tests of the player's sentences about the run (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  plural, slotValueText, slotText, cursorLine, slotsAside, sitAside, sitLine, statesText, outcomeText, markersText,
} from '../js/describe.js';
import { NULL_ADDR, NEW_ADDR, COMPRESS_ADDR } from '../js/state.js';
import { model, frame, hello } from './player.fixture.js';

test('plural: one is singular, the rest plural and grouped', () => {
  assert.equal(plural(1, 'slot'), '1 slot');
  assert.equal(plural(0, 'slot'), '0 slots');
  assert.equal(plural(16384, 'call'), '16,384 calls');
});

test('a slot value says what it is: hole, reserved, compressed marker, or address in its segment', () => {
  const st = model();
  assert.equal(slotValueText(st, 0, NULL_ADDR), 'NULL_ADDR: a hole');
  assert.match(slotValueText(st, 0, NEW_ADDR), /^NEW_ADDR/);
  assert.match(slotValueText(st, 0, COMPRESS_ADDR), /^COMPRESS_ADDR/);
  // 4608 = main area 4096 + 1 × 512: segment 1, offset 0, in the first physical run.
  assert.equal(slotValueText(st, 0, 4608), 'address 4608, segment 1, block offset 0, physical run 1 of 1');
  assert.match(slotValueText(st, 0, 10), /outside the main area/);
});

test('the tooltip and cursor line name the slot, its chunk and what it held before the run', () => {
  const st = model();
  const tip = slotText(st, 3);
  assert.match(tip, /^slot 3 \(file offset 12,288\)/);
  assert.match(tip, /chunk 1 of 1/);
  assert.match(tip, /address 4611/);
  assert.doesNotMatch(tip, /before the run/);
  st.frame({ ...frame(4), changed: [{ index: 3, count: 1, state: 'new' }] }, 0);
  assert.match(slotText(st, 3), /before the run: address 4611/);
  assert.match(cursorLine(st, 3), /^pinned at slot 3 .*NEW_ADDR.*; before the run address 4611/);
  assert.match(cursorLine(st, null), /^cursor at slot 4/);
  // A tour stop at this step points the line at its own slot (RunState.at, tour.js stopSlot).
  st.at = 2;
  assert.match(cursorLine(st, null), /^cursor at slot 2 /);
  st.at = null;
  // Presenter mode (brief) leaves the batched pending run to the canvas.
  const bt = st.per.batched;
  assert.ok(bt, 'the model has a batched mode');
  bt.pending = { start: 4611, len: 3, slot: 1 };
  assert.match(cursorLine(st, null), / · pending run \(4611, 3\)$/);
  assert.doesNotMatch(cursorLine(st, null, undefined, true), /pending run/);
});

test('the asides count slots, chunks, runs and segments with separators and singulars', () => {
  const st = model();
  assert.equal(slotsAside(st), '10 slots in 1 chunk · 1 physical run');
  assert.equal(sitAside(st, 1, 1), '1 segment');
  assert.equal(statesText({ addr: 16384, new: 2, null: 0, compress: 0 }), '16,384 · 2 · 0');
  assert.equal(statesText({ addr: 1, new: 0, null: 0, compress: 3 }), '1 · 0 · 0 · 3 compressed');
  assert.equal(markersText(st), '3 tour stops, 1 dnode chunk, 2 call markers');
  assert.equal(markersText(st, true), '3 tour stops, 1 dnode chunk');
});

test('the outcome line is the server\'s: nothing while running unless it sent a line for then, its line at the end', () => {
  const st = model();
  assert.equal(outcomeText(st), '');
  st.frame(frame(40, { calls: 8, done: true }), 0);
  assert.equal(outcomeText(st), hello().outcome.line);
  // Whatever the server says, as it says it: the page composes nothing from the counters.
  const said = { returns: 'vfs_fallocate returns -EFBIG', line: 'any words at all', ahead: 'words before the end' };
  const e = model({ outcome: said });
  assert.equal(outcomeText(e), 'words before the end');
  e.frame(frame(7, { calls: 2, done: true }), 0);
  assert.equal(outcomeText(e), 'any words at all');
  // A new hello brings the new run's words; a hello without any leaves none.
  e.hello(hello({ outcome: undefined }));
  assert.equal(outcomeText(e), '');
  e.frame(frame(40, { done: true }), 0);
  assert.equal(outcomeText(e), '');
});

test('the SIT line names the three most active segments, or as many as asked (presenter mode: one)', () => {
  const seg = (segno) => ({ segno, validBefore: 10, valid: 10, mapBefore: 'ff', map: 'ff', classBefore: 'dirty', class: 'dirty' });
  const st = model({ segments: [1, 2, 3, 4].map(seg) });
  const named = (s) => (s.match(/segment \d+:/g) || []).length;
  assert.equal(named(sitLine(st)), 3, sitLine(st));
  assert.equal(named(sitLine(st, 1)), 1, sitLine(st, 1));
  assert.ok(sitLine(st).startsWith(sitLine(st, 1)), 'the one named is the first of the three');
});
