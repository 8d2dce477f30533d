// Unit tests of the player's controls (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SPEEDS, speedIndex, parseGotoSlot, DRIVE_CONTROLS, setDrivingControls, wireControls, BUTTON_ACTIONS,
} from '../js/controls.js';
import { FakeDocument, FakeElement } from './fakedom.js';

test('the speeds rise and the slider is clamped to them', () => {
  for (let i = 1; i < SPEEDS.length; i++) assert.ok(SPEEDS[i] > SPEEDS[i - 1]);
  assert.equal(speedIndex(-3), 0);
  assert.equal(speedIndex(999), SPEEDS.length - 1);
  assert.equal(speedIndex(4), 4);
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

test('every button does what its key does; menus, forms and the quiz\'s choices reach their handlers', () => {
  globalThis.window ??= globalThis;
  globalThis.HTMLButtonElement ??= FakeElement; // the choices are the fake document's buttons
  const doc = new FakeDocument();
  const calls = [];
  const actions = new Proxy({}, { get: (_, a) => () => calls.push(a) });
  const rec = (name) => (v) => calls.push(`${name}:${v}`);
  const drag = wireControls(/** @type {any} */ (doc), {
    actions, nav: (m) => calls.push(`nav:${m.type}:${m.step}`), setQuiz: rec('quiz'), setColour: rec('colour'), setPace: rec('pace'),
    setSpeed: rec('speed'), setMode: rec('mode'), gotoSlot: rec('goto'), answer: rec('answer'), resetMeter: () => calls.push('reset-meter'),
  });
  for (const [id, a] of Object.entries(BUTTON_ACTIONS)) {
    calls.length = 0;
    doc.getElementById(id).dispatch('click');
    assert.deepEqual(calls, [a], id);
  }
  calls.length = 0;
  doc.getElementById('quiz-toggle').checked = true;
  doc.getElementById('quiz-toggle').dispatch('change');
  doc.getElementById('colour-by').value = 'segment';
  doc.getElementById('colour-by').dispatch('change');
  doc.getElementById('speed').value = '4';
  doc.getElementById('speed').dispatch('input');
  doc.getElementById('f-mode').value = 'batched';
  doc.getElementById('f-mode').dispatch('change');
  doc.getElementById('goto-slot').value = '2,909';
  assert.ok(doc.getElementById('goto-slot-form').dispatch('submit').defaultPrevented, 'the form does not navigate');
  doc.getElementById('quiz-answer').value = '19';
  doc.getElementById('quiz-form').dispatch('submit');
  const choice = doc.createElement('button');
  choice.dataset.value = 'yes';
  doc.getElementById('quiz-choices').dispatch('click', choice);
  doc.getElementById('frame-reset').dispatch('click');
  assert.deepEqual(calls, ['quiz:true', 'colour:segment', 'speed:4', 'mode:batched', 'goto:2,909', 'answer:19', 'answer:yes', 'reset-meter']);
  // The slider: a release seeks to where it ends, and the drag is over.
  calls.length = 0;
  const seek = doc.getElementById('seek');
  seek.value = '1234';
  drag.dragging = true;
  seek.dispatch('change');
  assert.deepEqual(calls, ['nav:seek:1234']);
  assert.equal(drag.dragging, false);
});
