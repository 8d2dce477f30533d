// Canvas and tooltip helpers shared by the pages.

/**
 * Sizes a canvas's backing store to its CSS box times devicePixelRatio
 * and returns a context scaled so drawing uses CSS pixels.
 * @param {HTMLCanvasElement} canvas
 * @param {number} [cssHeight] forces the CSS height when given
 * @returns {{ctx: CanvasRenderingContext2D, w: number, h: number, dpr: number}}
 */
export function fit(canvas, cssHeight) {
  const dpr = window.devicePixelRatio || 1;
  if (cssHeight !== undefined) canvas.style.height = `${cssHeight}px`;
  const r = canvas.getBoundingClientRect();
  const w = Math.max(1, Math.floor(r.width));
  const h = Math.max(1, Math.floor(r.height));
  const bw = Math.round(w * dpr);
  const bh = Math.round(h * dpr);
  if (canvas.width !== bw || canvas.height !== bh) {
    canvas.width = bw;
    canvas.height = bh;
  }
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, w, h, dpr };
}

/**
 * Keeps a canvas sized to its CSS box without asking for layout on every
 * frame: a ResizeObserver records the box, and get() only resizes the
 * backing store when that changed. (getBoundingClientRect in a draw loop
 * forces a synchronous layout after each DOM text update.)
 */
export class CanvasFit {
  /** @param {HTMLCanvasElement} canvas */
  constructor(canvas) {
    this.canvas = canvas;
    const r = canvas.getBoundingClientRect();
    this.w = Math.max(1, Math.floor(r.width));
    this.h = Math.max(1, Math.floor(r.height));
    new ResizeObserver((entries) => {
      for (const e of entries) {
        this.w = Math.max(1, Math.floor(e.contentRect.width));
        this.h = Math.max(1, Math.floor(e.contentRect.height));
      }
    }).observe(canvas);
  }

  /**
   * Returns a context scaled to CSS pixels and the canvas's CSS size.
   * @returns {{ctx: CanvasRenderingContext2D, w: number, h: number, dpr: number}}
   */
  get() {
    const dpr = window.devicePixelRatio || 1;
    const c = this.canvas;
    const bw = Math.round(this.w * dpr);
    const bh = Math.round(this.h * dpr);
    if (c.width !== bw || c.height !== bh) {
      c.width = bw;
      c.height = bh;
    }
    const ctx = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return { ctx, w: this.w, h: this.h, dpr };
  }
}

/**
 * A floating tooltip that follows the pointer.
 */
export class Tooltip {
  constructor() {
    this.el = document.createElement('div');
    this.el.className = 'tooltip';
    this.el.hidden = true;
    this.el.setAttribute('role', 'tooltip');
    document.body.appendChild(this.el);
  }

  /**
   * Shows text near the pointer position (client coordinates).
   * @param {string} text
   * @param {number} x
   * @param {number} y
   */
  show(text, x, y) {
    this.el.textContent = text;
    this.el.hidden = false;
    const r = this.el.getBoundingClientRect();
    let left = x + 14;
    let top = y + 16;
    if (left + r.width > window.innerWidth - 4) left = x - r.width - 10;
    if (top + r.height > window.innerHeight - 4) top = y - r.height - 10;
    this.el.style.left = `${Math.max(4, left)}px`;
    this.el.style.top = `${Math.max(4, top)}px`;
  }

  /** Hides the tooltip. */
  hide() { this.el.hidden = true; }
}

/**
 * Redraws when an element changes size.
 * @param {Element} el
 * @param {() => void} draw
 */
export function onResize(el, draw) {
  let queued = false;
  new ResizeObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; draw(); });
  }).observe(el);
}
