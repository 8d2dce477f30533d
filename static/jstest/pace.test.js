// Unit tests of pace and time-left formatting (node --test). The paces are the server's pace menu
// as it renders it (testdata/paces.json, written by web's TestPaceMenu).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CUSTOM, pacesFromMenu, isPace, paceAfter, clock, timeLeftText, paceValue } from '../js/pace.js';
import { servedMenu, servedPaces } from './paces.fixture.js';

test('the paces are read from the menu the server rendered: its options but custom, the selected one the default', () => {
  const menu = servedMenu();
  const paces = servedPaces();
  assert.deepEqual(paces.values, menu.options.filter((o) => o.value !== CUSTOM).map((o) => o.value));
  assert.ok(paces.values.length >= 2);
  assert.equal(paces.def, menu.options.find((o) => o.defaultSelected).value);
  for (const p of paces.values) assert.ok(isPace(paces, p), p);
  for (const bad of ['', CUSTOM, 'fast', `${paces.values[0]}s`, ` ${paces.values[0]}`]) assert.equal(isPace(paces, bad), false, bad);
  assert.ok(Object.isFrozen(paces.values));
  // A menu the server renders otherwise is read as rendered: nothing here knows the paces.
  const other = pacesFromMenu({ options: [{ value: 'a', defaultSelected: false }, { value: 'b', defaultSelected: true }, { value: CUSTOM, defaultSelected: false }] });
  assert.deepEqual(other, { values: ['a', 'b'], def: 'b' });
  assert.deepEqual(pacesFromMenu({ options: [{ value: 'a', defaultSelected: false }] }), { values: ['a'], def: 'a' }, 'none selected: the first');
  assert.deepEqual(pacesFromMenu({ options: [] }), { values: [], def: '' });
});

test('[ and ] step through the paces in the menu (fastest first) and stop at the ends; from a custom speed they go to the default', () => {
  const paces = servedPaces();
  const v = paces.values;
  const last = v.length - 1;
  for (let i = 0; i <= last; i++) {
    assert.equal(paceAfter(paces, v[i], 1), v[Math.max(0, i - 1)], `faster than ${v[i]}`);
    assert.equal(paceAfter(paces, v[i], -1), v[Math.min(last, i + 1)], `slower than ${v[i]}`);
  }
  assert.equal(paceAfter(paces, '', 1), paces.def);
  assert.equal(paceAfter(paces, '', -1), paces.def);
  // By value, the menu the server renders today: 10 s, 30 s, 1 min, 3 min, one step a second.
  assert.equal(paceAfter(paces, '30', -1), '60');
  assert.equal(paceAfter(paces, '30', 1), '10');
  assert.equal(paceAfter(paces, 'step', -1), 'step');
});

test('clock rounds up to whole seconds and grows hours when needed', () => {
  const cases = [[0, '0:00'], [-3, '0:00'], [NaN, '0:00'], [Infinity, '0:00'], [0.2, '0:01'], [1, '0:01'],
    [29.99, '0:30'], [30, '0:30'], [59.5, '1:00'], [61, '1:01'], [125, '2:05'], [3600, '1:00:00'],
    [3729, '1:02:09'], [65675, '18:14:35']];
  for (const [sec, want] of cases) assert.equal(clock(sec), want, String(sec));
});

test('time left says "at the end" once there', () => {
  assert.equal(timeLeftText({ timeLeft: 27.3, step: 10, totalSteps: 100, playing: true }), '0:28 left');
  assert.equal(timeLeftText({ timeLeft: 0, step: 100, totalSteps: 100, playing: false }), 'at the end');
  assert.equal(timeLeftText({ timeLeft: 0, step: 0, totalSteps: 0, playing: false }), '0:00 left');
});

test('an explicit speed shows as custom', () => {
  for (const p of servedPaces().values) assert.equal(paceValue(p), p);
  assert.equal(paceValue(''), CUSTOM);
  assert.ok(servedMenu().options.some((o) => o.value === CUSTOM && o.disabled), 'the menu has the custom option, not to be chosen');
});
