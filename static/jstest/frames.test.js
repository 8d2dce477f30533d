// Unit tests of the draw-time figure (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameMeter, FRAME_SAMPLES } from '../js/frames.js';

test('p95 is the 95th percentile of the kept draws, 0 with none', () => {
  const m = new FrameMeter();
  assert.equal(m.p95(), 0);
  for (let i = 100; i >= 1; i--) m.add(i);
  assert.equal(m.p95(), 96);
  m.reset();
  m.add(7);
  assert.equal(m.p95(), 7);
});

test('only the latest draws are kept', () => {
  const m = new FrameMeter();
  for (let i = 0; i < FRAME_SAMPLES; i++) m.add(1000);
  for (let i = 0; i < FRAME_SAMPLES; i++) m.add(1);
  assert.equal(m.samples.length, FRAME_SAMPLES);
  assert.equal(m.p95(), 1);
});
