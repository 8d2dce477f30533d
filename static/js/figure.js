// Figures to take away (issue 20): the slot and SIT panels as PNG at the current step (at the
// page's size or at presenter size), the slot strip as SVG, and the link to the calls as CSV.
// The SVG, captions, file names and the CSV link are pure functions (static/jstest/figure.test.js);
// savePNG draws through the page's own views onto a canvas of its own, so the figure is what the
// panel shows, with a caption, on white.

import { columnStart } from './columns.js';
import { segmentHue, NULL_FILL, NEW_FILL, NEW_LINE, INK, LINE } from './palette.js';
import { NULL_ADDR, NEW_ADDR, COMPRESS_ADDR } from './state.js';
import { int } from './fmt.js';
import { apiImage, setRunQuery } from './links.js';
import { contract } from './contract.js';

/** The largest number of columns an SVG strip has: a longer range is drawn a column per bucket. */
export const SVG_MAX_COLUMNS = 2048;

/** The CSS size a presenter-size PNG is drawn at (a 1080p projector's panel), before its scale. */
export const PRESENTER_SIZE = Object.freeze({ w: 1280, h: 640 });

/**
 * The caption of a figure: which file, range, step and mode it shows.
 * @param {{name: string, path: string, step: number, total: number, mode: string, first: number, last: number}} c
 * @returns {string}
 */
export function caption(c) {
  const where = c.name ? `${c.name} ${c.path}` : c.path;
  return `zrviz · ${where} · slots ${int(c.first)}…${int(c.last)} · step ${int(c.step)} of ${int(c.total)} · ${c.mode}`;
}

/**
 * A figure's file name: the file's base name, the panel, the step ("bench64.bin-slots-step2056.png").
 * @param {string} path
 * @param {string} panel "slots", "sit" or "strip"
 * @param {number} step
 * @param {string} ext "png" or "svg"
 * @returns {string}
 */
export function figureName(path, panel, step, ext) {
  const base = (path.split('/').filter(Boolean).pop() || 'run').replace(/[^A-Za-z0-9._-]/g, '_');
  return `${base}-${panel}-step${step}.${ext}`;
}

/**
 * The URL of the run's calls as CSV (GET /api/images/{id}/run?…&format=csv): the same request as
 * the page's, every mode of it.
 * @param {{image: string, path: string, op?: string, offset: string|number, length: string|number, mode: string, keepSize: boolean, before?: string[]}} r
 * @returns {string} '' for a run with no image (the sandbox)
 */
export function csvURL(r) {
  if (!r.image) return '';
  const q = setRunQuery(new URLSearchParams(), r);
  q.set('format', 'csv');
  return `${apiImage(r.image, 'run')}?${q}`;
}

/**
 * What a slot holds, as the strip colours it: "null", "new", "compress" or "seg:N" (an address in
 * segment N; -1 outside the main area).
 * @param {number} v the slot's value
 * @param {(addr: number) => number} segnoOf
 * @returns {string}
 */
export function slotClass(v, segnoOf) {
  if (v === NULL_ADDR) return 'null';
  if (v === NEW_ADDR) return 'new';
  if (v === COMPRESS_ADDR) return 'compress';
  return `seg:${segnoOf(v)}`;
}

/**
 * Draws the slot strip as SVG: one rectangle per stretch of neighbouring columns that show the
 * same thing; at most SVG_MAX_COLUMNS columns, each the first slot of its bucket (columns.js). NULL
 * is white with an outline, NEW hatched, COMPRESS_ADDR vermillion, an address its segment's hue.
 * @param {{slots: ArrayLike<number>, segnoOf: (addr: number) => number, title: string, first: number}} s
 * @returns {string}
 */
