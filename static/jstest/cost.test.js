// Unit tests of the cost panel's model (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MEASURED, MODEL, fit, modelMs, fmtTime, formula } from '../js/cost.js';

test('the model goes through both measurements exactly', () => {
  const { blocks, perBlock, batched } = MEASURED;
  assert.ok(Math.abs(modelMs(blocks, perBlock.calls) - perBlock.ms) < 1e-9);
  assert.ok(Math.abs(modelMs(blocks, batched.calls) - batched.ms) < 1e-9);
});

test('the fitted parameters are the ones the page prints', () => {
  // b = (16.436 − 10.011) ms / (16,384 − 19) calls; a takes the rest of 10.011 ms over 16,384 blocks.
  assert.ok(Math.abs(MODEL.b * 1000 - 0.39260) < 1e-4, `b = ${MODEL.b * 1000} µs`);
  assert.ok(Math.abs(MODEL.a * 1000 - 0.61056) < 1e-4, `a = ${MODEL.a * 1000} µs`);
  assert.equal(formula(), 't = 0.611 µs × blocks + 0.393 µs × calls');
});

test('fit solves any two measurements of the same blocks', () => {
  const m = fit(1000, { calls: 1000, ms: 3 }, { calls: 10, ms: 1.02 });
  assert.ok(Math.abs(modelMs(1000, 1000, m) - 3) < 1e-12);
  assert.ok(Math.abs(modelMs(1000, 10, m) - 1.02) < 1e-12);
  assert.ok(Math.abs(m.b - 0.002) < 1e-12);
});

test('no blocks and no calls cost nothing; times get a unit that fits', () => {
  assert.equal(modelMs(0, 0), 0);
  const cases = [[0, '0 ms'], [-1, '0 ms'], [NaN, '0 ms'], [0.000393, '0.39 µs'], [0.3121, '312 µs'],
    [0.02, '20.0 µs'], [1.5, '1.50 ms'], [16.436, '16.4 ms'], [10.011, '10.0 ms'], [312.4, '312 ms'], [1250, '1.25 s']];
  for (const [ms, want] of cases) assert.equal(fmtTime(ms), want, String(ms));
});
