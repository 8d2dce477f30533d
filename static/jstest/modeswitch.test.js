// Tests of the mode switch's page side (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextMode, tourAfterHello, MODE_CYCLE } from '../js/modeswitch.js';
import { stopAt } from '../js/tour.js';

test('b cycles per-block → batched → both → per-block', () => {
  assert.equal(nextMode('per-block'), 'batched');
  assert.equal(nextMode('batched'), 'both');
  assert.equal(nextMode('both'), 'per-block');
  let m = 'both';
  for (let i = 0; i < MODE_CYCLE.length; i++) m = nextMode(m);
  assert.equal(m, 'both', 'three presses come back');
});

test('after a mode switch the tour is the new mode’s stop at the step, as on a fresh load', () => {
  // Issue 16: b at step 3,501 of bench64 showed "stop 5 of 5" of the other mode; a reload "stop 3".
  const both = [{ step: 0 }, { step: 2 }, { step: 900 }, { step: 3503 }, { step: 65675 }];
  const batched = [{ step: 0 }, { step: 2 }, { step: 1750 }, { step: 30000 }, { step: 49188 }];
  const after = tourAfterHello('both', 'batched', /** @type {any} */ (batched), 1751, 4, true);
  assert.deepEqual(after, { open: stopAt(/** @type {any} */ (batched), 1751), sticky: false });
  assert.equal(after.open, 2);
  // A reconnect (same mode) keeps the stop the user opened.
  assert.deepEqual(tourAfterHello('both', 'both', /** @type {any} */ (both), 10, 3, true), { open: 3, sticky: true });
  // The first hello follows the step.
  assert.deepEqual(tourAfterHello(null, 'both', /** @type {any} */ (both), 3503, -1, false), { open: 3, sticky: false });
  // Random stop lists and steps: a switch always equals stopAt.
  let seed = 7;
  const r = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  for (let k = 0; k < 500; k++) {
    const n = 1 + Math.floor(r() * 8);
    const stops = Array.from({ length: n }, (_, i) => ({ step: i === 0 ? 0 : Math.floor(r() * 1000) })).sort((a, b) => a.step - b.step);
    const step = Math.floor(r() * 1100);
    const got = tourAfterHello('per-block', 'both', /** @type {any} */ (stops), step, Math.floor(r() * 10), r() < 0.5);
    assert.deepEqual(got, { open: stopAt(/** @type {any} */ (stops), step), sticky: false });
  }
});
