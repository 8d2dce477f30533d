// The slot panel of the player: the whole range aggregated into one strip,
// the zoom lane around the cursor with the ghost of the slots before the
// run, and one strip per dnode chunk. Drawing only, on the canvas it is
// given; render.js re-exports it for player.js.
import { NULL_ADDR, NEW_ADDR, COMPRESS_ADDR, FLASH_MS, blockWord } from './state.js';
import { OI, hatch, INK, INK2, INK3, LINE, fillsFor } from './palette.js';
import { colourIndex, textOn } from './colour.js';
import { int } from './fmt.js';
import { columnStart, columnOf } from './columns.js';
import { contract, playedOf } from './contract.js';

const BATCHED = contract().modes.batched;

/** Width of the label column of the slot panel, in CSS pixels (presenter mode: wider). */
export const LABEL_W = 124;

/** Slot classes for aggregation; cnt[C_BRK] says a run break lies in the span. */
export const C_NULL = 0;
export const C_NEW = 1;
export const C_ADDR = 2;
export const C_BAD = 3;
export const C_FLASH = 4;
export const C_BRK = 5;
export const NCLS = 6;

/**
 * How the player draws: set by the page (colour choice, presenter mode, quiz).
 * @typedef {object} ViewOptions
 * @property {import('./colour.js').ColourContext} colour
 * @property {boolean} present large type for a projector: every canvas label at least 18 px
 * @property {boolean} quiz hide what would give an answer away (call markers on the slider)
 * @property {import('./quiz.js').Veil} [veil] what the open quiz question withholds (the tooltip
 *   and panels consult it; the colouring's plain and bounds follow it)
 * @property {number} version bumped whenever any of the above changes
 */

/**
 * Returns the font size to use for a label drawn at px: in presenter mode
 * at least 18 px, and larger in proportion.
 * @param {ViewOptions} o
 * @param {number} px
 * @returns {number}
 */
export function fontPx(o, px) {
  return o.present ? Math.max(18, Math.round(px * 1.55)) : px;
}

/**
 * Returns the runs the view draws (their breaks), or null: colouring by run, unless a quiz
 * question withholds the colouring.
 * @param {ViewOptions} o
 * @returns {import('./colour.js').RunMap|null}
 */
export function runsShown(o) {
  return o.colour.by === 'run' && !o.colour.plain ? o.colour.runs : null;
}

/**
 * Reports whether an address is drawn as invalid for lying outside the main area: always, unless
 * a quiz question withholds segments (what f2fs_is_valid_blkaddr finds is its answer).
 * @param {ViewOptions} o
 * @param {{mainBlkaddr: number, maxBlkaddr: number}} g
 * @param {number} v
 * @returns {boolean}
 */
export function outside(o, g, v) {
  return o.colour.bounds !== false && (v < g.mainBlkaddr || v >= g.maxBlkaddr);
}

/**
 * The colouring the view draws with: the user's, or "plain" while a quiz withholds it.
 * @param {ViewOptions} o
 * @returns {string}
 */
export function drawnBy(o) {
  return o.colour.plain ? 'plain' : o.colour.by;
}

/**
 * Counts the slot classes of [a, b) of the state's slots.
 * @param {import('./state.js').RunState} st
 * @param {ViewOptions} o
 * @param {number} a
 * @param {number} b
 * @param {Uint32Array} cnt NCLS counters, overwritten
 * @param {number} K palette size
 * @returns {number} the palette index of the first address in the span, or -1
 */
export function classify(st, o, a, b, cnt, K) {
  cnt.fill(0);
  let key = -1;
  const s = st.slots;
  const g = st.geometry;
  const marks = st.flash.size > 0 || st.bad.size > 0;
  for (let i = a; i < b; i++) {
    const v = s[i];
    if (marks && st.flash.has(i)) cnt[C_FLASH]++;
    else if (marks && st.bad.has(i)) cnt[C_BAD]++;
    else if (v === NULL_ADDR) cnt[C_NULL]++;
    else if (v === NEW_ADDR) cnt[C_NEW]++;
    else if (v === COMPRESS_ADDR || outside(o, g, v)) cnt[C_BAD]++;
    else {
      cnt[C_ADDR]++;
      if (key < 0) key = colourIndex(o.colour, i, v, K);
    }
  }
  const runs = runsShown(o);
  if (runs && runs.breakIn(a, b)) cnt[C_BRK] = 1;
  return key;
}

/**
 * Draws one strip of count slots in the box (x0, y0, w, h). Each device
 * pixel column shows the classes of its slots stacked by proportion
 * (flash, invalid, address, NEW, NULL from the top), so a 1018-slot chunk
 * in 300 pixels still shows where the holes and runs are. Neighbouring
 * columns that look the same are merged into one rectangle, so a uniform
 * strip costs a few fillRect calls whatever its length. A column holding
 * the start of a physical run gets a dark bar: the break between two runs
 * shows at any zoom, and not by colour alone.
 * @param {CanvasRenderingContext2D} ctx
 * @param {CanvasPattern|string} newFill the NEW_ADDR hatch
 * @param {readonly string[]} fills address colours by palette index
 * @param {number} x0
 * @param {number} y0
 * @param {number} w CSS px
 * @param {number} h CSS px
 * @param {number} dpr
 * @param {number} count slots in the strip
 * @param {Uint32Array} cnt scratch, filled by col
 * @param {(x: number, a: number, b: number) => number} col fills cnt for
 *   column x (slots [a, b) of the strip) and returns the palette index
 */
