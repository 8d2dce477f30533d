// A recording stand-in for CanvasRenderingContext2D and OffscreenCanvas, for the views' node tests
// (node has no canvas): every drawing call is kept with the styles it was made with, so a test can
// ask what was drawn where. Not a test file itself (node --test runs *.test.js only).

/** @typedef {{op: string, args: any[], fillStyle: any, strokeStyle: any, font: string, textAlign: string, alpha: number}} Op */

export class Fake2D {
  /** @param {number} [w] @param {number} [h] */
  constructor(w = 300, h = 150) {
    /** @type {any} */
    this.canvas = { width: w, height: h };
    /** @type {Op[]} */
    this.ops = [];
    this.fillStyle = '#000000';
    this.strokeStyle = '#000000';
    this.lineWidth = 1;
    this.font = '10px sans-serif';
    this.textAlign = 'start';
    this.textBaseline = 'alphabetic';
    this.globalAlpha = 1;
  }

  /** @param {string} op @param {any[]} args */
  rec(op, args) {
    this.ops.push({ op, args, fillStyle: this.fillStyle, strokeStyle: this.strokeStyle, font: this.font, textAlign: this.textAlign, alpha: this.globalAlpha });
  }

  fillRect(...a) { this.rec('fillRect', a); }
  strokeRect(...a) { this.rec('strokeRect', a); }
  clearRect(...a) { this.rec('clearRect', a); }
  fillText(...a) { this.rec('fillText', a); }
  strokeText(...a) { this.rec('strokeText', a); }
  beginPath() { this.rec('beginPath', []); }
  closePath() { this.rec('closePath', []); }
  moveTo(...a) { this.rec('moveTo', a); }
  lineTo(...a) { this.rec('lineTo', a); }
  arc(...a) { this.rec('arc', a); }
  rect(...a) { this.rec('rect', a); }
  fill() { this.rec('fill', []); }
  stroke() { this.rec('stroke', []); }
  clip() { this.rec('clip', []); }
  save() { this.rec('save', []); }
  restore() { this.rec('restore', []); }
  translate(...a) { this.rec('translate', a); }
  setTransform(...a) { this.rec('setTransform', a); }
  setLineDash(...a) { this.rec('setLineDash', a); }
  drawImage(...a) { this.rec('drawImage', a); }
  putImageData(...a) { this.rec('putImageData', a); }
  /** @param {string} t */
  measureText(t) { return { width: String(t).length * 6 }; }
  /** @param {number} w @param {number} h */
  createImageData(w, h) { return { width: w, height: h, data: new Uint8ClampedArray(w * h * 4) }; }
  createPattern() { return { pattern: 'hatch' }; }

  /** The fillRects, optionally only those in fill style s. */
  rects(s) {
    return this.ops.filter((o) => o.op === 'fillRect' && (s === undefined || o.fillStyle === s)).map((o) => o.args);
  }

  /** The strings drawn with fillText. */
  texts() {
    return this.ops.filter((o) => o.op === 'fillText').map((o) => String(o.args[0]));
  }

  /** Forgets what was drawn. */
  reset() { this.ops = []; }
}

/** Counts the offscreen canvases made, so a test can tell a cached bitmap from a repaint. */
export const offscreen = { made: 0 };

export class FakeOffscreenCanvas {
  /** @param {number} w @param {number} h */
  constructor(w, h) {
    offscreen.made++;
    this.width = w;
    this.height = h;
    this.ctx = new Fake2D(w, h);
    this.ctx.canvas = this;
  }

  getContext() { return this.ctx; }
}

/** Installs FakeOffscreenCanvas as the global OffscreenCanvas (the views and palette.js's hatch use it). */
export function installOffscreen() {
  /** @type {any} */ (globalThis).OffscreenCanvas = FakeOffscreenCanvas;
}
