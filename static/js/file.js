// The file page: the block map drawn from the file's extents, each block
// its own device-pixel columns when they fit, otherwise each column shows
// the blocks columns.js gives it (the player's strips use the same bounds).
import { fit, Tooltip, onResize } from './canvas.js';
import { int } from './fmt.js';
import { hatch, NULL_FILL, LINE, OI, INK, INK3, fillsFor, legendColours } from './palette.js';
import { RunMap, colourIndex, colourBy, COLOUR_KEY } from './colour.js';
import { apiImage, blockURL } from './links.js';
import { spanColumns, slotAtColumn } from './columns.js';

/**
 * @typedef {{index: number, count: number, state: string, addr: number, segno: number}} Extent
 */

/**
 * Wires the block map of the file page.
 * @param {Document} doc
 */
export function initFile(doc) {
  const canvas = /** @type {HTMLCanvasElement|null} */ (doc.getElementById('blockmap'));
  const data = doc.getElementById('extents-data');
  if (!canvas || !data) return;
  /** @type {Extent[]} */
  const ext = JSON.parse(data.textContent || 'null') || [];
  /** @type {Array<{path: string, start: number, len: number}>} */
  const dnodes = JSON.parse(doc.getElementById('dnodes-data')?.textContent || 'null') || [];
  const main = Number(canvas.dataset.mainBlkaddr || 0);
  const bps = Number(canvas.dataset.blocksPerSeg);
  const total = ext.length ? ext[ext.length - 1].index + ext[ext.length - 1].count : 0;
  const tip = new Tooltip();
  const AXIS = 16;
  const TOP = 6; // room for the dnode ticks
  const id = canvas.dataset.id || '';
  /** The slot named by #slot=N (from the block inspector), or -1. */
  let selected = -1;
  // Colouring, as the player's (and the same choice: it is kept in localStorage).
  const sel = /** @type {HTMLSelectElement|null} */ (doc.getElementById('colour-by'));
  let stored = null;
  try { stored = localStorage.getItem(COLOUR_KEY); } catch { /* private mode */ }
  /** @type {import('./colour.js').ColourContext} */
  const colour = {
    by: colourBy(new URLSearchParams(location.search).get('colour') || stored),
    runs: RunMap.fromExtents(ext, 0, total),
    geometry: { mainBlkaddr: main, maxBlkaddr: Infinity, blocksPerSeg: bps },
    segTypes: new Map(),
  };
  let typesAsked = false;
  const legend = () => {
    const el = doc.getElementById('legend-colours');
    if (el) legendColours(doc, el, colour.by, (t) => t);
    const brk = doc.getElementById('legend-brk');
    if (brk) brk.hidden = colour.by !== 'run';
    if (sel) sel.value = colour.by;
  };
  // Log types come from the SIT, fetched the first time they are asked for.
  const needTypes = () => {
    if (colour.by !== 'log' || typesAsked) return;
    typesAsked = true;
    fetch(apiImage(id, 'segments')).then((r) => (r.ok ? r.json() : null)).then((b) => {
      for (const sg of (b && b.segments) || []) colour.segTypes.set(sg.segno, sg.type);
      draw();
    }).catch(() => { /* the map stays grey: unknown */ });
  };
  sel?.addEventListener('change', () => {
    colour.by = colourBy(sel.value);
    try { localStorage.setItem(COLOUR_KEY, colour.by); } catch { /* private mode */ }
    legend();
    needTypes();
    draw();
  });

  /**
   * The extent holding file block b.
   * @param {number} b
   * @returns {Extent|undefined}
   */
  const extentAt = (b) => {
    let lo = 0;
    let hi = ext.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ext[mid].index <= b) lo = mid; else hi = mid - 1;
    }
    const x = ext[lo];
    return x && b >= x.index && b < x.index + x.count ? x : undefined;
  };
  /** Device-pixel columns of the map, set by draw. */
  let cols = 1;
  /** @param {MouseEvent} e */
  const blockAt = (e) => {
    const r = canvas.getBoundingClientRect();
    return slotAtColumn(((e.clientX - r.left) / r.width) * cols, total, cols);
  };

  const draw = () => {
    const { ctx, w, h, dpr } = fit(canvas);
    ctx.clearRect(0, 0, w, h);
    const bh = h - AXIS - TOP;
    if (!total) {
      ctx.fillStyle = INK3;
      ctx.font = '13px system-ui, sans-serif';
      ctx.fillText('no data slots (inline data or an empty file)', 4, bh / 2);
      return;
    }
    const hp = hatch(ctx, dpr);
    const fills = fillsFor(colour.by);
    cols = Math.max(1, Math.round(w * dpr));
    const cw = w / cols;
    /** The CSS x span of blocks [a, b) (at least one device pixel). */
    const span = (/** @type {number} */ a, /** @type {number} */ b) => {
      const [c0, c1] = spanColumns(a, b, total, cols);
      return [c0 * cw, c1 * cw];
    };
    /** The left edge of block i (w at the end of the file). */
    const xOf = (/** @type {number} */ i) => (i >= total ? w : span(i, i + 1)[0]);
    ctx.translate(0, TOP);
    for (const e of ext) {
      const [x0, x1] = span(e.index, e.index + e.count);
      if (e.state === 'addr' && e.segno >= 0) {
        // One piece per segment the extent crosses (its colour may change
        // there by segment or log type; a run's colour does not).
        let i = 0;
        while (i < e.count) {
          const a = e.addr + i;
          const n = colour.by === 'run' ? e.count - i : Math.min(e.count - i, bps - ((a - main) % bps));
          ctx.fillStyle = fills[colourIndex(colour, e.index + i, a, fills.length)];
          // At least 2 px, so a few blocks in a huge sparse file still show.
          const [p0, p1] = span(e.index + i, e.index + i + n);
          ctx.fillRect(p0, 0, Math.max(2, p1 - p0), bh);
          i += n;
        }
      } else {
        switch (e.state) {
          case 'addr':
          case 'compress': ctx.fillStyle = OI.vermillion; break;
          case 'new': ctx.fillStyle = hp; break;
          default: ctx.fillStyle = NULL_FILL;
        }
        ctx.fillRect(x0, 0, x1 - x0, bh);
      }
    }
    // Where a physical run begins (not the first): a dark bar with a white
    // halo, at any width, so "3 runs" reads as three blocks.
    if (colour.by === 'run') {
      const starts = colour.runs ? colour.runs.starts : [];
      for (let k = 1; k < starts.length; k++) {
        const x = xOf(starts[k]);
        ctx.fillStyle = '#fff';
        ctx.fillRect(x - 1.5, 0, 3, bh);
        ctx.fillStyle = INK;
        ctx.fillRect(x - 0.75, 0, 1.5, bh);
      }
    }
    ctx.strokeStyle = LINE;
    ctx.lineWidth = 1;
    ctx.strokeRect(0.5, 0.5, w - 1, bh - 1);
    if (selected >= 0 && selected < total) {
      // The slot the inspector pointed at: a dark bar with a light halo
      // and a marker above, visible on any segment hue.
      const [s0, s1] = span(selected, selected + 1);
      const x = Math.min(w - 2, s0);
      const bw = Math.max(2, s1 - s0);
      ctx.fillStyle = '#fff';
      ctx.fillRect(x - 1.5, 0, bw + 3, bh);
      ctx.fillStyle = '#1d232a';
      ctx.fillRect(x, 0, bw, bh);
      ctx.beginPath();
      ctx.moveTo(x + bw / 2 - 6, -TOP);
      ctx.lineTo(x + bw / 2 + 6, -TOP);
      ctx.lineTo(x + bw / 2, 0);
      ctx.closePath();
      ctx.fill();
    }
    // Dnode boundaries above the bar.
    ctx.fillStyle = '#4a5561';
    if (dnodes.length < w / 3) {
      for (const d of dnodes) ctx.fillRect(Math.min(w - 1, xOf(d.start)), -TOP, 1, TOP);
    }
    ctx.fillStyle = '#4a5561';
    ctx.font = '11px ui-monospace, monospace';
    ctx.textBaseline = 'top';
    const ticks = Math.max(2, Math.floor(w / 140));
    for (let i = 0; i <= ticks; i++) {
      const b = Math.round((total * i) / ticks);
      const x = xOf(b);
      ctx.fillRect(Math.min(w - 1, x), bh, 1, 4);
      ctx.textAlign = i === 0 ? 'left' : i === ticks ? 'right' : 'center';
      ctx.fillText(int(b), Math.min(w - 1, x), bh + 4);
    }
  };

  canvas.addEventListener('mousemove', (e) => {
    if (!total) return;
    const b = blockAt(e);
    const x = extentAt(b);
    if (!x) return;
    canvas.style.cursor = x.state === 'addr' ? 'pointer' : 'default';
    const a = x.addr + (b - x.index);
    const run = colour.runs ? colour.runs.runAt(b) : -1;
    const what = x.state === 'addr'
      ? `address ${a}, segment ${Math.floor((a - main) / bps)}  (extent ${x.addr}…${x.addr + x.count - 1}${run >= 0 ? `, physical run ${run + 1} of ${colour.runs?.count}` : ''})`
      : x.state === 'new' ? 'NEW_ADDR (reserved, never written)' : x.state === 'null' ? 'NULL_ADDR (hole)' : x.state;
    const d = dnodes.find((n) => b >= n.start && b < n.start + n.len);
    tip.show(`file block ${int(b)}${d ? `  in ${d.path}` : ''}\n${what}\nextent: blocks ${int(x.index)}…${int(x.index + x.count - 1)} (${int(x.count)})`, e.clientX, e.clientY);
  });
  canvas.addEventListener('mouseleave', () => tip.hide());
  // A click inspects the block under the mouse.
  canvas.addEventListener('click', (e) => {
    if (!total) return;
    const b = blockAt(e);
    const x = extentAt(b);
    if (x && x.state === 'addr') location.assign(blockURL(id, x.addr + (b - x.index)));
  });
  const info = doc.getElementById('slotinfo');
  const showSlot = () => {
    const m = /^#slot=(\d+)$/.exec(location.hash);
    selected = m ? Number(m[1]) : -1;
    draw();
    if (!info) return;
    if (selected < 0) { info.hidden = true; return; }
    const x = extentAt(selected);
    const d = dnodes.find((n) => selected >= n.start && selected < n.start + n.len);
    info.replaceChildren();
    info.append(`File block ${int(selected)}${d ? ` (in ${d.path})` : ''}: `);
    if (x && x.state === 'addr') {
      const a = x.addr + (selected - x.index);
      const link = doc.createElement('a');
      link.href = blockURL(id, a);
      link.textContent = `block ${a}`;
      link.dataset.testid = 'slot-block';
      info.append(link, `, segment ${Math.floor((a - main) / bps)}`);
    } else {
      info.append(x ? (x.state === 'new' ? 'NEW_ADDR (reserved, never written)' : x.state === 'null' ? 'NULL_ADDR (hole)' : x.state) : 'beyond the slot map');
    }
    info.dataset.slot = String(selected);
    info.hidden = false;
    canvas.closest('section')?.scrollIntoView({ block: 'start' });
  };
  window.addEventListener('hashchange', showSlot);
  onResize(canvas, draw);
  legend();
  needTypes();
  showSlot();
}

initFile(document);