export function drawStrip(ctx, newFill, fills, x0, y0, w, h, dpr, count, cnt, col) {
  const cols = Math.max(1, Math.min(count, Math.round(w * dpr)));
  const cw = w / cols;
  const ph = Math.max(1, Math.round(h * dpr)); // device rows, for rounding
  const minH = Math.max(1, Math.round(ph / 4));
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(x0, y0, w, h);
  // The run of identical columns being merged: its first column and its
  // stack heights in device px (flash, bad, address, NEW) and colour.
  let runX = -1;
  let f0 = 0;
  let f1 = 0;
  let f2 = 0;
  let f3 = 0;
  let hue = 0;
  /** @type {number[]} columns holding a run break */
  const breaks = [];
  const flush = (/** @type {number} */ endX) => {
    if (runX < 0) return;
    const x = x0 + runX * cw;
    const ww = (endX - runX) * cw;
    let y = 0;
    if (f0) { ctx.fillStyle = OI.yellow; ctx.fillRect(x, y0, ww, (f0 / ph) * h); y += f0; }
    if (f1) { ctx.fillStyle = OI.vermillion; ctx.fillRect(x, y0 + (y / ph) * h, ww, (f1 / ph) * h); y += f1; }
    if (f2) { ctx.fillStyle = fills[hue] || fills[0]; ctx.fillRect(x, y0 + (y / ph) * h, ww, (f2 / ph) * h); y += f2; }
    if (f3) { ctx.fillStyle = newFill; ctx.fillRect(x, y0 + (y / ph) * h, ww, (f3 / ph) * h); }
  };
  for (let x = 0; x < cols; x++) {
    const a = columnStart(x, count, cols);
    const b = columnStart(x + 1, count, cols);
    const key = col(x, a, b);
    const tot = cnt[0] + cnt[1] + cnt[2] + cnt[3] + cnt[4];
    let hf = 0;
    let hb = 0;
    let ha = 0;
    let hn = 0;
    if (tot) {
      // A few blocks among thousands of holes must still show: the rare
      // classes get at least a quarter of the strip's height.
      if (cnt[C_FLASH]) hf = Math.max(minH, Math.round((cnt[C_FLASH] / tot) * ph));
      if (cnt[C_BAD]) hb = Math.max(minH, Math.round((cnt[C_BAD] / tot) * ph));
      if (cnt[C_ADDR]) ha = Math.max(minH, Math.round((cnt[C_ADDR] / tot) * ph));
      if (hf + hb + ha > ph) { hf = Math.min(hf, ph); hb = Math.min(hb, ph - hf); ha = Math.min(ha, ph - hf - hb); }
      if (!cnt[C_NULL]) hn = Math.max(0, ph - hf - hb - ha);
      else if (cnt[C_NEW]) hn = Math.min(ph - hf - hb - ha, Math.max(1, Math.round((cnt[C_NEW] / tot) * ph)));
    }
    if (cnt[C_BRK]) breaks.push(x);
    const sh = key >= 0 ? key : 0;
    if (runX < 0 || hf !== f0 || hb !== f1 || ha !== f2 || hn !== f3 || (ha && sh !== hue)) {
      flush(x);
      runX = x;
      f0 = hf; f1 = hb; f2 = ha; f3 = hn; hue = sh;
    }
  }
  flush(cols);
  // At 4 px or more per slot, thin gaps show the slot boundaries.
  if (cw >= 4) {
    ctx.fillStyle = '#ffffff';
    for (let x = 1; x < cols; x++) ctx.fillRect(x0 + x * cw - 0.5, y0, 1, h);
  }
  if (breaks.length) {
    // A white halo and a dark bar, two device pixels wide: visible on any
    // fill, at any zoom.
    const bw = 2 / dpr;
    for (const x of breaks) {
      const bx = x0 + x * cw;
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(bx - bw, y0, 3 * bw, h);
      ctx.fillStyle = INK;
      ctx.fillRect(bx - bw / 2, y0 - 1, bw, h + 2);
    }
  }
  ctx.strokeStyle = LINE;
  ctx.lineWidth = 1;
  ctx.strokeRect(x0 - 0.5, y0 - 0.5, w + 1, h + 1);
}

/**
 * Returns a signature of slots [from, from+len): it changes when a slot's
 * value, flash or invalid mark changes (collisions are possible but
 * harmless: a strip would show one stale frame).
 * @param {import('./state.js').RunState} st
 * @param {number} from
 * @param {number} len
 * @param {number} version the view options' version (colours)
 * @returns {number}
 */
