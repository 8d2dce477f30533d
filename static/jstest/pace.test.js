// Unit tests of pace and time-left formatting (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PACES, DEFAULT_PACE, isPace, clock, timeLeftText, paceValue } from '../js/pace.js';

test('the paces are the server\'s, 30 s by default', () => {
  assert.deepEqual(PACES.map((p) => p.value), ['10', '30', '60', '180', 'step']);
  assert.equal(DEFAULT_PACE, '30');
  for (const p of PACES) assert.ok(isPace(p.value));
  for (const bad of ['', '20', 'fast', '30s', ' 30']) assert.equal(isPace(bad), false, bad);
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
  assert.equal(paceValue('30'), '30');
  assert.equal(paceValue('step'), 'step');
  assert.equal(paceValue(''), 'custom');
});
