// The SIT panel of the player: each touched segment's valid count, class
// and 512-bit map. Drawing only, on the canvas it is given; render.js
// re-exports it for player.js.
import { testBit } from './state.js';
import { contract, segmentStart } from './contract.js';
import { INK, INK2, INK3, LINE } from './palette.js';

const PER_BLOCK = contract().modes.perBlock;

/** Text colours of the status words: dark enough for 4.5:1 on white. */
const STATUS_INK = { prefree: '#9c3d00', dirty: '#005a8c' };

/**
 * Draws the SIT panel: each touched segment's valid count, class and
 * 512-bit map, newest activity first; in both mode the two engines' maps
 * side by side under column heads naming the modes.
 */
export class SITView {
  /** @param {HTMLCanvasElement} canvas */
  constructor(canvas) {
    this.canvas = canvas;
    this.scroll = 0;
    /** @type {import('./slotsview.js').ViewOptions|null} */
    this.opts = null;
    /** @type {{segs: number[], rowH: number, textW: number, mapX: number[], cell: number, top: number, cols: number}} */
    this.layout = { segs: [], rowH: 40, textW: 120, mapX: [], cell: 4, top: 0, cols: 64 };
    /** what the last draw showed; see draw */
    this.lastKey = '';
    /** the segments shown, first and last (1-based) */
    this.shown = [0, 0];
    /** painted maps by "mode:segno" */
    /** @type {Map<string, {seg: object, c: number, cols: number, img: ImageData}>} */
    this.cache = new Map();
  }

  /**
   * @param {import('./state.js').RunState} st
   * @param {{ctx: CanvasRenderingContext2D, w: number, h: number, dpr: number}} f
   */
  draw(st, f) {
    const { ctx, w, h, dpr } = f;
    const o = this.opts;
    const present = !!(o && o.present);
    const P = (/** @type {number} */ px) => (present ? Math.max(18, Math.round(px * 1.55)) : px);
    // Redraw only when the SIT, the size, the scroll or the view changed:
    // the maps are the costliest part of a frame and most steps leave them
    // alone.
    const key = `${st.ready}:${st.sitVersion}:${w}x${h}@${dpr}:${this.scroll}:${o ? o.version : 0}`;
    if (key === this.lastKey && f.ctx.canvas.width > 0) return;
    this.lastKey = key;
    ctx.clearRect(0, 0, w, h);
    if (!st.ready) return;
    const modes = st.modes;
    const segs = st.segmentsByActivity();
    // The label column fits its widest line ("valid 512 · 512").
    ctx.font = `${P(11.5)}px ui-monospace, monospace`;
    const textW = Math.max(present ? 150 : 96, Math.ceil(ctx.measureText(modes.length > 1 && !present ? 'valid 512 · 512' : 'seg 1234567').width) + 8);
    const top = P(11) + 6;
    const avail = (w - textW - 4 - (modes.length - 1) * 12) / modes.length;
    // The biggest bits that still show up to 5 segments at once, as 8
    // rows of 64 or 16 rows of 32, whichever gives bigger cells. Presenter
    // mode lists no more segments than their three label lines leave room
    // for: on a projector's short panel one legible map beats three flat
    // bars (the rest scroll with ↑ ↓).
    const labelH = 3 * P(12) + 12;
    const need = Math.max(1, Math.min(present ? 3 : 5, segs.length, present ? Math.floor((h - top) / labelH) : 5));
    const perRow = (h - top) / need - (present ? P(10.5) + 8 : 16); // the status line under each map
    let cols = 64;
    let cell = 0;
    for (const c of [64, 32]) {
      const fit = Math.min(Math.floor((avail / c) * 2) / 2, Math.floor((perRow / (512 / c)) * 2) / 2);
      if (fit > cell) { cell = fit; cols = c; }
    }
    // Whole device pixels per bit, so the cached maps line up exactly.
    cell = Math.max(1, Math.floor(Math.min(7, cell) * dpr)) / dpr;
    const rowsN = 512 / cols;
    const mapW = cell * cols;
    const mapH = cell * rowsN;
    const rowH = Math.max(mapH + P(10.5) + 8, present ? labelH : 40);
    const mapX = modes.map((_, i) => textW + i * (mapW + 12));
    this.layout = { segs, rowH, textW, mapX, cell, top, cols };
    ctx.textBaseline = 'middle';
    // Column heads: which mode each map shows.
    ctx.font = `600 ${P(11)}px system-ui, sans-serif`;
    ctx.fillStyle = INK;
    ctx.textAlign = 'left';
    modes.forEach((m, i) => {
      let head = `${m} mode`;
      if (ctx.measureText(head).width > mapW + 8) head = m;
      if (ctx.measureText(head).width > mapW + 8) head = m === PER_BLOCK ? 'per-blk' : 'batch';
      ctx.fillText(head, mapX[i], top / 2);
    });
    ctx.fillStyle = INK2;
    ctx.fillText('segment', 0, top / 2);
    if (segs.length === 0) {
      ctx.font = `${P(13)}px system-ui, sans-serif`;
      ctx.fillStyle = INK3;
      ctx.textAlign = 'left';
      ctx.fillText('the run touches no segment: no block is invalidated', 0, top + 14);
      return;
    }
    const visible = Math.max(1, Math.floor((h - top) / rowH));
    this.scroll = Math.max(0, Math.min(this.scroll, segs.length - visible));
    if (this.cache.size > 512) this.cache.clear();
    for (let r = 0; r < visible && r + this.scroll < segs.length; r++) {
      const segno = segs[r + this.scroll];
      const y = top + r * rowH;
      const first = st.per[modes[0]].segments.get(segno);
      ctx.textAlign = 'left';
      ctx.font = `600 ${P(13)}px ui-monospace, monospace`;
      ctx.fillStyle = INK;
      ctx.fillText(`seg ${segno}`, 0, y + P(13) / 2 + 2);
      ctx.font = `${P(11.5)}px ui-monospace, monospace`;
      ctx.fillStyle = INK2;
      // Valid blocks, in the modes' column order.
      const lineY = y + P(13) + P(11.5) / 2 + 5;
      if (modes.length > 1 && present) {
        modes.forEach((m, i) => ctx.fillText(`${m === PER_BLOCK ? 'pb' : 'bt'} ${st.per[m].segments.get(segno)?.valid ?? '?'}`, 0, lineY + i * (P(11.5) + 3)));
      } else {
        ctx.fillText(`valid ${modes.map((m) => st.per[m].segments.get(segno)?.valid ?? '?').join(' · ')}`, 0, lineY);
      }
      modes.forEach((m, i) => {
        const s = st.per[m].segments.get(segno);
        if (!s) return;
        this.drawMap(ctx, `${m}:${segno}`, s, mapX[i], y + 2, cell, cols, dpr);
        // The segment's class, in words, under its map.
        ctx.font = `${P(10.5)}px system-ui, sans-serif`;
        ctx.fillStyle = STATUS_INK[s.status] || INK2;
        ctx.textAlign = 'right';
        const word = s.status;
        const full = `${s.valid}/512 ${word}`;
        ctx.fillText(ctx.measureText(full).width <= mapW + 4 ? full : word, mapX[i] + mapW, y + mapH + P(10.5) / 2 + 4, mapW + 6);
        ctx.textAlign = 'left';
      });
      if (first && first.current) {
        ctx.strokeStyle = '#111';
        ctx.setLineDash([3, 2]);
        ctx.strokeRect(mapX[0] - 2.5, y - 0.5, mapX[modes.length - 1] + mapW - mapX[0] + 5, mapH + 5);
        ctx.setLineDash([]);
      }
    }
    this.shown = [this.scroll + 1, Math.min(segs.length, this.scroll + visible)];
  }