function rowSig(st, from, len, version) {
  const s = st.slots;
  let h = Math.imul(0x811c9dc5 ^ version, 16777619);
  for (let i = from; i < from + len; i++) h = Math.imul(h ^ s[i], 16777619);
  if (st.flash.size || st.bad.size) {
    for (let i = from; i < from + len; i++) {
      if (st.flash.has(i)) h = Math.imul(h ^ (i + 1), 2246822519);
      if (st.bad.has(i)) h = Math.imul(h ^ (i + 7), 3266489917);
    }
  }
  return h;
}

/**
 * Per-column class counts of the whole range, kept up to date
 * incrementally: a 2.3-million-slot range is classified once, then only
 * the columns holding changed slots are recounted.
 */
export class Overview {
  constructor() {
    this.pw = 0;
    this.n = 0;
    this.counts = new Uint32Array(0);
    this.keys = new Int32Array(0);
    this.brk = new Uint8Array(0);
    /** @type {Uint32Array|null} the slots array the cache was built from */
    this.of = null;
    this.version = -1;
  }

  /**
   * Brings the cache up to date for width pw (device px).
   * @param {import('./state.js').RunState} st
   * @param {ViewOptions} o
   * @param {number} pw
   * @param {Uint32Array} cnt scratch
   * @param {number} K palette size
   */
  update(st, o, pw, cnt, K) {
    const n = st.n;
    const full = st.changed === null || pw !== this.pw || n !== this.n || this.of !== st.slots || this.version !== o.version;
    if (full) {
      this.pw = pw;
      this.n = n;
      this.of = st.slots;
      this.version = o.version;
      this.counts = new Uint32Array(pw * NCLS);
      this.keys = new Int32Array(pw);
      this.brk = new Uint8Array(pw);
      // The slots are the model's extents (initial map and changes, kept
      // up to date on every frame): count from those (a few runs) rather
      // than from millions of slots, then recount only the columns holding
      // a flash or an invalid mark, which extents do not carry.
      if (st.initialComplete && st.extents.length + st.flash.size + st.bad.size < n && n >= pw) {
        this.fromExtents(st, o, K);
        const seen = new Set();
        for (const marks of [st.flash.keys(), st.bad.values()]) {
          for (const i of marks) {
            const x = columnOf(i, n, pw);
            if (seen.has(x)) continue;
            seen.add(x);
            this.recount(st, o, x, cnt, K);
          }
        }
      } else {
        for (let x = 0; x < pw; x++) this.recount(st, o, x, cnt, K);
      }
    } else if (st.changed && st.changed.length) {
      const seen = new Set();
      for (const i of st.changed) {
        const x = columnOf(i, n, pw);
        if (seen.has(x)) continue;
        seen.add(x);
        this.recount(st, o, x, cnt, K);
      }
    }
  }


  /**
   * Fills the counts from the state's extents; needs n ≥ pw, so that the
   * columns partition the slots.
   * @param {import('./state.js').RunState} st
   * @param {ViewOptions} o
   * @param {number} K
   */
  fromExtents(st, o, K) {
    const n = this.n;
    const pw = this.pw;
    const base = st.range.start;
    const g = st.geometry;
    const c = this.counts;
    this.keys.fill(-1);
    for (const e of st.extents) {
      let a = Math.max(0, e.index - base);
      const b = Math.min(n, e.index - base + e.count);
      if (b <= a || e.state === 'null') continue;
      while (a < b) {
        const x = columnOf(a, n, pw);
        const end = Math.min(b, columnStart(x + 1, n, pw));
        const k = end - a;
        if (e.state === 'new') c[x * NCLS + C_NEW] += k;
        else if (e.state === 'addr') {
          const addr = (e.addr || 0) + (a - (e.index - base));
          // Addresses outside [main_blkaddr, MAX_BLKADDR) are invalid; a
          // run is contiguous, so only its ends can cross those bounds.
          const bounded = o.colour.bounds !== false;
          const lo = bounded ? Math.min(k, Math.max(0, g.mainBlkaddr - addr)) : 0;
          const hi = bounded ? Math.min(k, Math.max(lo, g.maxBlkaddr - addr)) : k;
          c[x * NCLS + C_BAD] += k - (hi - lo);
          if (hi > lo) {
            c[x * NCLS + C_ADDR] += hi - lo;
            if (this.keys[x] < 0) this.keys[x] = colourIndex(o.colour, a + lo, addr + lo, K);
          }
        } else c[x * NCLS + C_BAD] += k;
        a = end;
      }
    }
    for (let x = 0; x < pw; x++) {
      const lo = columnStart(x, n, pw);
      const hi = columnStart(x + 1, n, pw);
      const q = x * NCLS;
      c[q + C_NULL] = Math.max(0, hi - lo - c[q + C_NEW] - c[q + C_ADDR] - c[q + C_BAD]);
    }
    const runs = runsShown(o);
    if (runs) {
      for (let k = 1; k < runs.starts.length; k++) {
        const i = runs.starts[k];
        if (i < n) this.brk[columnOf(i, n, pw)] = 1;
      }
    }
    for (let x = 0; x < pw; x++) c[x * NCLS + C_BRK] = this.brk[x];
  }

