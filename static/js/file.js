// The file page: the block map drawn from the file's extents, one column
// per block when they fit, otherwise each pixel column shows the extents
// that fall in it.
import { fit, Tooltip, onResize } from './canvas.js';
import { int } from './fmt.js';
import { segmentHue, hatch, NULL_FILL, LINE, OI } from './palette.js';

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
  const total = ext.length ? ext[ext.length - 1].index + ext[ext.length - 1].count : 0;
  const tip = new Tooltip();
  const AXIS = 16;

  const draw = () => {
    const { ctx, w, h, dpr } = fit(canvas);
    ctx.clearRect(0, 0, w, h);
    const bh = h - AXIS;
    if (!total) {
      ctx.fillStyle = '#7a8591';
      ctx.font = '13px system-ui, sans-serif';
      ctx.fillText('no data slots (inline data or an empty file)', 4, bh / 2);
      return;
    }
    const hp = hatch(ctx, dpr);
    const sx = w / total;
    for (const e of ext) {
      const x0 = e.index * sx;
      const x1 = Math.max(x0 + 0.75, (e.index + e.count) * sx);
      switch (e.state) {
        case 'addr': ctx.fillStyle = segmentHue(e.segno >= 0 ? e.segno : 0); break;
        case 'new': ctx.fillStyle = hp; break;
        case 'compress': ctx.fillStyle = OI.vermillion; break;
        default: ctx.fillStyle = NULL_FILL;
      }
      ctx.fillRect(x0, 0, x1 - x0, bh);
      // Physically separate runs get a thin separator when wide enough
      // to see, so "3 runs" reads as three blocks of colour.
      if (e.state === 'addr' && x1 - x0 > 3) {
        ctx.fillStyle = '#fff';
        ctx.fillRect(x0, 0, 1, bh);
      }
    }
    ctx.strokeStyle = LINE;
    ctx.lineWidth = 1;
    ctx.strokeRect(0.5, 0.5, w - 1, bh - 1);
    ctx.fillStyle = '#4a5561';
    ctx.font = '11px ui-monospace, monospace';
    ctx.textBaseline = 'top';
    const ticks = Math.max(2, Math.floor(w / 140));
    for (let i = 0; i <= ticks; i++) {
      const b = Math.round((total * i) / ticks);
      const x = (b / total) * w;
      ctx.fillRect(Math.min(w - 1, x), bh, 1, 4);
      ctx.textAlign = i === 0 ? 'left' : i === ticks ? 'right' : 'center';
      ctx.fillText(int(b), Math.min(w - 1, x), bh + 4);
    }
  };

  canvas.addEventListener('mousemove', (e) => {
    if (!total) return;
    const r = canvas.getBoundingClientRect();
    const b = Math.floor(((e.clientX - r.left) / r.width) * total);
    let lo = 0;
    let hi = ext.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ext[mid].index <= b) lo = mid; else hi = mid - 1;
    }
    const x = ext[lo];
    if (!x) return;
    const what = x.state === 'addr'
      ? `address ${x.addr + (b - x.index)}  (run ${x.addr}…${x.addr + x.count - 1}, segment ${x.segno})`
      : x.state === 'new' ? 'NEW_ADDR (reserved, never written)' : x.state === 'null' ? 'NULL_ADDR (hole)' : x.state;
    tip.show(`file block ${int(b)}\n${what}\nextent: blocks ${int(x.index)}…${int(x.index + x.count - 1)} (${int(x.count)})`, e.clientX, e.clientY);
  });
  canvas.addEventListener('mouseleave', () => tip.hide());
  onResize(canvas, draw);
  draw();
}

initFile(document);
