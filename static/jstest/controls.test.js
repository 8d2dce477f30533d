// Unit tests of the player's controls (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SPEEDS, PACE_ORDER, speedIndex, paceAfter, parseGotoSlot, DRIVE_CONTROLS, setDrivingControls } from '../js/controls.js';
import { DEFAULT_PACE, isPace } from '../js/pace.js';
import { FakeDocument } from './fakedom.js';

test('the speeds rise and the slider is clamped to them', () => {
  for (let i = 1; i < SPEEDS.length; i++) assert.ok(SPEEDS[i] > SPEEDS[i - 1]);
  assert.equal(speedIndex(-3), 0);
  assert.equal(speedIndex(999), SPEEDS.length - 1);
  assert.equal(speedIndex(4), 4);
});

test('[ and ] step through the paces and stop at the ends; from a custom speed they go to the default', () => {
  for (const p of PACE_ORDER) assert.ok(isPace(p), p);
  assert.equal(paceAfter('30', -1), '60');
  assert.equal(paceAfter('30', 1), '10');
  assert.equal(paceAfter('10', 1), '10');
  assert.equal(paceAfter('step', -1), 'step');
  assert.equal(paceAfter('', 1), DEFAULT_PACE);
});

test('go to slot takes a file block index in the run, with separators, and says why not otherwise', () => {
  const st = { ready: true, range: { start: 100, end: 20100 } };
  assert.deepEqual(parseGotoSlot(' 2,909 ', st), { slot: 2909 });
  assert.deepEqual(parseGotoSlot('10_000', st), { slot: 10000 });
  assert.match(parseGotoSlot('abc', st).error, /digits/);
  assert.match(parseGotoSlot('-5', st).error, /digits/);
  assert.equal(parseGotoSlot('99999', st).error, 'slot 99,999 is outside this run: slots 100…20,099');
  assert.match(parseGotoSlot('99', st).error, /outside/);
  assert.equal(parseGotoSlot('5', { ready: true, range: { start: 0, end: 0 } }).error, 'this run has no slots');
  assert.deepEqual(parseGotoSlot('5', { ready: false, range: { start: 0, end: 0 } }), { slot: 5 }, 'before the hello the server decides');
});

test('a follower\'s page disables every control that drives the run, and enables them again', () => {
  const doc = new FakeDocument();
  setDrivingControls(doc, false);
  for (const id of DRIVE_CONTROLS) assert.ok(doc.getElementById(id).disabled, id);
  setDrivingControls(doc, true);
  for (const id of DRIVE_CONTROLS) assert.ok(!doc.getElementById(id).disabled, id);
});