  /**
   * @param {import('./state.js').RunState} st
   * @param {ViewOptions} o
   * @param {number} x
   * @param {Uint32Array} cnt
   * @param {number} K
   */
  recount(st, o, x, cnt, K) {
    const a = columnStart(x, this.n, this.pw);
    const b = columnStart(x + 1, this.n, this.pw);
    this.keys[x] = classify(st, o, a, b, cnt, K);
    this.brk[x] = cnt[C_BRK];
    this.counts.set(cnt, x * NCLS);
  }
}

/**
 * Draws the slot panel: the whole range (aggregated), a readable zoom
 * around the cursor with the slots as they were before the run under it
 * (the ghost strip), and one strip per dnode chunk.
 */
export class SlotsView {
  /** @param {HTMLCanvasElement} canvas */
  constructor(canvas) {
    this.canvas = canvas;
    this.cnt = new Uint32Array(NCLS);
    this.overview = new Overview();
    /** row on screen → its strip's bitmap and the signature of what it shows */
    /** @type {Map<number, {canvas: OffscreenCanvas, octx: OffscreenCanvasRenderingContext2D, bw: number, bh: number, sig: number}>} */
    this.rows = new Map();
    /** @type {ViewOptions} */
    this.opts = { colour: { by: 'run', runs: null, geometry: { mainBlkaddr: 0, maxBlkaddr: 0, blocksPerSeg: 512 }, segTypes: new Map() }, present: false, quiz: false, version: 0 };

    /** cell width of the zoom lane, CSS px (wheel and +/- change it) */
    this.cell = 16;
    /** slot the zoom lane is pinned at, or null to follow the cursor */
    /** @type {number|null} */
    this.pin = null;
    /** first chunk row shown, when the user scrolled; null = follow */
    /** @type {number|null} */
    this.rowScroll = null;
    this.layout = { w: 0, h: 0, labelW: LABEL_W, zoomY: 0, zoomFrom: 0, zoomCount: 0, zoomH: 22, zoomLines: 1, zoomPerLine: 1, zoomStep: 48,
      rowsY: 0, rowH: 14, firstRow: 0, rows: 0, stripW: 0, ovY: 12, ovH: 14 };
  }

