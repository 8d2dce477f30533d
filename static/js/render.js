// Canvas drawing for the player: the slot strips, the SIT maps and the
// seek-bar markers. Drawing only: no fetch, no sockets, no DOM outside the
// canvases it is given.
import { NULL_ADDR, NEW_ADDR, COMPRESS_ADDR, FLASH_MS, testBit } from './state.js';
import { OI, SEGMENT_HUES, hatch, INK, INK2, LINE } from './palette.js';
import { int } from './fmt.js';

/** Width of the label column of the slot panel, in CSS pixels. */
export const LABEL_W = 124;

/** Slot classes for aggregation. */
const C_NULL = 0;
const C_NEW = 1;
const C_ADDR = 2;
const C_BAD = 3;
const C_FLASH = 4;

/**
 * Counts the slot classes of [a, b) of the state's slots.
 * @param {import('./state.js').RunState} st
 * @param {number} a
 * @param {number} b
 * @param {Uint32Array} cnt five counters, overwritten
 * @returns {number} the segment of the first address in the span, or -1
 */
function classify(st, a, b, cnt) {
  cnt.fill(0);
  let seg = -1;
  const s = st.slots;
  const g = st.geometry;
  const marks = st.flash.size > 0 || st.bad.size > 0;
  for (let i = a; i < b; i++) {
    const v = s[i];
    if (marks && st.flash.has(i)) cnt[C_FLASH]++;
    else if (marks && st.bad.has(i)) cnt[C_BAD]++;
    else if (v === NULL_ADDR) cnt[C_NULL]++;
    else if (v === NEW_ADDR) cnt[C_NEW]++;
    else if (v === COMPRESS_ADDR || v < g.mainBlkaddr || v >= g.maxBlkaddr) cnt[C_BAD]++;
    else {
      cnt[C_ADDR]++;
      if (seg < 0) seg = Math.floor((v - g.mainBlkaddr) / g.blocksPerSeg);
    }
  }
  return seg;
}

/**
 * Draws one strip of count slots in the box (x0, y0, w, h). Each device
 * pixel column shows the classes of its slots stacked by proportion
 * (flash, invalid, address, NEW, NULL from the top), so a 1018-slot chunk
 * in 300 pixels still shows where the holes and runs are. Neighbouring
 * columns that look the same are merged into one rectangle, so a uniform
 * strip costs a few fillRect calls whatever its length.
 * @param {CanvasRenderingContext2D} ctx
 * @param {CanvasPattern|string} newFill the NEW_ADDR hatch
 * @param {number} x0
 * @param {number} y0
 * @param {number} w CSS px
 * @param {number} h CSS px
 * @param {number} dpr
 * @param {number} count slots in the strip
 * @param {Uint32Array} cnt scratch, filled by col
 * @param {(x: number, a: number, b: number) => number} col fills cnt for
 *   column x (slots [a, b) of the strip) and returns the segment to colour
 */
