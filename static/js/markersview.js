// The markers under the player's seek slider: chunk changes, calls, errors
// and the tour's stops. Drawing only, on the canvas it is given; render.js
// re-exports it for player.js.
import { OI, INK } from './palette.js';
import { contract } from './contract.js';

const PER_BLOCK = contract().modes.perBlock;

/**
 * Draws the markers under the seek slider: the ticks are painted once into
 * a bitmap (a run has up to 4,096 of them) and each frame copies it and
 * adds the step line.
 */
export class MarkersView {
  constructor() {
    /** @type {OffscreenCanvas|null} */
    this.img = null;
    this.key = '';
    /** @type {any[]|null} the markers the bitmap shows */
    this.of = null;
  }

  /**
   * @param {import('./state.js').RunState} st
   * @param {{ctx: CanvasRenderingContext2D, w: number, h: number, dpr: number}} f
   * @param {boolean} quiz
   */
  draw(st, f, quiz) {
    const { ctx, w, h, dpr } = f;
    ctx.clearRect(0, 0, w, h);
    const total = st.totalSteps;
    if (!st.ready || total <= 0) return;
    const key = `${w}x${h}@${dpr}:${quiz}:${total}:${st.stops.length}`;
    if (!this.img || key !== this.key || this.of !== st.markers) {
      this.key = key;
      this.of = st.markers;
      this.img = new OffscreenCanvas(Math.max(1, Math.round(w * dpr)), Math.max(1, Math.round(h * dpr)));
      const g = /** @type {OffscreenCanvasRenderingContext2D} */ (this.img.getContext('2d'));
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      paintMarkers(st, /** @type {any} */ (g), w, h, quiz);
    }
    ctx.drawImage(this.img, 0, 0, w, h);
    ctx.fillStyle = INK;
    ctx.fillRect(Math.round(markerX(st.step, total, w)) - 1, 0, 2, h);
  }
}

/**
 * The x of a step on the slider: the range input's thumb travel is inset
 * by about half a thumb.
 * @param {number} s
 * @param {number} total
 * @param {number} w
 * @returns {number}
 */
export function markerX(s, total, w) {
  const inset = 8;
  return inset + (s / total) * (w - 2 * inset);
}

/**
 * Paints the ticks: chunk changes, calls (per-block first, so the fewer
 * batched calls stay visible on top), errors and the tour's stops. In a
 * quiz only the chunk changes show: where the calls fall would give answers
 * away.
 * @param {import('./state.js').RunState} st
 * @param {CanvasRenderingContext2D} ctx
 * @param {number} w
 * @param {number} h
 * @param {boolean} quiz
 */
export function paintMarkers(st, ctx, w, h, quiz) {
  const total = st.totalSteps;
  const X = (/** @type {number} */ s) => markerX(s, total, w);
  const order = [...st.markers].sort((a, b) => (a.mode === PER_BLOCK ? 0 : 1) - (b.mode === PER_BLOCK ? 0 : 1));
  for (const m of order) {
    const x = Math.round(X(m.step));
    if (m.kind === 'chunk') {
      ctx.fillStyle = 'rgba(74,85,97,.6)';
      ctx.fillRect(x, 0, 1, h);
    } else if (quiz) {
      continue;
    } else if (m.kind === 'flush') {
      ctx.fillStyle = m.mode === PER_BLOCK ? 'rgba(213,94,0,.35)' : OI.blue;
      ctx.beginPath();
      ctx.moveTo(x, m.mode === PER_BLOCK ? h - 4 : h - 8);
      ctx.lineTo(x - 3, h);
      ctx.lineTo(x + 3, h);
      ctx.fill();
    } else if (m.kind === 'error') {
      ctx.strokeStyle = OI.vermillion;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x - 3, 2); ctx.lineTo(x + 3, h - 2);
      ctx.moveTo(x + 3, 2); ctx.lineTo(x - 3, h - 2);
      ctx.stroke();
      ctx.lineWidth = 1;
    }
  }
  // The tour's stops, as small ticks at the top (they are where n goes).
  ctx.fillStyle = INK;
  for (const s of st.stops) ctx.fillRect(Math.round(X(s.step)) - 1, 0, 3, 3);
}