  /**
   * @param {import('./state.js').RunState} st
   * @param {{ctx: CanvasRenderingContext2D, w: number, h: number, dpr: number}} f
   * @param {number} now
   */
  draw(st, f, now) {
    const { ctx, w, h, dpr } = f;
    const o = this.opts;
    const P = (/** @type {number} */ px) => fontPx(o, px);
    ctx.clearRect(0, 0, w, h);
    if (!st.ready) return;
    const n = st.n;
    const labelW = o.present ? 190 : LABEL_W;
    const stripX = labelW;
    const stripW = Math.max(40, w - labelW - 6);
    const cur = st.pointer();
    const curOff = cur - st.range.start;
    const L = this.layout;
    L.w = w; L.h = h; L.stripW = stripW; L.labelW = labelW;
    const fills = fillsFor(drawnBy(o));
    const K = fills.length;
    ctx.textBaseline = 'middle';

    // 1. The whole range, aggregated, with the chunk boundaries.
    const ovH = o.present ? 22 : 14;
    const ovY = o.present ? 16 : 12;
    L.ovY = ovY; L.ovH = ovH;
    ctx.font = `${P(12)}px system-ui, sans-serif`;
    ctx.fillStyle = INK2;
    ctx.textAlign = 'left';
    ctx.fillText(o.present ? 'whole range' : `range ${int(st.range.start)}…${int(Math.max(st.range.start, st.range.end - 1))}`, 0, ovY + ovH / 2);
    const hp = hatch(ctx, dpr);
    if (n > 0) {
      const ov = this.overview;
      const cols = Math.max(1, Math.min(n, Math.round(stripW * dpr)));
      ov.update(st, o, cols, this.cnt, K);
      drawStrip(ctx, hp, fills, stripX, ovY, stripW, ovH, dpr, n, this.cnt, (x) => {
        this.cnt.set(ov.counts.subarray(x * NCLS, x * NCLS + NCLS));
        return ov.keys[x];
      });
    }
    // Everything changed so far is now drawn.
    st.changed = [];
    if (st.chunks.length < stripW / 3) {
      ctx.fillStyle = 'rgba(29,35,42,.6)';
      for (const c of st.chunks) {
        const x = stripX + ((c.start - st.range.start) / Math.max(1, n)) * stripW;
        ctx.fillRect(Math.round(x), ovY - 3, 1, 3);
      }
    }
    if (n > 0) triangle(ctx, stripX + ((curOff + 0.5) / n) * stripW, ovY - 1, o.present ? 9 : 6, INK);
    // The pending run over the whole range too: at this scale it shows a
    // run reaching across NEW slots and holes.
    const rs = st.runStart(BATCHED);
    if (rs !== null && n > 0) {
      const xa = stripX + ((rs - st.range.start) / n) * stripW;
      const xb = stripX + ((st.per[BATCHED].cursor - st.range.start) / n) * stripW;
      ctx.strokeStyle = INK;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(xa, ovY + ovH + 5);
      ctx.lineTo(xa, ovY + ovH + 2);
      ctx.moveTo(xa, ovY + ovH + 5);
      ctx.lineTo(Math.max(xa + 1, xb), ovY + ovH + 5);
      ctx.lineTo(Math.max(xa + 1, xb), ovY + ovH + 2);
      ctx.stroke();
      ctx.lineWidth = 1;
    }

    // 2. The zoom lane around the cursor (or the pinned slot): one line of
    // readable cells, or several when few chunks leave room (a small file
    // then shows whole). Under each line, a ghost strip: the same slots as
    // they were before the run.
    // Presenter mode on a short panel (a projector's) narrows the gap above the lane to what the
    // pending run's 18 px label over the lane needs, and the lane is never lower than its two label
    // lines ("at the cursor" and the chunk), so they clear "before".
    const zY = ovY + ovH + (o.present ? (h < 220 ? 34 : 44) : 30);
    const zH = o.present ? Math.max(2 * P(12) + 4, Math.min(46, Math.floor(h / 9))) : Math.max(22, Math.min(34, Math.floor(h / 10)));
    const ghostH = o.present ? 12 : 8;
    const tickH = P(10) + 8;
    const lineStep = zH + 3 + ghostH + tickH;
    const cell = o.present ? Math.max(this.cell, 26) : this.cell;
    const perLine = Math.max(1, Math.floor(stripW / cell));
    const nc0 = st.chunks.length;
    const rowsNeed = Math.min(nc0, 12) * (o.present ? 24 : 16) + 30;
    const spare = h - zY - rowsNeed;
    let lines = Math.max(1, Math.min(6, Math.floor((spare + lineStep - zH) / lineStep)));
    lines = Math.min(lines, Math.max(1, Math.ceil(n / perLine)));
    const zCount = Math.max(1, Math.min(n, perLine * lines));
    const center = this.pin ?? curOff;
    let zFrom = Math.max(0, Math.min(n - zCount, Math.floor(center - zCount / 2)));
    // Several lines move a whole line at a time, so cells do not reflow
    // under the viewer's eyes at every step. The cursor's line sits in the
    // middle.
    if (lines > 1) {
      zFrom = Math.max(0, Math.min(n - zCount, (Math.floor(center / perLine) - Math.floor(lines / 2)) * perLine));
    }
    L.zoomY = zY; L.zoomFrom = zFrom; L.zoomCount = zCount; L.zoomH = zH;
    L.zoomLines = lines; L.zoomPerLine = perLine; L.zoomStep = lineStep;
    ctx.fillStyle = INK2;
    ctx.textAlign = 'left';
    ctx.font = `${P(12)}px system-ui, sans-serif`;
    const ci = st.chunkOf(st.range.start + Math.min(n - 1, Math.max(0, center)));
    ctx.fillText(this.pin === null ? 'at the cursor' : 'pinned', 0, zY + zH / 2 - P(12) / 2 - 1);
    ctx.fillStyle = INK3;
    ctx.fillText(ci >= 0 ? st.chunks[ci].path : '', 0, zY + zH / 2 + P(12) / 2 + 1, labelW - 6);
    ctx.fillStyle = INK3;
    ctx.font = `${P(10)}px system-ui, sans-serif`;
    ctx.fillText('before', 0, zY + zH + 3 + ghostH / 2);
    for (let l = 0; l < lines; l++) {
      const from = zFrom + l * perLine;
      const count = Math.min(perLine, zFrom + zCount - from);
      if (count <= 0) break;
      this.drawZoom(ctx, st, hp, fills, stripX, zY + l * lineStep, count, cell, zH, ghostH, from, now, curOff, l === 0, dpr);
    }

    // 3. One strip per chunk.
    const rowsY = zY + (lines - 1) * lineStep + zH + 3 + ghostH + tickH + P(11) + 8;
    const avail = h - rowsY;
    const nc = st.chunks.length;
    const minRow = o.present ? 22 : 12;
    const rowH = Math.max(minRow, Math.min(o.present ? 30 : 24, Math.floor(avail / Math.max(1, nc))));
    const rows = Math.max(0, Math.min(nc, Math.floor(avail / rowH)));
    const curChunk = Math.max(0, st.chunkOf(cur));
    let first = this.rowScroll ?? Math.max(0, Math.min(nc - rows, curChunk - Math.floor(rows / 2)));
    first = Math.max(0, Math.min(Math.max(0, nc - rows), first));
    L.rowsY = rowsY; L.rowH = rowH; L.firstRow = first; L.rows = rows;
    /** room the "chunks a–b of n" count takes at the heading's right, px */
    let countW = 0;
    if (rows > 0) {
      // The chunk with the most slots sets the scale, so strips of
      // different capacity (873-slot inode, 1018-slot direct nodes) line up.
      let maxLen = 1;
      for (const c of st.chunks) maxLen = Math.max(maxLen, c.len);
      if (this.rows.size > rows + 8) this.rows.clear();
      for (let r = 0; r < rows; r++) {
        const k = first + r;
        const c = st.chunks[k];
        const from = c.start - st.range.start;
        const sw = (c.len / maxLen) * stripW;
        const sh = rowH - 3;
        // The bitmap has a 1 px margin for the strip's outline.
        const bw = Math.ceil((sw + 2) * dpr);
        const bh = Math.ceil((sh + 2) * dpr);
        // Chunk strips are repainted only when their slots changed (a
        // cheap signature tells, full frames included); the others are
        // copied from their cached bitmaps.
        // The bitmaps belong to the rows on screen, not to chunks: a fast
        // run scrolls through thousands of chunks, and a new bitmap for each
        // would be an allocation per row per frame.
        const sig = rowSig(st, from, c.len, o.version) ^ Math.imul(k + 1, 2654435761);
        let e = this.rows.get(r);
        if (!e || e.bw !== bw || e.bh !== bh) {
          const canvas = new OffscreenCanvas(bw, bh);
          const octx = /** @type {OffscreenCanvasRenderingContext2D} */ (canvas.getContext('2d'));
          e = { canvas, octx, bw, bh, sig: NaN };
          this.rows.set(r, e);
        }
        if (e.sig !== sig) {
          e.sig = sig;
          e.octx.setTransform(1, 0, 0, 1, 0, 0);
          e.octx.clearRect(0, 0, bw, bh);
          e.octx.setTransform(dpr, 0, 0, dpr, 0, 0);
          drawStrip(/** @type {any} */ (e.octx), hatch(/** @type {any} */ (e.octx), dpr), fills, 1, 1, sw, sh, dpr, c.len, this.cnt,
            (x, a, b) => classify(st, o, from + a, from + b, this.cnt, K));
        }
        ctx.drawImage(e.canvas, stripX - 1, rowsY + r * rowH - 1, bw / dpr, bh / dpr);
      }
      ctx.textAlign = 'left';
      const fs = o.present ? Math.max(18, Math.min(22, rowH - 4)) : (rowH >= 15 ? 12 : 11);
      ctx.font = `${fs}px ui-monospace, monospace`;
      const maxChars = Math.max(6, Math.floor((labelW - 8) / (fs * 0.62)));
      for (let r = 0; r < rows; r++) {
        const k = first + r;
        const c = st.chunks[k];
        const y = rowsY + r * rowH;
        if (k === curChunk) {
          ctx.fillStyle = 'rgba(86,180,233,.25)';
          ctx.fillRect(0, y - 1, labelW - 4, rowH - 1);
        }
        ctx.fillStyle = k === curChunk ? INK : INK2;
        // "+": the node does not exist yet; ALLOC_NODE creates it.
        const label = `${c.path}${c.missing ? ' +' : ''}`;
        ctx.fillText(label.length > maxChars ? `${label.slice(0, maxChars - 1)}…` : label, 4, y + (rowH - 3) / 2);
        const pw = (c.len / maxLen) * stripW;
        if (k === curChunk && c.len > 0) {
          const cx = stripX + ((cur - c.start + 0.5) / c.len) * pw;
          triangle(ctx, cx, y - 1, o.present ? 7 : 5, INK);
        }
      }
      if (nc > rows) {
        ctx.fillStyle = INK3;
        ctx.font = `${P(11)}px system-ui, sans-serif`;
        ctx.textAlign = 'right';
        const shown = `chunks ${int(first + 1)}–${int(first + rows)} of ${int(nc)}`;
        ctx.fillText(shown, w - 4, rowsY - P(11) / 2 - 4);
        countW = ctx.measureText(shown).width + 12;
      }
    }
    ctx.font = `${P(11)}px system-ui, sans-serif`;
    ctx.textAlign = 'left';
    ctx.fillStyle = INK3;
    // The title gives up its explanation before it runs into the count on its right (a phone).
    // The function the call runs per dnode (its declaration's: f2fs_do_zero_range for a zero,
    // f2fs_truncate_data_blocks_range for a punch or truncate).
    const perDnode = (playedOf(st.info.op) || contract().played[0]).perDnode;
    const titles = o.present ? ['dnode chunks'] : [`dnode chunks (one ${perDnode} call each)`, 'dnode chunks (one call each)', 'dnode chunks'];
    // No room for a chunk's strip, no title either (it would be drawn past the canvas's edge).
    if (rows > 0) ctx.fillText(fitText(ctx, titles, w - 4 - countW), 0, rowsY - P(11) / 2 - 4);
  }