export function stripSVG(s) {
  const n = s.slots.length;
  const cols = Math.max(1, Math.min(n, SVG_MAX_COLUMNS));
  const W = 1000;
  const top = 26;
  const H = 40;
  const esc = (/** @type {string} */ t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  /** @type {string[]} */
  const rects = [];
  const fillOf = (/** @type {string} */ c) => {
    if (c === 'null') return `fill="${NULL_FILL}"`;
    if (c === 'new') return 'fill="url(#new)"';
    if (c === 'compress') return 'fill="#d55e00"';
    const seg = Number(c.slice(4));
    return `fill="${seg < 0 ? '#b8c0c8' : segmentHue(seg)}"`;
  };
  let x0 = 0;
  let cls = n ? slotClass(s.slots[0], s.segnoOf) : 'null';
  for (let x = 1; n > 0 && x <= cols; x++) {
    const c = x < cols ? slotClass(s.slots[columnStart(x, n, cols)], s.segnoOf) : '';
    if (c === cls) continue;
    const a = (x0 / cols) * W;
    const b = (x / cols) * W;
    const first = s.first + columnStart(x0, n, cols);
    const last = s.first + columnStart(x, n, cols) - 1;
    rects.push(`<rect x="${a.toFixed(2)}" y="${top}" width="${(b - a).toFixed(2)}" height="${H}" ${fillOf(cls)}><title>slots ${first}–${last}: ${cls.startsWith('seg:') ? `segment ${cls.slice(4)}` : cls}</title></rect>`);
    x0 = x;
    cls = c;
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${top + H + 22}" width="${W}" height="${top + H + 22}" font-family="sans-serif">`,
    `<title>${esc(s.title)}</title>`,
    `<defs><pattern id="new" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="${NEW_FILL}"/><line x1="0" y1="0" x2="0" y2="6" stroke="${NEW_LINE}" stroke-width="1.5"/></pattern></defs>`,
    `<rect width="${W}" height="${top + H + 22}" fill="#fff"/>`,
    `<text x="0" y="16" font-size="13" fill="${INK}">${esc(s.title)}</text>`,
    ...rects,
    `<rect x="0" y="${top}" width="${W}" height="${H}" fill="none" stroke="${LINE}"/>`,
    `<text x="0" y="${top + H + 16}" font-size="12" fill="${INK}">slot ${int(s.first)}</text>`,
    `<text x="${W}" y="${top + H + 16}" font-size="12" fill="${INK}" text-anchor="end">slot ${int(s.first + Math.max(0, n - 1))}</text>`,
    '</svg>',
  ].join('\n');
}

/**
 * Saves blob as a download named name.
 * @param {Document} doc
 * @param {Blob} blob
 * @param {string} name
 */
export function download(doc, blob, name) {
  const a = doc.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.hidden = true;
  doc.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}

/**
 * Draws a panel through draw onto a canvas of its own — w×h CSS pixels at scale — and returns it
 * as a PNG blob, on white under a caption line.
 * @param {Document} doc
 * @param {(f: {ctx: CanvasRenderingContext2D, w: number, h: number, dpr: number}) => void} draw the view's draw, given a fit
 * @param {{w: number, h: number, scale: number, caption: string, big: boolean}} o
 * @returns {Promise<Blob>}
 */
export function panelPNG(doc, draw, o) {
  const capH = o.big ? 40 : 24;
  const view = doc.createElement('canvas');
  view.width = Math.round(o.w * o.scale);
  view.height = Math.round(o.h * o.scale);
  const vctx = /** @type {CanvasRenderingContext2D} */ (view.getContext('2d'));
  vctx.setTransform(o.scale, 0, 0, o.scale, 0, 0);
  draw({ ctx: vctx, w: o.w, h: o.h, dpr: o.scale });
  const c = doc.createElement('canvas');
  c.width = view.width;
  c.height = view.height + Math.round(capH * o.scale);
  const ctx = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, c.width, c.height);
  ctx.drawImage(view, 0, Math.round(capH * o.scale));
  ctx.setTransform(o.scale, 0, 0, o.scale, 0, 0);
  ctx.fillStyle = INK;
  ctx.font = `${o.big ? 22 : 13}px system-ui, sans-serif`;
  ctx.textBaseline = 'middle';
  ctx.fillText(o.caption, 6, capH / 2, o.w - 12);
  return new Promise((ok, fail) => c.toBlob((b) => (b ? ok(b) : fail(new Error('toBlob gave nothing'))), 'image/png'));
}

