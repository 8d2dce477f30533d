// The image page: the segment map of the whole main area (one cell per
// segment, coloured by log type, filled by valid blocks) and, on click,
// that segment's valid-block bitmap.
import { fit, Tooltip, onResize } from './canvas.js';
import { int } from './fmt.js';
import { TYPE_COLOURS, TYPE_NAMES, INK, INK3, LINE, dots, OI } from './palette.js';
import { initTree } from './tree.js';
import { apiImage, blockURL } from './links.js';
import { contract } from './contract.js';

/** The classes the map names a segment by: on disk it is free, dirty or full (prefree is not on disk). */
const CLASS = contract().segmentClasses;

const LABEL_W = 40; // left margin for row-start segment numbers

/**
 * @typedef {{segno: number, valid: number, type: number, current: boolean}} SegInfo
 * @typedef {{blocksPerSeg: number, mainBlkaddr: number, segsPerSec: number, segments: SegInfo[]}} SegmentsBody
 */

const SEC_LABEL = 13; // room under each row for the sections' valid counts

/**
 * Wires the segment map of the image page.
 * @param {Document} doc
 */
export async function initImage(doc) {
  const canvas = /** @type {HTMLCanvasElement|null} */ (doc.getElementById('segmap'));
  if (!canvas) return;
  const id = canvas.dataset.id || '';
  const tip = new Tooltip();
  /** @type {SegmentsBody} */
  let body;
  try {
    const r = await fetch(apiImage(id, 'segments'));
    if (!r.ok) throw new Error((await r.json()).error || r.statusText);
    body = await r.json();
  } catch (err) {
    const p = doc.createElement('p');
    p.className = 'msg error';
    p.textContent = `Could not read the SIT: ${err.message || err}`;
    canvas.replaceWith(p);
    return;
  }
  const segs = body.segments;
  const bps = body.blocksPerSeg;
  // Sections: segs_per_sec segments allocated and cleaned together. With
  // more than one per section the map draws each section as a group and
  // writes its valid-block count under it.
  const spp = Math.max(1, body.segsPerSec || 1);
  /** @type {number[]} valid blocks per section */
  const secValid = [];
  for (const s of segs) {
    const k = Math.floor(s.segno / spp);
    secValid[k] = (secValid[k] || 0) + s.valid;
  }
  let layout = { cell: 10, cols: 1, rowH: 10 };
  let selected = -1;
  if (spp > 1) {
    const legend = doc.querySelector('[data-testid="segment-legend"]');
    const item = doc.createElement('span');
    item.className = 'item';
    item.dataset.testid = 'section-legend';
    const sw = doc.createElement('span');
    sw.className = 'sw sec';
    item.append(sw, `section = ${spp} segments, outlined; its valid blocks below it (of ${int(spp * bps)})`);
    legend?.append(item);
  }
  canvas.dataset.segsPerSec = String(spp);
  /** @param {number} segno */
  const secText = (segno) => {
    const k = Math.floor(segno / spp);
    return `section ${k} (segments ${k * spp} … ${k * spp + spp - 1}): valid ${int(secValid[k] || 0)} / ${int(spp * bps)}`;
  };

  const draw = () => {
    const w = canvas.getBoundingClientRect().width;
    const n = Math.max(1, segs.length);
    const avail = Math.max(50, w - LABEL_W);
    let cell = Math.floor(Math.sqrt((avail * 240) / n));
    cell = Math.max(6, Math.min(34, cell));
    let cols = Math.max(1, Math.floor(avail / cell));
    // A row holds whole sections, so a section never wraps.
    if (spp > 1) cols = Math.max(spp, cols - (cols % spp));
    const rows = Math.ceil(n / cols);
    const rowH = cell + (spp > 1 ? SEC_LABEL : 0);
    layout = { cell, cols, rowH };
    const { ctx, dpr } = fit(canvas, rows * rowH + 2);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    const nodeFills = TYPE_COLOURS.map((c, t) => (t >= 3 ? dots(ctx, c, t === 5 ? '#333' : '#fff', dpr) : c));
    ctx.font = '11px ui-monospace, monospace';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let r = 0; r < rows; r++) {
      ctx.fillStyle = INK3;
      ctx.fillText(String(r * cols), LABEL_W - 6, 1 + r * rowH + cell / 2);
    }
    for (let i = 0; i < segs.length; i++) {
      const s = segs[i];
      const x = LABEL_W + (i % cols) * cell;
      const y = 1 + Math.floor(i / cols) * rowH;
      const g = cell > 8 ? 1 : 0.5; // gap
      ctx.fillStyle = '#fff';
      ctx.fillRect(x + g, y + g, cell - 2 * g, cell - 2 * g);
      const frac = Math.min(1, s.valid / bps);
      if (frac > 0) {
        const fh = Math.max(1.5, (cell - 2 * g) * frac);
        ctx.fillStyle = nodeFills[s.type] || INK;
        ctx.fillRect(x + g, y + cell - g - fh, cell - 2 * g, fh);
      }
      ctx.lineWidth = 1;
      ctx.strokeStyle = LINE;
      ctx.setLineDash([]);
      ctx.strokeRect(x + g + 0.5, y + g + 0.5, cell - 2 * g - 1, cell - 2 * g - 1);
      if (s.current) {
        ctx.strokeStyle = '#111';
        ctx.lineWidth = 2;
        ctx.setLineDash([3, 2]);
        ctx.strokeRect(x + g + 1, y + g + 1, cell - 2 * g - 2, cell - 2 * g - 2);
        ctx.setLineDash([]);
      }
      if (s.segno === selected) {
        ctx.strokeStyle = OI.vermillion;
        ctx.lineWidth = 2.5;
        ctx.strokeRect(x + 1, y + 1, cell - 2, cell - 2);
      }
    }
    if (spp > 1) {
      // Each section: an outline around its segments and its valid count
      // under them (when there is room for the digits).
      ctx.font = '10px ui-monospace, monospace';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'top';
      for (let first = 0; first < segs.length; first += spp) {
        const x = LABEL_W + (first % cols) * cell;
        const y = 1 + Math.floor(first / cols) * rowH;
        const w = Math.min(spp, segs.length - first) * cell;
        ctx.strokeStyle = '#33404d';
        ctx.lineWidth = 1.5;
        ctx.setLineDash([]);
        ctx.strokeRect(x + 0.75, y + 0.75, w - 1.5, cell - 1.5);
        if (w >= 26) {
          ctx.fillStyle = '#4a5561';
          ctx.fillText(int(secValid[Math.floor(segs[first].segno / spp)] || 0), x + w / 2, y + cell + 1);
        }
      }
    }
  };

  /** @returns {SegInfo|null} */
  const hit = (/** @type {MouseEvent} */ e) => {
    const r = canvas.getBoundingClientRect();
    const x = e.clientX - r.left - LABEL_W;
    const y = e.clientY - r.top - 1;
    if (x < 0 || y < 0) return null;
    const c = Math.floor(x / layout.cell);
    if (c >= layout.cols || y % layout.rowH >= layout.cell) return null;
    const i = Math.floor(y / layout.rowH) * layout.cols + c;
    return segs[i] || null;
  };

  canvas.addEventListener('mousemove', (e) => {
    const s = hit(e);
    if (!s) { tip.hide(); return; }
    const start = body.mainBlkaddr + s.segno * bps;
    tip.show(`segment ${s.segno}  ${TYPE_NAMES[s.type] || `type ${s.type}`}${s.current ? '  (current)' : ''}\n` +
      `valid ${int(s.valid)} / ${int(bps)}  ${s.valid === 0 ? CLASS.free : s.valid < bps ? CLASS.dirty : CLASS.full}\n` +
      `blocks ${start} … ${start + bps - 1}${spp > 1 ? `\n${secText(s.segno)}` : ''}`, e.clientX, e.clientY);
  });
  canvas.addEventListener('mouseleave', () => tip.hide());
  const select = (/** @type {number} */ segno) => {
    selected = segno;
    draw();
    // The hash makes the view a link: /images/demo#seg=6.
    history.replaceState(null, '', `#seg=${segno}`);
    showSegment(doc, id, segno, tip, spp > 1 ? secText(segno) : '');
  };
  canvas.addEventListener('click', (e) => {
    const s = hit(e);
    if (s) select(s.segno);
  });
  onResize(canvas, draw);
  draw();
  const m = /^#seg=(\d+)$/.exec(location.hash);
  if (m && Number(m[1]) < segs.length) select(Number(m[1]));
}