  /**
   * Draws one line of the zoom lane: one readable cell per slot with its
   * pattern, a bar where a physical run begins, the ghost strip of the
   * slots before the run, index ticks, the pending run's bracket and the
   * cursor.
   * @param {CanvasRenderingContext2D} ctx
   * @param {import('./state.js').RunState} st
   * @param {CanvasPattern|string} hp the NEW_ADDR hatch
   * @param {readonly string[]} fills
   * @param {number} x0
   * @param {number} y0
   * @param {number} count
   * @param {number} cell
   * @param {number} hgt
   * @param {number} ghostH
   * @param {number} from
   * @param {number} now
   * @param {number} curOff
   * @param {boolean} firstLine label the pending run here if it starts earlier
   * @param {number} dpr
   */
  drawZoom(ctx, st, hp, fills, x0, y0, count, cell, hgt, ghostH, from, now, curOff, firstLine, dpr) {
    const g = st.geometry;
    const o = this.opts;
    const K = fills.length;
    const gap = cell >= 8 ? 1 : 0;
    const isBad = (/** @type {number} */ v) => v !== NULL_ADDR && v !== NEW_ADDR && (v === COMPRESS_ADDR || outside(o, g, v));
    const runs = runsShown(o);
    ctx.lineWidth = 1;
    const gy = y0 + hgt + 3;
    for (let k = 0; k < count; k++) {
      const i = from + k;
      const v = st.slots[i];
      const x = x0 + k * cell;
      const fl = st.flash.get(i);
      const bad = st.bad.has(i) || isBad(v);
      if (fl !== undefined) {
        // Fade from yellow to the NEW hatch over FLASH_MS.
        ctx.fillStyle = hp;
        ctx.fillRect(x + gap, y0, cell - gap, hgt);
        ctx.globalAlpha = Math.max(0, 1 - (now - fl) / FLASH_MS);
        ctx.fillStyle = OI.yellow;
        ctx.fillRect(x + gap, y0, cell - gap, hgt);
        ctx.globalAlpha = 1;
      } else if (bad) {
        ctx.fillStyle = OI.vermillion;
        ctx.fillRect(x + gap, y0, cell - gap, hgt);
        if (cell >= 8) cross(ctx, x + gap, y0, cell - gap, hgt);
      } else if (v === NULL_ADDR) {
        ctx.fillStyle = '#fff';
        ctx.fillRect(x + gap, y0, cell - gap, hgt);
        ctx.strokeStyle = '#6b7682';
        ctx.strokeRect(x + gap + 0.5, y0 + 0.5, cell - gap - 1, hgt - 1);
      } else if (v === NEW_ADDR) {
        ctx.fillStyle = hp;
        ctx.fillRect(x + gap, y0, cell - gap, hgt);
      } else {
        ctx.fillStyle = fills[colourIndex(o.colour, i, v, K)];
        ctx.fillRect(x + gap, y0, cell - gap, hgt);
      }
      // The ghost: the slot before the run, in the same colours, thinner.
      const b0 = st.initial[i];
      if (b0 === NULL_ADDR) {
        ctx.strokeStyle = '#6b7682';
        ctx.strokeRect(x + gap + 0.5, gy + 0.5, cell - gap - 1, ghostH - 1);
      } else if (b0 === NEW_ADDR) {
        ctx.fillStyle = hp;
        ctx.fillRect(x + gap, gy, cell - gap, ghostH);
      } else if (isBad(b0)) {
        ctx.fillStyle = OI.vermillion;
        ctx.fillRect(x + gap, gy, cell - gap, ghostH);
      } else {
        ctx.fillStyle = fills[colourIndex(o.colour, i, b0, K)];
        ctx.fillRect(x + gap, gy, cell - gap, ghostH);
      }
    }
    // Where a physical run begins (not the first): a dark bar through the
    // cell row and the ghost, with a white halo.
    if (runs) {
      const a = runs.runAt(from);
      const r0 = a >= 0 && runs.starts[a] >= from ? a : a + 1;
      for (let r = Math.max(1, r0); r < runs.starts.length; r++) {
        const i = runs.starts[r];
        if (i >= from + count) break;
        const bx = x0 + (i - from) * cell;
        ctx.fillStyle = '#fff';
        ctx.fillRect(bx - 2, y0 - 3, 4 + gap, hgt + ghostH + 6);
        ctx.fillStyle = INK;
        ctx.fillRect(bx - 1 + gap / 2, y0 - 3, 2.5, hgt + ghostH + 6);
      }
    }
    // Zoomed in far enough, each address cell names its block.
    if (cell >= 34) {
      ctx.font = `${o.present ? 18 : 9}px ui-monospace, monospace`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      for (let k = 0; k < count; k++) {
        const i = from + k;
        const v = st.slots[i];
        if (v === NULL_ADDR || v === NEW_ADDR || isBad(v) || st.flash.has(i)) continue;
        ctx.fillStyle = textOn(fills[colourIndex(o.colour, i, v, K)], INK);
        ctx.fillText(String(v), x0 + k * cell + cell / 2, y0 + hgt / 2, cell - 3);
      }
    }
    // Index ticks every 8 slots (or so), so a slot can be named.
    ctx.fillStyle = INK2;
    const tf = fontPx(o, 10);
    ctx.font = `${tf}px ui-monospace, monospace`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const labelPx = tf * 0.62 * 7 + 6;
    let every = 8;
    while (every * cell < labelPx) every *= 2;
    const ty = gy + ghostH + 1;
    // A panel too short for the labels (a projector's, in presenter mode) keeps the ticks and drops
    // the numbers rather than cut them at the canvas's edge: the line under the canvas names the slot.
    const labels = this.layout.h <= 0 || ty + 3 + tf <= this.layout.h; // 0: not laid out yet
    for (let k = 0; k < count; k++) {
      const idx = st.range.start + from + k;
      if (idx % every !== 0) continue;
      const x = x0 + k * cell + cell / 2;
      ctx.fillRect(Math.round(x), ty, 1, 3);
      if (labels) ctx.fillText(int(idx), x, ty + 3);
    }
    ctx.textBaseline = 'middle';
    // Pending run bracket (batched): from the slot that started the run
    // to the cursor.
    const bt = st.per[BATCHED];
    const rs = st.runStart(BATCHED);
    if (bt && bt.pending && rs !== null) {
      const startOff = rs - st.range.start;
      const endOff = bt.cursor - 1 - st.range.start;
      const a = Math.max(startOff, from);
      const b = Math.min(endOff, from + count - 1);
      if (b >= a) {
        const xa = x0 + (a - from) * cell + 1;
        const xb = x0 + (b - from + 1) * cell;
        const y = y0 - 5;
        ctx.strokeStyle = INK;
        ctx.lineWidth = 2;
        ctx.beginPath();
        if (startOff >= from) { ctx.moveTo(xa, y0 - 1); ctx.lineTo(xa, y); } else ctx.moveTo(xa, y);
        ctx.lineTo(xb, y);
        if (endOff <= from + count - 1) ctx.lineTo(xb, y0 - 1);
        ctx.stroke();
        ctx.lineWidth = 1;
        if (startOff >= from || firstLine) {
          ctx.fillStyle = INK;
          ctx.font = `${fontPx(o, 11)}px ui-monospace, monospace`;
          ctx.textAlign = 'left';
          const label = `pending run (${blockWord(bt.pending.start)}, ${bt.pending.len})`;
          // Presenter mode's 10 px cursor triangle reaches above the bracket: the label clears it.
          ctx.fillText(label, Math.min(Math.max(x0, xa), x0 + count * cell - ctx.measureText(label).width), y - fontPx(o, 11) / 2 - (o.present ? 6 : 2));
        }
      }
    }
    // Cursor.
    if (curOff >= from && curOff < from + count) {
      const x = x0 + (curOff - from) * cell + cell / 2;
      triangle(ctx, x, y0 - 1, o.present ? 10 : 7, INK);
    }
  }

