// Unit tests of the seek-bar markers (node --test): where each kind of marker is painted, what a
// quiz hides, and that the ticks are painted once and only the step line each frame.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Fake2D, installOffscreen, offscreen } from './fake2d.js';
import { MarkersView, markerX, paintMarkers } from '../js/markersview.js';
import { OI, INK } from '../js/palette.js';

installOffscreen();

/** A run state with what the markers read. */
function state(extra = {}) {
  return {
    ready: true, totalSteps: 100, step: 25,
    markers: [
      { kind: 'chunk', step: 10, mode: '' },
      { kind: 'flush', step: 50, mode: 'batched' },
      { kind: 'flush', step: 40, mode: 'per-block' },
      { kind: 'error', step: 90, mode: 'per-block' },
    ],
    stops: [{ step: 0 }, { step: 100 }],
    ...extra,
  };
}

test('markerX spans the slider less half a thumb at each end', () => {
  assert.equal(markerX(0, 100, 416), 8);
  assert.equal(markerX(100, 100, 416), 408);
  assert.equal(markerX(50, 100, 416), 208);
});

test('paintMarkers: chunk lines over the height, per-block calls under the batched, errors as a cross, stops on top', () => {
  const ctx = new Fake2D();
  paintMarkers(state(), /** @type {any} */ (ctx), 416, 20, false);
  const X = (s) => Math.round(markerX(s, 100, 416));
  assert.deepEqual(ctx.rects('rgba(74,85,97,.6)'), [[X(10), 0, 1, 20]]);
  // The per-block call is painted first, so the batched one lies on top.
  const fills = ctx.ops.filter((o) => o.op === 'fill').map((o) => o.fillStyle);
  assert.deepEqual(fills, ['rgba(213,94,0,.35)', OI.blue]);
  const tips = ctx.ops.filter((o) => o.op === 'moveTo' && o.fillStyle !== INK).map((o) => o.args);
  assert.ok(tips.some(([x, y]) => x === X(40) && y === 16), 'per-block tip 4 px up');
  assert.ok(tips.some(([x, y]) => x === X(50) && y === 12), 'batched tip 8 px up');
  const strokes = ctx.ops.filter((o) => o.op === 'stroke').map((o) => o.strokeStyle);
  assert.deepEqual(strokes, [OI.vermillion]);
  assert.ok(ctx.ops.some((o) => o.op === 'moveTo' && o.args[0] === X(90) - 3 && o.args[1] === 2), 'the error cross at its step');
  assert.deepEqual(ctx.rects(INK), [[X(0) - 1, 0, 3, 3], [X(100) - 1, 0, 3, 3]]);
});

test('in a quiz only the chunk changes and the stops show: where the calls fall is an answer', () => {
  const ctx = new Fake2D();
  paintMarkers(state(), /** @type {any} */ (ctx), 416, 20, true);
  assert.equal(ctx.ops.filter((o) => o.op === 'fill' || o.op === 'stroke').length, 0);
  assert.equal(ctx.rects('rgba(74,85,97,.6)').length, 1);
  assert.equal(ctx.rects(INK).length, 2);
});

test('MarkersView paints the ticks once into a bitmap and draws the step line every frame', () => {
  const v = new MarkersView();
  const st = state();
  const ctx = new Fake2D();
  const f = { ctx: /** @type {any} */ (ctx), w: 416, h: 20, dpr: 2 };
  const before = offscreen.made;
  v.draw(/** @type {any} */ (st), f, false);
  v.draw(/** @type {any} */ (st), f, false);
  assert.equal(offscreen.made - before, 1, 'one bitmap for two frames');
  assert.equal(ctx.ops.filter((o) => o.op === 'drawImage').length, 2);
  const step = ctx.rects(INK);
  assert.deepEqual(step.at(-1), [Math.round(markerX(25, 100, 416)) - 1, 0, 2, 20]);
  // A quiz, a new size or new markers repaint.
  v.draw(/** @type {any} */ (st), f, true);
  v.draw(/** @type {any} */ ({ ...st, markers: [...st.markers] }), f, true);
  assert.equal(offscreen.made - before, 3);
});

test('MarkersView draws nothing before the hello or for a run without steps', () => {
  const v = new MarkersView();
  for (const st of [state({ ready: false }), state({ totalSteps: 0 })]) {
    const ctx = new Fake2D();
    v.draw(/** @type {any} */ (st), { ctx: /** @type {any} */ (ctx), w: 416, h: 20, dpr: 1 }, false);
    assert.deepEqual(ctx.ops.map((o) => o.op), ['clearRect']);
  }
});