/**
 * Fetches one segment's SIT entry and draws its valid map.
 * @param {Document} doc
 * @param {string} id
 * @param {number} segno
 * @param {Tooltip} tip
 * @param {string} section the segment's section and its valid count, '' with one segment per section
 */
async function showSegment(doc, id, segno, tip, section) {
  const box = /** @type {HTMLElement} */ (doc.getElementById('segdetail'));
  const title = /** @type {HTMLElement} */ (doc.getElementById('segdetail-title'));
  const canvas = /** @type {HTMLCanvasElement} */ (doc.getElementById('segbits'));
  box.hidden = false;
  title.textContent = `Segment ${segno}: loading…`;
  let s;
  try {
    const r = await fetch(apiImage(id, 'segments', segno));
    s = await r.json();
    if (!r.ok) throw new Error(s.error || r.statusText);
  } catch (err) {
    title.textContent = `Segment ${segno}: ${err.message || err}`;
    return;
  }
  const bits = s.bits || '';
  const n = bits.length || 512;
  title.textContent = `Segment ${segno} · ${TYPE_NAMES[s.type] || `type ${s.type}`} · valid ${int(s.valid)} / ${n}` +
    ` · blocks ${s.startAddr} … ${s.startAddr + n - 1}${s.current ? ' · current segment' : ''}` +
    `${s.source ? ` · from ${s.source}` : ''}${section ? ` · ${section}` : ''}`;
  const links = doc.getElementById('segdetail-links');
  if (links) {
    const a = (/** @type {string} */ label, /** @type {number} */ addr, /** @type {string} */ testid) => {
      const el = doc.createElement('a');
      el.href = blockURL(id, addr);
      el.textContent = `${label} ${addr}`;
      el.dataset.testid = testid;
      return el;
    };
    links.replaceChildren('Inspect: ', a('first block', s.startAddr, 'segment-first-block'));
    // The inspector knows where the segment's live summary and SIT entry
    // are (the checkpoint's for a current segment, the SSA's otherwise).
    fetch(apiImage(id, 'blocks', s.startAddr))
      .then((r) => (r.ok ? r.json() : null))
      .then((b) => {
        for (const l of (b && b.links) || []) {
          if (l.name === 'summary entry') links.append(' · ', a('its summary block', l.addr, 'segment-summary-block'));
          if (l.name === 'SIT entry') links.append(' · ', a('its SIT entry\u2019s block', l.addr, 'segment-sit-block'));
        }
      })
      .catch(() => {});
  }
  const COLS = 64;
  const rows = Math.ceil(n / COLS);
  const draw = () => {
    const w = Math.min(640, canvas.parentElement?.getBoundingClientRect().width || 640);
    const cell = Math.max(4, Math.floor((w - 34) / COLS));
    canvas.style.width = `${cell * COLS + 34}px`;
    const { ctx } = fit(canvas, rows * cell + 1);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.font = '10px ui-monospace, monospace';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    // Label every row when the rows are tall enough for the text.
    const every = cell >= 12 ? 1 : 2;
    for (let r = 0; r < rows; r += every) {
      ctx.fillStyle = INK3;
      ctx.fillText(String(r * COLS), 30, r * cell + cell / 2);
    }
    for (let k = 0; k < n; k++) {
      const x = 34 + (k % COLS) * cell;
      const y = Math.floor(k / COLS) * cell;
      ctx.fillStyle = bits[k] === '1' ? '#33404d' : '#fff';
      ctx.fillRect(x, y, cell, cell);
      ctx.strokeStyle = '#d5dbe1';
      ctx.lineWidth = 0.5;
      ctx.strokeRect(x + 0.25, y + 0.25, cell - 0.5, cell - 0.5);
    }
    canvas.onmousemove = (e) => {
      const r = canvas.getBoundingClientRect();
      const k = Math.floor((e.clientY - r.top) / cell) * COLS + Math.floor((e.clientX - r.left - 34) / cell);
      if (e.clientX - r.left < 34 || k < 0 || k >= n) { tip.hide(); return; }
      tip.show(`block offset ${k}  addr ${s.startAddr + k}\n${bits[k] === '1' ? 'valid' : 'free'}`, e.clientX, e.clientY);
    };
    canvas.onmouseleave = () => tip.hide();
    // A click inspects the block under the mouse.
    canvas.onclick = (e) => {
      const r = canvas.getBoundingClientRect();
      const k = Math.floor((e.clientY - r.top) / cell) * COLS + Math.floor((e.clientX - r.left - 34) / cell);
      if (e.clientX - r.left < 34 || k < 0 || k >= n) return;
      location.assign(blockURL(id, s.startAddr + k));
    };
    canvas.style.cursor = 'pointer';
  };
  draw();
  
}

initImage(document);
initTree(document);
