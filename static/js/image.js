// The image page: the segment map of the whole main area (one cell per
// segment, coloured by log type, filled by valid blocks) and, on click,
// that segment's valid-block bitmap.
import { fit, Tooltip, onResize } from './canvas.js';
import { int } from './fmt.js';
import { TYPE_COLOURS, TYPE_NAMES, INK, LINE, dots, OI } from './palette.js';

const LABEL_W = 40; // left margin for row-start segment numbers

/**
 * @typedef {{segno: number, valid: number, type: number, current: boolean}} SegInfo
 * @typedef {{blocksPerSeg: number, mainBlkaddr: number, segments: SegInfo[]}} SegmentsBody
 */

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
    const r = await fetch(`/api/images/${encodeURIComponent(id)}/segments`);
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
  const bps = body.blocksPerSeg || 512;
  let layout = { cell: 10, cols: 1 };
  let selected = -1;

  const draw = () => {
    const w = canvas.getBoundingClientRect().width;
    const n = Math.max(1, segs.length);
    const avail = Math.max(50, w - LABEL_W);
    let cell = Math.floor(Math.sqrt((avail * 240) / n));
    cell = Math.max(6, Math.min(34, cell));
    const cols = Math.max(1, Math.floor(avail / cell));
    const rows = Math.ceil(n / cols);
    layout = { cell, cols };
    const { ctx, dpr } = fit(canvas, rows * cell + 2);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    const nodeFills = TYPE_COLOURS.map((c, t) => (t >= 3 ? dots(ctx, c, t === 5 ? '#333' : '#fff', dpr) : c));
    ctx.font = '11px ui-monospace, monospace';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let r = 0; r < rows; r++) {
      ctx.fillStyle = '#7a8591';
      ctx.fillText(String(r * cols), LABEL_W - 6, 1 + r * cell + cell / 2);
    }
    for (let i = 0; i < segs.length; i++) {
      const s = segs[i];
      const x = LABEL_W + (i % cols) * cell;
      const y = 1 + Math.floor(i / cols) * cell;
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
  };

  /** @returns {SegInfo|null} */
  const hit = (/** @type {MouseEvent} */ e) => {
    const r = canvas.getBoundingClientRect();
    const x = e.clientX - r.left - LABEL_W;
    const y = e.clientY - r.top - 1;
    if (x < 0 || y < 0) return null;
    const c = Math.floor(x / layout.cell);
    if (c >= layout.cols) return null;
    const i = Math.floor(y / layout.cell) * layout.cols + c;
    return segs[i] || null;
  };

  canvas.addEventListener('mousemove', (e) => {
    const s = hit(e);
    if (!s) { tip.hide(); return; }
    const start = body.mainBlkaddr + s.segno * bps;
    tip.show(`segment ${s.segno}  ${TYPE_NAMES[s.type] || `type ${s.type}`}${s.current ? '  (current)' : ''}\n` +
      `valid ${int(s.valid)} / ${int(bps)}  ${s.valid === 0 ? 'free' : s.valid < bps ? 'dirty' : 'full'}\n` +
      `blocks ${start} … ${start + bps - 1}`, e.clientX, e.clientY);
  });
  canvas.addEventListener('mouseleave', () => tip.hide());
  const select = (/** @type {number} */ segno) => {
    selected = segno;
    draw();
    // The hash makes the view a link: /images/demo#seg=6.
    history.replaceState(null, '', `#seg=${segno}`);
    showSegment(doc, id, segno, tip);
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
 */
async function showSegment(doc, id, segno, tip) {
  const box = /** @type {HTMLElement} */ (doc.getElementById('segdetail'));
  const title = /** @type {HTMLElement} */ (doc.getElementById('segdetail-title'));
  const canvas = /** @type {HTMLCanvasElement} */ (doc.getElementById('segbits'));
  box.hidden = false;
  title.textContent = `Segment ${segno}: loading…`;
  let s;
  try {
    const r = await fetch(`/api/images/${encodeURIComponent(id)}/segments/${segno}`);
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
    `${s.source ? ` · from ${s.source}` : ''}`;
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
      ctx.fillStyle = '#7a8591';
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
  };
  draw();
  
}

initImage(document);