/**
 * @typedef {object} FigureSource what the page's figures are drawn from, read when a button is pressed
 * @property {import('./state.js').RunState} st
 * @property {{draw: (st: any, f: any, now: number) => void, opts: {present: boolean}}} slots
 * @property {{draw: (st: any, f: any) => void, opts: {present: boolean}}} sit
 * @property {() => void} redraw the page's next frame redraws (the views' caches saw another size)
 */

/**
 * The mode of a run as the API names it: "both", or its one mode.
 * @param {string[]} modes
 * @returns {string}
 */
export function modeParam(modes) {
  const both = contract().modes.both;
  return modes.length > 1 ? both : modes[0] || both;
}

/**
 * Wires the player's "save" menu (templates/run.templ, #figures): the slot and SIT panels as PNG
 * (at the page's size, or at presenter size when that box is ticked), the slot strip as SVG, the
 * calls as CSV. Every figure is of the current step.
 * @param {Document} doc
 * @param {() => FigureSource} get
 */
export function wireFigures(doc, get) {
  const menu = doc.getElementById('figures');
  if (!menu) return;
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const big = /** @type {HTMLInputElement} */ ($('fig-big'));
  const csv = /** @type {HTMLAnchorElement} */ ($('fig-csv'));
  const status = $('fig-status');
  const capOf = (/** @type {import('./state.js').RunState} */ st) => caption({
    name: st.info.image, path: st.info.path, step: st.step, total: st.totalSteps, mode: modeParam(st.modes),
    first: st.range.start, last: Math.max(st.range.start, st.range.end - 1),
  });
  const refreshCSV = () => {
    const { st } = get();
    const href = csvURL({ image: st.info.image, path: st.info.path, op: st.info.op, offset: st.info.offset, length: st.info.length,
      mode: modeParam(st.modes), keepSize: st.info.keepSize, before: st.info.before });
    // The whole run's calls answer an open quiz question: no CSV while one is (body.veiled).
    csv.hidden = !href || doc.body.classList.contains('veiled');
    if (href && !csv.hidden) {
      csv.href = href;
      csv.download = figureName(st.info.path, 'calls', st.step, 'csv').replace(/-step\d+/, '');
    }
  };
  menu.addEventListener('toggle', refreshCSV);
  csv.addEventListener('focus', refreshCSV);
  const png = async (/** @type {'slots'|'sit'} */ panel) => {
    const src = get();
    const { st } = src;
    if (!st.ready) return;
    const canvas = /** @type {HTMLCanvasElement} */ ($(panel));
    const r = canvas.getBoundingClientRect();
    const large = big.checked;
    const w = large ? PRESENTER_SIZE.w : Math.max(200, Math.round(r.width));
    const h = large ? PRESENTER_SIZE.h : Math.max(120, Math.round(r.height));
    const scale = Math.max(2, window.devicePixelRatio || 1);
    const view = panel === 'slots' ? src.slots : src.sit;
    const was = view.opts.present;
    view.opts.present = large || was;
    /** @type {Promise<Blob>} */
    let blob;
    try {
      blob = panelPNG(doc, (f) => view.draw(st, f, performance.now()), { w, h, scale, caption: capOf(st), big: large });
    } finally {
      view.opts.present = was;
      src.redraw();
    }
    const name = figureName(st.info.path, panel, st.step, 'png');
    download(doc, await blob, name);
    status.textContent = `saved ${name}`;
  };
  $('fig-slots').addEventListener('click', () => { png('slots'); });
  $('fig-sit').addEventListener('click', () => { png('sit'); });
  $('fig-strip').addEventListener('click', () => {
    const { st } = get();
    if (!st.ready) return;
    const svg = stripSVG({ slots: st.slots, segnoOf: (a) => st.segnoOf(a), title: capOf(st), first: st.range.start });
    const name = figureName(st.info.path, 'strip', st.step, 'svg');
    download(doc, new Blob([svg], { type: 'image/svg+xml' }), name);
    status.textContent = `saved ${name}`;
  });
  refreshCSV();
}