  /**
   * Says what is under a point (CSS px in the canvas), for the tooltip.
   * @param {import('./state.js').RunState} st
   * @param {number} x
   * @param {number} y
   * @returns {{slot: number, where: string}|null}
   */
  hit(st, x, y) {
    const L = this.layout;
    if (!st.ready || st.n === 0 || x < L.labelW) return null;
    const rel = x - L.labelW;
    const line = Math.floor((y - L.zoomY) / L.zoomStep);
    if (y >= L.zoomY && line < L.zoomLines && y - L.zoomY - line * L.zoomStep < L.zoomH + 12) {
      const cell = this.opts.present ? Math.max(this.cell, 26) : this.cell;
      const k = Math.floor(rel / cell);
      const i = line * L.zoomPerLine + k;
      if (k < 0 || k >= L.zoomPerLine || i >= L.zoomCount) return null;
      return { slot: L.zoomFrom + i, where: 'zoom' };
    }
    if (y >= L.ovY - 4 && y < L.ovY + L.ovH + 6) {
      return { slot: Math.min(st.n - 1, Math.floor((rel / L.stripW) * st.n)), where: 'range' };
    }
    if (y >= L.rowsY) {
      const r = Math.floor((y - L.rowsY) / L.rowH);
      if (r < 0 || r >= L.rows) return null;
      const c = st.chunks[L.firstRow + r];
      let maxLen = 1;
      for (const cc of st.chunks) maxLen = Math.max(maxLen, cc.len);
      const pw = (c.len / maxLen) * L.stripW;
      if (rel > pw) return null;
      return { slot: c.start - st.range.start + Math.min(c.len - 1, Math.floor((rel / pw) * c.len)), where: 'chunk' };
    }
    return null;
  }
}