function drawStrip(ctx, newFill, x0, y0, w, h, dpr, count, cnt, col) {
  const cols = Math.max(1, Math.min(count, Math.round(w * dpr)));
  const cw = w / cols;
  const perCol = count / cols;
  const ph = Math.max(1, Math.round(h * dpr)); // device rows, for rounding
  const minH = Math.max(1, Math.round(ph / 4));
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(x0, y0, w, h);
  // The run of identical columns being merged: its first column and its
  // stack heights in device px (flash, bad, address, NEW) and hue.
  let runX = -1;
  let f0 = 0;
  let f1 = 0;
  let f2 = 0;
  let f3 = 0;
  let hue = 0;
  const flush = (/** @type {number} */ endX) => {
    if (runX < 0) return;
    const x = x0 + runX * cw;
    const ww = (endX - runX) * cw;
    let y = 0;
    if (f0) { ctx.fillStyle = OI.yellow; ctx.fillRect(x, y0, ww, (f0 / ph) * h); y += f0; }
    if (f1) { ctx.fillStyle = OI.vermillion; ctx.fillRect(x, y0 + (y / ph) * h, ww, (f1 / ph) * h); y += f1; }
    if (f2) { ctx.fillStyle = SEGMENT_HUES[hue]; ctx.fillRect(x, y0 + (y / ph) * h, ww, (f2 / ph) * h); y += f2; }
    if (f3) { ctx.fillStyle = newFill; ctx.fillRect(x, y0 + (y / ph) * h, ww, (f3 / ph) * h); }
  };
  for (let x = 0; x < cols; x++) {
    const a = Math.floor(x * perCol);
    const b = Math.min(count, Math.max(a + 1, Math.floor((x + 1) * perCol)));
    const seg = col(x, a, b);
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
    const sh = seg >= 0 ? seg % SEGMENT_HUES.length : 0;
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
 * @returns {number}
 */
function rowSig(st, from, len) {
  const s = st.slots;
  let h = 0x811c9dc5;
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
class Overview {
  constructor() {
    this.pw = 0;
    this.n = 0;
    this.counts = new Uint32Array(0);
    this.segs = new Int32Array(0);
    /** @type {Uint32Array|null} the slots array the cache was built from */
    this.of = null;
  }

  /**
   * Brings the cache up to date for width pw (device px).
   * @param {import('./state.js').RunState} st
   * @param {number} pw
   * @param {Uint32Array} cnt scratch
   */
  update(st, pw, cnt) {
    const n = st.n;
    const full = st.changed === null || pw !== this.pw || n !== this.n || this.of !== st.slots;
    if (full) {
      this.pw = pw;
      this.n = n;
      this.of = st.slots;
      this.counts = new Uint32Array(pw * 5);
      this.segs = new Int32Array(pw);
      // After a full frame the slots are exactly its extents: count from
      // those (a few runs) rather than from millions of slots.
      if (st.extentsClean && n >= pw) this.fromExtents(st);
      else for (let x = 0; x < pw; x++) this.recount(st, x, cnt);
    } else if (st.changed && st.changed.length) {
      const seen = new Set();
      const per = n / pw;
      for (const i of st.changed) {
        let x = Math.min(pw - 1, Math.floor(i / per));
        // Float rounding can put i one column off; match recount's bounds.
        if (x > 0 && Math.floor(x * per) > i) x--;
        else if (x < pw - 1 && Math.max(Math.floor(x * per) + 1, Math.floor((x + 1) * per)) <= i) x++;
        if (seen.has(x)) continue;
        seen.add(x);
        this.recount(st, x, cnt);
      }
    }
  }

  /**
   * Fills the counts from the state's extents; needs n ≥ pw, so that the
   * columns partition the slots.
   * @param {import('./state.js').RunState} st
   */
  fromExtents(st) {
    const n = this.n;
    const pw = this.pw;
    const per = n / pw;
    const base = st.range.start;
    const g = st.geometry;
    const c = this.counts;
    this.segs.fill(-1);
    const colOf = (/** @type {number} */ i) => {
      let x = Math.min(pw - 1, Math.floor(i / per));
      while (x > 0 && Math.floor(x * per) > i) x--;
      while (x < pw - 1 && Math.floor((x + 1) * per) <= i) x++;
      return x;
    };
    for (const e of st.extents) {
      let a = Math.max(0, e.index - base);
      const b = Math.min(n, e.index - base + e.count);
      if (b <= a || e.state === 'null') continue;
      while (a < b) {
        const x = colOf(a);
        const end = x === pw - 1 ? b : Math.min(b, Math.floor((x + 1) * per));
        const k = end - a;
        if (e.state === 'new') c[x * 5 + C_NEW] += k;
        else if (e.state === 'addr') {
          const addr = (e.addr || 0) + (a - (e.index - base));
          // Addresses outside [main_blkaddr, MAX_BLKADDR) are invalid; a
          // run is contiguous, so only its ends can cross those bounds.
          const lo = Math.min(k, Math.max(0, g.mainBlkaddr - addr));
          const hi = Math.min(k, Math.max(lo, g.maxBlkaddr - addr));
          c[x * 5 + C_BAD] += k - (hi - lo);
          if (hi > lo) {
            c[x * 5 + C_ADDR] += hi - lo;
            if (this.segs[x] < 0) this.segs[x] = Math.floor((addr + lo - g.mainBlkaddr) / g.blocksPerSeg);
          }
        } else c[x * 5 + C_BAD] += k;
        a = end;
      }
    }
    for (let x = 0; x < pw; x++) {
      const lo = Math.floor(x * per);
      const hi = x === pw - 1 ? n : Math.floor((x + 1) * per);
      const o = x * 5;
      c[o + C_NULL] = Math.max(0, hi - lo - c[o + C_NEW] - c[o + C_ADDR] - c[o + C_BAD]);
    }
  }

  /**
   * @param {import('./state.js').RunState} st
   * @param {number} x
   * @param {Uint32Array} cnt
   */
  recount(st, x, cnt) {
    const per = this.n / this.pw;
    const a = Math.floor(x * per);
    const b = x === this.pw - 1 ? this.n : Math.min(this.n, Math.max(a + 1, Math.floor((x + 1) * per)));
    this.segs[x] = classify(st, a, b, cnt);
    this.counts.set(cnt, x * 5);
  }
}

/**
 * Draws the slot panel: the whole range (aggregated), a readable zoom
 * around the cursor, and one strip per dnode chunk.
 */
export class SlotsView {
  /** @param {HTMLCanvasElement} canvas */
  constructor(canvas) {
    this.canvas = canvas;
    this.cnt = new Uint32Array(5);
    this.overview = new Overview();
    /** chunk index → its strip's bitmap and the slot signature it shows */
    /** @type {Map<number, {canvas: OffscreenCanvas, octx: OffscreenCanvasRenderingContext2D, bw: number, bh: number, sig: number}>} */
    this.rows = new Map();

    /** cell width of the zoom lane, CSS px (wheel changes it) */
    this.cell = 16;
    /** slot the zoom lane is pinned at, or null to follow the cursor */
    /** @type {number|null} */
    this.pin = null;
    /** first chunk row shown, when the user scrolled; null = follow */
    /** @type {number|null} */
    this.rowScroll = null;
    this.layout = { w: 0, h: 0, zoomY: 0, zoomFrom: 0, zoomCount: 0, zoomH: 22, zoomLines: 1, zoomPerLine: 1, zoomStep: 48,
      rowsY: 0, rowH: 14, firstRow: 0, rows: 0, stripW: 0 };
  }

  /**
   * @param {import('./state.js').RunState} st
   * @param {{ctx: CanvasRenderingContext2D, w: number, h: number, dpr: number}} f
   * @param {number} now
   */
  draw(st, f, now) {
    const { ctx, w, h, dpr } = f;
    ctx.clearRect(0, 0, w, h);
    if (!st.ready) return;
    const n = st.n;
    const stripX = LABEL_W;
    const stripW = Math.max(40, w - LABEL_W - 6);
    const cur = st.cursor();
    const curOff = cur - st.range.start;
    const L = this.layout;
    L.w = w; L.h = h; L.stripW = stripW;
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'middle';

    // 1. The whole range, aggregated, with the chunk boundaries.
    const ovY = 12;
    const ovH = 14;
    ctx.fillStyle = INK2;
    ctx.textAlign = 'left';
    ctx.fillText(`range ${int(st.range.start)}…${int(Math.max(st.range.start, st.range.end - 1))}`, 0, ovY + ovH / 2);
    const hp = hatch(ctx, dpr);
    if (n > 0) {
      const ov = this.overview;
      const cols = Math.max(1, Math.min(n, Math.round(stripW * dpr)));
      ov.update(st, cols, this.cnt);
      drawStrip(ctx, hp, stripX, ovY, stripW, ovH, dpr, n, this.cnt, (x) => {
        this.cnt.set(ov.counts.subarray(x * 5, x * 5 + 5));
        return ov.segs[x];
      });
    }
    // Everything changed so far is now drawn.
    st.changed = [];
    if (st.chunks.length < stripW / 3) {
      ctx.fillStyle = 'rgba(29,35,42,.55)';
      for (const c of st.chunks) {
        const x = stripX + ((c.start - st.range.start) / Math.max(1, n)) * stripW;
        ctx.fillRect(Math.round(x), ovY - 3, 1, 3);
      }
    }
    if (n > 0) triangle(ctx, stripX + ((curOff + 0.5) / n) * stripW, ovY - 1, 6, INK);
    // The pending run over the whole range too: at this scale it shows a
    // run reaching across NEW slots and holes.
    const rs = st.runStart('batched');
    if (rs !== null && n > 0) {
      const xa = stripX + ((rs - st.range.start) / n) * stripW;
      const xb = stripX + ((st.per.batched.cursor - st.range.start) / n) * stripW;
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
    // then shows whole).
    const zY = ovY + ovH + 30;
    const zH = Math.max(22, Math.min(34, Math.floor(h / 10)));
    const lineStep = zH + 26;
    const cell = this.cell;
    const perLine = Math.max(1, Math.floor(stripW / cell));
    const nc0 = st.chunks.length;
    const rowsNeed = Math.min(nc0, 12) * 16 + 30;
    const spare = h - zY - rowsNeed;
    let lines = Math.max(1, Math.min(6, Math.floor((spare + 26) / lineStep)));
    lines = Math.min(lines, Math.max(1, Math.ceil(n / perLine)));
    const zCount = Math.max(1, Math.min(n, perLine * lines));
    const center = this.pin ?? curOff;
    let zFrom = Math.max(0, Math.min(n - zCount, Math.floor(center - zCount / 2)));
    // Several lines move a whole line at a time, so cells do not reflow
    // under the viewer's eyes at every step.
    // The cursor's line sits in the middle.
    if (lines > 1) {
      zFrom = Math.max(0, Math.min(n - zCount, (Math.floor(center / perLine) - Math.floor(lines / 2)) * perLine));
    }
    L.zoomY = zY; L.zoomFrom = zFrom; L.zoomCount = zCount; L.zoomH = zH;
    L.zoomLines = lines; L.zoomPerLine = perLine; L.zoomStep = lineStep;
    ctx.fillStyle = INK2;
    ctx.textAlign = 'left';
    const ci = st.chunkOf(st.range.start + Math.min(n - 1, Math.max(0, center)));
    ctx.fillText(this.pin === null ? 'at the cursor' : 'pinned (click to follow)', 0, zY + zH / 2 - 7);
    ctx.fillStyle = '#7a8591';
    ctx.fillText(ci >= 0 ? st.chunks[ci].path : '', 0, zY + zH / 2 + 8);
    for (let l = 0; l < lines; l++) {
      const from = zFrom + l * perLine;
      const count = Math.min(perLine, zFrom + zCount - from);
      if (count <= 0) break;
      this.drawZoom(ctx, st, hp, stripX, zY + l * lineStep, count, cell, zH, from, now, curOff, l === 0);
    }

    // 3. One strip per chunk.
    const rowsY = zY + (lines - 1) * lineStep + zH + 34;
    const avail = h - rowsY;
    const nc = st.chunks.length;
    const rowH = Math.max(12, Math.min(24, Math.floor(avail / Math.max(1, nc))));
    const rows = Math.max(0, Math.min(nc, Math.floor(avail / rowH)));
    const curChunk = Math.max(0, st.chunkOf(cur));
    let first = this.rowScroll ?? Math.max(0, Math.min(nc - rows, curChunk - Math.floor(rows / 2)));
    first = Math.max(0, Math.min(Math.max(0, nc - rows), first));
    L.rowsY = rowsY; L.rowH = rowH; L.firstRow = first; L.rows = rows;
    if (rows > 0) {
      // The chunk with the most slots sets the scale, so strips of
      // different capacity (873-slot inode, 1018-slot direct nodes) line up.
      let maxLen = 1;
      for (const c of st.chunks) maxLen = Math.max(maxLen, c.len);
      if (this.rows.size > 4 * rows + 64) this.rows.clear();
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
        const sig = rowSig(st, from, c.len);
        let e = this.rows.get(k);
        if (!e || e.bw !== bw || e.bh !== bh) {
          const canvas = new OffscreenCanvas(bw, bh);
          const octx = /** @type {OffscreenCanvasRenderingContext2D} */ (canvas.getContext('2d'));
          e = { canvas, octx, bw, bh, sig: NaN };
          this.rows.set(k, e);
        }
        if (e.sig !== sig) {
          e.sig = sig;
          e.octx.setTransform(1, 0, 0, 1, 0, 0);
          e.octx.clearRect(0, 0, bw, bh);
          e.octx.setTransform(dpr, 0, 0, dpr, 0, 0);
          drawStrip(/** @type {any} */ (e.octx), hatch(/** @type {any} */ (e.octx), dpr), 1, 1, sw, sh, dpr, c.len, this.cnt,
            (x, a, b) => classify(st, from + a, from + b, this.cnt));
        }
        ctx.drawImage(e.canvas, stripX - 1, rowsY + r * rowH - 1, bw / dpr, bh / dpr);
      }
      ctx.textAlign = 'left';
      for (let r = 0; r < rows; r++) {
        const k = first + r;
        const c = st.chunks[k];
        const y = rowsY + r * rowH;
        if (k === curChunk) {
          ctx.fillStyle = 'rgba(86,180,233,.22)';
          ctx.fillRect(0, y - 1, LABEL_W - 4, rowH - 1);
        }
        ctx.fillStyle = k === curChunk ? INK : INK2;
        ctx.font = `${rowH >= 15 ? 12 : 11}px ui-monospace, monospace`;
        // "+": the node does not exist yet; ALLOC_NODE creates it.
        const label = `${c.path}${c.missing ? ' +' : ''}`;
        ctx.fillText(label.length > 15 ? `${label.slice(0, 14)}…` : label, 4, y + (rowH - 3) / 2);
        const pw = (c.len / maxLen) * stripW;
        if (k === curChunk && c.len > 0) {
          const cx = stripX + ((cur - c.start + 0.5) / c.len) * pw;
          triangle(ctx, cx, y - 1, 5, INK);
        }
      }
      if (nc > rows) {
        ctx.fillStyle = '#7a8591';
        ctx.font = '11px system-ui, sans-serif';
        ctx.textAlign = 'right';
        ctx.fillText(`chunks ${first + 1}–${first + rows} of ${int(nc)} (wheel to scroll)`, w - 4, rowsY - 10);
      }
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'left';
    ctx.fillStyle = '#7a8591';
    ctx.fillText('dnode chunks (one f2fs_do_zero_range call each)', 0, rowsY - 10);
  }

  /**
   * Draws the zoom lane: one readable cell per slot with its pattern,
   * the pending run's bracket and the cursor.
   * @param {CanvasRenderingContext2D} ctx
   * @param {import('./state.js').RunState} st
   * @param {CanvasPattern|string} hp the NEW_ADDR hatch
   * @param {number} x0
   * @param {number} y0
   * @param {number} count
   * @param {number} cell
   * @param {number} hgt
   * @param {number} from
   * @param {number} now
   * @param {number} curOff
   * @param {boolean} firstLine label the pending run here if it starts earlier
   */
  drawZoom(ctx, st, hp, x0, y0, count, cell, hgt, from, now, curOff, firstLine) {
    const g = st.geometry;
    const gap = cell >= 8 ? 1 : 0;
    ctx.lineWidth = 1;
    for (let k = 0; k < count; k++) {
      const i = from + k;
      const v = st.slots[i];
      const x = x0 + k * cell;
      const fl = st.flash.get(i);
      const bad = st.bad.has(i) || (v !== NULL_ADDR && v !== NEW_ADDR && (v === COMPRESS_ADDR || v < g.mainBlkaddr || v >= g.maxBlkaddr));
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
        if (cell >= 8) {
          ctx.strokeStyle = '#fff';
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.moveTo(x + gap + 2, y0 + hgt / 2 - (cell - gap - 4) / 2);
          ctx.lineTo(x + cell - 2, y0 + hgt / 2 + (cell - gap - 4) / 2);
          ctx.moveTo(x + cell - 2, y0 + hgt / 2 - (cell - gap - 4) / 2);
          ctx.lineTo(x + gap + 2, y0 + hgt / 2 + (cell - gap - 4) / 2);
          ctx.stroke();
          ctx.lineWidth = 1;
        }
      } else if (v === NULL_ADDR) {
        ctx.fillStyle = '#fff';
        ctx.fillRect(x + gap, y0, cell - gap, hgt);
        ctx.strokeStyle = '#8b96a3';
        ctx.strokeRect(x + gap + 0.5, y0 + 0.5, cell - gap - 1, hgt - 1);
      } else if (v === NEW_ADDR) {
        ctx.fillStyle = hp;
        ctx.fillRect(x + gap, y0, cell - gap, hgt);
      } else {
        const seg = Math.floor((v - g.mainBlkaddr) / g.blocksPerSeg);
        ctx.fillStyle = SEGMENT_HUES[seg % SEGMENT_HUES.length];
        ctx.fillRect(x + gap, y0, cell - gap, hgt);
      }
    }
    // Zoomed in far enough (wheel), each address cell names its block.
    if (cell >= 34) {
      ctx.font = '9px ui-monospace, monospace';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      for (let k = 0; k < count; k++) {
        const v = st.slots[from + k];
        if (v === NULL_ADDR || v === NEW_ADDR || v === COMPRESS_ADDR || st.flash.has(from + k)) continue;
        const seg = st.segnoOf(v);
        // Dark text on the light hues (sky blue, orange), white on the rest.
        ctx.fillStyle = seg >= 0 && seg % SEGMENT_HUES.length >= 3 ? INK : '#fff';
        ctx.fillText(String(v), x0 + k * cell + cell / 2, y0 + hgt / 2, cell - 3);
      }
    }
    // Index ticks every 10 slots (or so), so a slot can be named.
    ctx.fillStyle = INK2;
    ctx.font = '10px ui-monospace, monospace';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const every = cell >= 16 ? 8 : cell >= 10 ? 16 : 32;
    for (let k = 0; k < count; k++) {
      const idx = st.range.start + from + k;
      if (idx % every !== 0) continue;
      const x = x0 + k * cell + cell / 2;
      ctx.fillRect(Math.round(x), y0 + hgt + 1, 1, 3);
      ctx.fillText(int(idx), x, y0 + hgt + 5);
    }
    ctx.textBaseline = 'middle';
    // Pending run bracket (batched): from the slot that started the run
    // to the cursor.
    const bt = st.per.batched;
    const rs = st.runStart('batched');
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
          ctx.font = '11px ui-monospace, monospace';
          ctx.textAlign = 'left';
          const label = `pending (${bt.pending.start}, ${bt.pending.len})`;
          ctx.fillText(label, Math.min(Math.max(x0, xa), x0 + count * cell - ctx.measureText(label).width), y - 8);
        }
      }
    }
    // Cursor.
    if (curOff >= from && curOff < from + count) {
      const x = x0 + (curOff - from) * cell + cell / 2;
      triangle(ctx, x, y0 - 1, 7, INK);
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
    if (!st.ready || st.n === 0 || x < LABEL_W) return null;
    const rel = x - LABEL_W;
    const line = Math.floor((y - L.zoomY) / L.zoomStep);
    if (y >= L.zoomY && line < L.zoomLines && y - L.zoomY - line * L.zoomStep < L.zoomH) {
      const k = Math.floor(rel / this.cell);
      const i = line * L.zoomPerLine + k;
      if (k < 0 || k >= L.zoomPerLine || i >= L.zoomCount) return null;
      return { slot: L.zoomFrom + i, where: 'zoom' };
    }
    if (y >= 8 && y < 30) {
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

/** Status words shown next to a segment. */
const STATUS_TEXT = { free: 'free', full: 'full', dirty: 'dirty', prefree: 'prefree', current: 'current', clean: 'clean' };

/**
 * Draws the SIT panel: each touched segment's valid count, class and
 * 512-bit map, newest activity first; in both mode the two engines' maps
 * side by side.
 */
export class SITView {
  /** @param {HTMLCanvasElement} canvas */
  constructor(canvas) {
    this.canvas = canvas;
    this.scroll = 0;
    /** @type {{segs: number[], rowH: number, textW: number, mapX: number[], cell: number, top: number, cols: number}} */
    this.layout = { segs: [], rowH: 40, textW: 120, mapX: [], cell: 4, top: 0, cols: 64 };
    /** what the last draw showed; see draw */
    this.lastKey = '';
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
    // Redraw only when the SIT, the size or the scroll changed: the maps
    // are the costliest part of a frame and most steps leave them alone.
    const key = `${st.ready}:${st.sitVersion}:${w}x${h}@${dpr}:${this.scroll}`;
    if (key === this.lastKey && f.ctx.canvas.width > 0) return;
    this.lastKey = key;
    ctx.clearRect(0, 0, w, h);
    if (!st.ready) return;
    const modes = st.modes;
    const segs = st.segmentsByActivity();
    const textW = modes.length > 1 ? 116 : 104;
    const top = modes.length > 1 ? 14 : 0;
    const avail = (w - textW - 4 - (modes.length - 1) * 12) / modes.length;
    // The biggest bits that still show up to 6 segments at once, as 8
    // rows of 64 or 16 rows of 32, whichever gives bigger cells.
    const need = Math.max(1, Math.min(5, segs.length));
    const perRow = (h - top) / need - 16;
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
    const rowH = Math.max(mapH + 16, 36);
    const mapX = modes.map((_, i) => textW + i * (mapW + 12));
    this.layout = { segs, rowH, textW, mapX, cell, top, cols };
    ctx.textBaseline = 'middle';
    if (modes.length > 1) {
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillStyle = INK2;
      ctx.textAlign = 'left';
      modes.forEach((m, i) => ctx.fillText(m, mapX[i], 6));
    }
    if (segs.length === 0) {
      ctx.font = '13px system-ui, sans-serif';
      ctx.fillStyle = '#7a8591';
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
      ctx.font = '600 13px ui-monospace, monospace';
      ctx.fillStyle = INK;
      ctx.fillText(`seg ${segno}`, 0, y + 8);
      ctx.font = '11.5px ui-monospace, monospace';
      ctx.fillStyle = INK2;
      // Valid blocks, in the modes' column order.
      ctx.fillText(`valid ${modes.map((m) => st.per[m].segments.get(segno)?.valid ?? '?').join(' · ')}`, 0, y + 22);
      modes.forEach((m, i) => {
        const s = st.per[m].segments.get(segno);
        if (!s) return;
        this.drawMap(ctx, `${m}:${segno}`, s, mapX[i], y + 2, cell, cols, dpr);
        // The segment's class, in words, under its map.
        ctx.font = '10.5px system-ui, sans-serif';
        ctx.fillStyle = s.status === 'prefree' ? OI.vermillion : s.status === 'dirty' ? OI.blue : '#7a8591';
        ctx.textAlign = 'right';
        ctx.fillText(STATUS_TEXT[s.status] || s.status, mapX[i] + mapW, y + mapH + 9);
        ctx.textAlign = 'left';
        ctx.font = '11.5px ui-monospace, monospace';
        ctx.fillStyle = INK2;
      });
      if (first && first.current) {
        ctx.strokeStyle = '#111';
        ctx.setLineDash([3, 2]);
        ctx.strokeRect(mapX[0] - 2.5, y - 0.5, mapX[modes.length - 1] + mapW - mapX[0] + 5, mapH + 5);
        ctx.setLineDash([]);
      }
    }
    if (segs.length > visible) {
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillStyle = '#7a8591';
      ctx.textAlign = 'right';
      ctx.fillText(`${this.scroll + 1}–${Math.min(segs.length, this.scroll + visible)} of ${segs.length} (wheel)`, w - 2, 6);
    }
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
    if (k >= 0) lines.push(`block offset ${k}, address ${g.mainBlkaddr + segno * g.blocksPerSeg + k}`);
    for (const m of st.modes) {
      const s = st.per[m].segments.get(segno);
      if (!s) continue;
      lines.push(`${m}: valid ${s.valid}/512, ${s.status}${k >= 0 ? `, bit ${testBit(s.map, k) ? 'set' : 'clear'}` : ''}`);
    }
    return lines.join('\n');
  }
}

/**
 * Draws the markers under the seek slider.
 * @param {import('./state.js').RunState} st
 * @param {{ctx: CanvasRenderingContext2D, w: number, h: number}} f
 */
export function drawMarkers(st, f) {
  const { ctx, w, h } = f;
  ctx.clearRect(0, 0, w, h);
  const total = st.totalSteps;
  if (!st.ready || total <= 0) return;
  // The range input's thumb travel is inset by about half a thumb.
  const inset = 8;
  const X = (/** @type {number} */ s) => inset + (s / total) * (w - 2 * inset);
  // Per-block calls first, so the fewer batched calls stay visible on top.
  const order = [...st.markers].sort((a, b) => (a.mode === 'per-block' ? 0 : 1) - (b.mode === 'per-block' ? 0 : 1));
  for (const m of order) {
    const x = Math.round(X(m.step));
    if (m.kind === 'chunk') {
      ctx.fillStyle = 'rgba(74,85,97,.55)';
      ctx.fillRect(x, 0, 1, h);
    } else if (m.kind === 'flush') {
      ctx.fillStyle = m.mode === 'per-block' ? 'rgba(213,94,0,.35)' : OI.blue;
      ctx.beginPath();
      ctx.moveTo(x, m.mode === 'per-block' ? h - 4 : h - 8);
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
  ctx.fillStyle = INK;
  ctx.fillRect(Math.round(X(st.step)) - 1, 0, 2, h);
}