  /**
   * Draws one 512-bit map, cols bits a row, from a cache that is rebuilt
   * when the segment changes (the model replaces a segment object on
   * every change).
   * @param {CanvasRenderingContext2D} ctx
   * @param {string} key
   * @param {import('./state.js').Segment} s
   * @param {number} x0
   * @param {number} y0
   * @param {number} cell
   * @param {number} cols
   * @param {number} dpr
   */
  drawMap(ctx, key, s, x0, y0, cell, cols, dpr) {
    const c = Math.max(1, Math.round(cell * dpr));
    let e = this.cache.get(key);
    if (!e || e.seg !== s || e.c !== c || e.cols !== cols) {
      const img = ctx.createImageData(c * cols, c * (512 / cols));
      const d = img.data;
      const W = img.width;
      for (let k = 0; k < 512; k++) {
        const on = testBit(s.map, k);
        const bx = (k % cols) * c;
        const by = Math.floor(k / cols) * c;
        for (let yy = 0; yy < c; yy++) {
          for (let xx = 0; xx < c; xx++) {
            // A light grid line on the cell's right and bottom edge when
            // cells are big enough to carry one.
            const edge = c >= 4 && (xx === c - 1 || yy === c - 1);
            const v = on ? (edge ? 90 : 51) : (edge ? 228 : 255);
            const o = ((by + yy) * W + bx + xx) << 2;
            d[o] = v; d[o + 1] = on ? v + 13 : v; d[o + 2] = on ? v + 26 : v; d[o + 3] = 255;
          }
        }
      }
      e = { seg: s, c, cols, img };
      this.cache.set(key, e);
    }
    ctx.putImageData(e.img, Math.round(x0 * dpr), Math.round(y0 * dpr));
    ctx.strokeStyle = LINE;
    ctx.lineWidth = 1;
    ctx.strokeRect(x0 - 0.5, y0 - 0.5, e.img.width / dpr + 1, e.img.height / dpr + 1);
  }

  /**
   * Says what is under a point, for the tooltip.
   * @param {import('./state.js').RunState} st
   * @param {number} x
   * @param {number} y
   * @returns {string}
   */
  hit(st, x, y) {
    const L = this.layout;
    const r = Math.floor((y - L.top) / L.rowH);
    const segno = L.segs[r + this.scroll];
    if (segno === undefined || r < 0) return '';
    const lines = [`segment ${segno}`];
    const g = st.geometry;
    let k = -1;
    for (const mx of L.mapX) {
      const cx = Math.floor((x - mx) / L.cell);
      const cy = Math.floor((y - L.top - r * L.rowH - 2) / L.cell);
      if (cx >= 0 && cx < L.cols && cy >= 0 && cy < 512 / L.cols) k = cy * L.cols + cx;
    }
    if (k >= 0) lines.push(`block offset ${k}, address ${segmentStart(g, segno) + k}`);
    for (const m of st.modes) {
      const s = st.per[m].segments.get(segno);
      if (!s) continue;
      lines.push(`${m}: valid ${s.validBefore} → ${s.valid} of 512, ${s.status}${k >= 0 ? `, bit ${testBit(s.map, k) ? 'set' : 'clear'}` : ''}`);
    }
    return lines.join('\n');
  }
}