/**
 * Returns the first of texts (longest first) that fits in maxW at the context's font, or the last.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string[]} texts
 * @param {number} maxW
 * @returns {string}
 */
export function fitText(ctx, texts, maxW) {
  for (const t of texts) if (ctx.measureText(t).width <= maxW) return t;
  return texts[texts.length - 1];
}

/**
 * Draws a white ✕ in a box.
 * @param {CanvasRenderingContext2D} ctx
 * @param {number} x
 * @param {number} y
 * @param {number} w
 * @param {number} h
 */
function cross(ctx, x, y, w, h) {
  const s = Math.min(w, h) - 4;
  const cx = x + w / 2;
  const cy = y + h / 2;
  ctx.strokeStyle = '#fff';
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.moveTo(cx - s / 2, cy - s / 2);
  ctx.lineTo(cx + s / 2, cy + s / 2);
  ctx.moveTo(cx + s / 2, cy - s / 2);
  ctx.lineTo(cx - s / 2, cy + s / 2);
  ctx.stroke();
  ctx.lineWidth = 1;
}

/**
 * Draws a downward triangle with its tip at (x, y).
 * @param {CanvasRenderingContext2D} ctx
 * @param {number} x
 * @param {number} y
 * @param {number} s size
 * @param {string} colour
 */
function triangle(ctx, x, y, s, colour) {
  ctx.fillStyle = colour;
  ctx.beginPath();
  ctx.moveTo(x, y);
  ctx.lineTo(x - s / 1.4, y - s);
  ctx.lineTo(x + s / 1.4, y - s);
  ctx.closePath();
  ctx.fill();
}
