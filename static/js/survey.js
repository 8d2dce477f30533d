// The survey page (GET /images/ID/survey, web/survey.go): it starts the image's survey, shows its
// progress, then draws the answer of GET /api/images/ID/survey — the totals with an estimated time
// from costs the reader may change, the run-length histogram and the cumulative "calls saved by file
// size" plot (SVG, to save), the directories, the files batching saves nothing on, and every file
// in a table that sorts by any column and links each row to the player at that file. The pure parts
// are exported for static/jstest/survey.test.js.

import { int, bytes } from './fmt.js';
import { fmtTime } from './cost.js';
import { imagePage, apiImage, setRunQuery } from './links.js';
import { contract } from './contract.js';

/**
 * The operations of a row, in the survey's order (survey.OpNames), as the contract names them.
 * @returns {string[]}
 */
export function ops() {
  const o = contract().ops;
  return [o.zero, o.punch, o.truncate];
}

/** @returns {string} the per-block mode's name */
const PB = () => contract().modes.perBlock;
/** @returns {string} the batched mode's name */
const BT = () => contract().modes.batched;
/** @returns {string} the zero's name */
const ZERO = () => contract().ops.zero;

/**
 * @typedef {object} Costs the estimate's costs
 * @property {number} perCall µs per f2fs_invalidate_blocks call
 * @property {number} perBlock µs per block invalidated
 */

/**
 * The estimated time in milliseconds of calls invalidating blocks (survey.Costs.Ms).
 * @param {number} calls
 * @param {number} blocks
 * @param {Costs} c
 * @returns {number}
 */
export function estimateMs(calls, blocks, c) {
  return (calls * c.perCall + blocks * c.perBlock) / 1000;
}

/**
 * Reads a cost the reader typed: a finite number ≥ 0, else the fallback.
 * @param {string} s
 * @param {number} fallback
 * @returns {number}
 */
export function parseCost(s, fallback) {
  const v = Number(String(s).trim());
  return String(s).trim() !== '' && Number.isFinite(v) && v >= 0 ? v : fallback;
}

/**
 * The calls batching saves on one file's operation: per-block minus batched calls, 0 when either
 * mode did not run (survey.File.Saving).
 * @param {any} f a row of the survey's JSON
 * @param {string} op
 * @returns {number}
 */
export function saved(f, op) {
  const m = f.ops[op];
  const pb = m[PB()], b = m[BT()];
  if (pb.error || b.error || pb.calls < b.calls) return 0;
  return pb.calls - b.calls;
}

/**
 * What a mode's cell says when the operation did not count: "refused", "error" or the errno, else ''.
 * @param {any} r one mode's result
 * @returns {string}
 */
export function outcome(r) {
  if (r.error) return r.refused ? 'refused' : 'error';
  return r.errno || '';
}

/**
 * The columns of the files table: a label, the value a row sorts by, and whether it is a number.
 * @type {Array<{key: string, label: string, num: boolean, value: (f: any, op: string, c: Costs) => number|string}>}
 */
export const COLUMNS = Object.freeze([
  { key: 'path', label: 'file', num: false, value: (f) => f.path },
  { key: 'size', label: 'size', num: true, value: (f) => f.size },
  { key: 'pb', label: 'calls per-block', num: true, value: (f, op) => callsOf(f, op, PB()) },
  { key: 'b', label: 'calls batched', num: true, value: (f, op) => callsOf(f, op, BT()) },
  { key: 'saved', label: 'calls saved', num: true, value: (f, op) => saved(f, op) },
  { key: 'blocks', label: 'blocks', num: true, value: (f, op) => f.ops[op][PB()].blocksInvalidated || 0 },
  { key: 'runs', label: 'runs', num: true, value: (f, op) => f.ops[op][PB()].runs || 0 },
  { key: 'new', label: 'NEW', num: true, value: (f, op) => f.ops[op][PB()].slotsNew || 0 },
  { key: 'null', label: 'NULL', num: true, value: (f, op) => f.ops[op][PB()].slotsNull || 0 },
  { key: 'chunks', label: 'dnode chunks', num: true, value: (f, op) => f.ops[op][PB()].dnodeChunks || 0 },
  { key: 'est', label: 'est. time saved*', num: true, value: (f, op, c) => savedMs(f, op, c) },
]);

/**
 * @param {any} f
 * @param {string} op
 * @param {string} mode
 * @returns {number} the mode's calls, -1 when it did not run (sorts below 0)
 */
function callsOf(f, op, mode) {
  const r = f.ops[op][mode];
  return r.error ? -1 : r.calls;
}

/**
 * The estimated time batching saves on one file's operation, in ms.
 * @param {any} f
 * @param {string} op
 * @param {Costs} c
 * @returns {number}
 */
export function savedMs(f, op, c) {
  const m = f.ops[op];
  const pb = m[PB()], b = m[BT()];
  if (pb.error || b.error) return 0;
  return estimateMs(pb.calls, pb.blocksInvalidated, c) - estimateMs(b.calls, b.blocksInvalidated, c);
}

/**
 * Sorts rows (a copy) by column key for operation op, descending when desc; ties by path.
 * @param {any[]} files
 * @param {string} key
 * @param {boolean} desc
 * @param {string} op
 * @param {Costs} c
 * @returns {any[]}
 */
export function sortFiles(files, key, desc, op, c) {
  const col = COLUMNS.find((k) => k.key === key) || COLUMNS[0];
  const sign = desc ? -1 : 1;
  return files.slice().sort((x, y) => {
    const a = col.value(x, op, c), b = col.value(y, op, c);
    let d = 0;
    if (a < b) d = -1; else if (a > b) d = 1;
    if (d === 0) return x.path < y.path ? -1 : x.path > y.path ? 1 : 0;
    return sign * d;
  });
}

/**
 * The cumulative "calls saved by file size" series: files by size (smallest first), each point the
 * size and the calls saved by every file up to it. Files that save nothing add no point.
 * @param {any[]} files
 * @param {string} op
 * @returns {Array<{size: number, saved: number}>}
 */
export function cumulativeSaved(files, op) {
  const rows = files.map((f) => ({ size: f.size, s: saved(f, op) })).filter((r) => r.s > 0);
  rows.sort((a, b) => a.size - b.size);
  let total = 0;
  return rows.map((r) => ({ size: r.size, saved: (total += r.s) }));
}

/**
 * Escapes text for SVG/HTML.
 * @param {string} s
 * @returns {string}
 */
export function esc(s) {
  return String(s).replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[ch] || ch));
}

/**
 * A path as HTML that may wrap after each slash, and nowhere else.
 * @param {string} p
 * @returns {string}
 */
export function pathHTML(p) {
  return esc(p).replace(/\//g, '/<wbr>');
}

const W = 560, H = 260, L = 64, R = 28, T = 16, B = 52;

/**
 * The run-length histogram as a standalone SVG document: a bar per bucket, height the blocks in runs
 * of that length, labelled with the bucket and its count (presentation attributes only: it is saved
 * as a file and the page's CSP forbids inline styles).
 * @param {Array<{label: string, runs: number, blocks: number}>} buckets
 * @returns {string}
 */
export function histogramSVG(buckets) {
  const max = Math.max(1, ...buckets.map((b) => b.blocks));
  const bw = (W - L - R) / Math.max(1, buckets.length);
  const out = [svgOpen('Blocks by the length of the physical run they lie in')];
  out.push(axes('blocks', 'blocks in run'));
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4, y = T + (H - T - B) * (1 - i / 4);
    out.push(`<text x="${L - 6}" y="${y + 4}" text-anchor="end" font-size="10" fill="#4a5561">${esc(short(v))}</text>`);
  }
  buckets.forEach((b, i) => {
    const h = ((H - T - B) * b.blocks) / max;
    const x = L + i * bw + 3, y = H - B - h;
    out.push(`<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(bw - 6).toFixed(1)}" height="${h.toFixed(1)}" fill="#0072b2"><title>${esc(`runs of ${b.label} blocks: ${int(b.runs)} runs, ${int(b.blocks)} blocks`)}</title></rect>`);
    out.push(`<text x="${(x + (bw - 6) / 2).toFixed(1)}" y="${H - B + 14}" text-anchor="middle" font-size="10" fill="#1d232a">${esc(b.label)}</text>`);
  });
  out.push('</svg>');
  return out.join('');
}

/**
 * The cumulative calls-saved plot as a standalone SVG: x the file size (log scale), y the calls
 * saved by every file up to that size.
 * @param {Array<{size: number, saved: number}>} pts
 * @returns {string}
 */
export function plotSVG(pts) {
  const out = [svgOpen('Calls saved by batching, cumulative over files by size')];
  out.push(axes('calls saved (cumulative)', 'file size (log scale)'));
  if (pts.length === 0) {
    out.push(`<text x="${W / 2}" y="${H / 2}" text-anchor="middle" font-size="12" fill="#4a5561">no file saves a call</text></svg>`);
    return out.join('');
  }
  const lo = Math.log2(Math.max(1, pts[0].size)), hi = Math.max(lo + 1, Math.log2(Math.max(1, pts[pts.length - 1].size)));
  const maxY = pts[pts.length - 1].saved || 1;
  const X = (s) => L + ((W - L - R) * (Math.log2(Math.max(1, s)) - lo)) / (hi - lo);
  const Y = (v) => H - B - ((H - T - B) * v) / maxY;
  let d = `M${X(pts[0].size).toFixed(1)},${Y(0).toFixed(1)}`;
  let prev = 0;
  for (const p of pts) {
    d += `L${X(p.size).toFixed(1)},${Y(prev).toFixed(1)}L${X(p.size).toFixed(1)},${Y(p.saved).toFixed(1)}`;
    prev = p.saved;
  }
  out.push(`<path d="${d}" fill="none" stroke="#d55e00" stroke-width="2"/>`);
  for (let i = 0; i <= 4; i++) {
    const v = (maxY * i) / 4;
    out.push(`<text x="${L - 6}" y="${Y(v) + 4}" text-anchor="end" font-size="10" fill="#4a5561">${esc(short(v))}</text>`);
  }
  for (let e = Math.ceil(lo); e <= Math.floor(hi); e += Math.max(1, Math.ceil((hi - lo) / 6))) {
    out.push(`<text x="${X(2 ** e).toFixed(1)}" y="${H - B + 14}" text-anchor="middle" font-size="10" fill="#1d232a">${esc(bytes(2 ** e))}</text>`);
  }
  out.push('</svg>');
  return out.join('');
}

/**
 * @param {string} title
 * @returns {string}
 */
function svgOpen(title) {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(title)}"><title>${esc(title)}</title><rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`;
}

/**
 * @param {string} yLabel
 * @param {string} xLabel
 * @returns {string}
 */
function axes(yLabel, xLabel) {
  return `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#4a5561"/><line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#4a5561"/>`
    + `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle" font-size="11" fill="#1d232a">${esc(xLabel)}</text>`
    + `<text x="12" y="${(T + H - B) / 2}" text-anchor="middle" font-size="11" fill="#1d232a" transform="rotate(-90 12 ${(T + H - B) / 2})">${esc(yLabel)}</text>`;
}

/**
 * A short axis number: 1234 → "1.2k", 2500000 → "2.5M".
 * @param {number} v
 * @returns {string}
 */
export function short(v) {
  if (v >= 1e9) return `${(v / 1e9).toFixed(1)}G`;
  if (v >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (v >= 1e4) return `${(v / 1e3).toFixed(0)}k`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  return String(Math.round(v));
}

/**
 * The player at a file, playing operation op over the whole file in both modes.
 * @param {string} id
 * @param {any} f a row
 * @param {string} op
 * @returns {string}
 */
export function playerURL(id, f, op) {
  const c = contract();
  const q = setRunQuery(new URLSearchParams(), op === c.ops.truncate
    ? { path: f.path, op, size: 0, offset: 0, mode: c.modes.both }
    : { path: f.path, op, offset: 0, length: f.size, mode: c.modes.both });
  return `${imagePage(id, 'run')}?${q.toString()}`;
}

/**
 * The progress line: "1,234 of 10,001 files (12%)".
 * @param {{state: string, done: number, total: number, error?: string}} p
 * @returns {string}
 */
export function progressText(p) {
  switch (p.state) {
    case 'listing': return 'listing the files…';
    case 'failed': return `failed: ${p.error || 'unknown error'}`;
    case 'done': return `done: ${int(p.total)} files`;
  }
  const pct = p.total > 0 ? Math.floor((p.done * 100) / p.total) : 0;
  return `${int(p.done)} of ${int(p.total)} files (${pct}%)`;
}

/** Rows the files table shows at first, and adds per "show more". */
export const PAGE = 100;

/**
 * Wires the page: polls the progress, then fetches and draws the survey.
 * @param {Document} doc
 */
export function initSurvey(doc) {
  const $ = (id) => /** @type {any} */ (doc.getElementById(id));
  const root = $('survey');
  if (!root) return;
  const id = root.dataset.id;
  const defaults = { perCall: Number(root.dataset.perCall), perBlock: Number(root.dataset.perBlock) };
  const state = { survey: /** @type {any} */ (null), op: ZERO(), key: 'saved', desc: true, shown: PAGE, filter: '' };
  const costs = () => ({ perCall: parseCost($('sv-per-call').value, defaults.perCall), perBlock: parseCost($('sv-per-block').value, defaults.perBlock) });

  const poll = async () => {
    let p;
    try {
      const res = await fetch(apiImage(id, 'survey', 'progress'), { cache: 'no-store' });
      p = await res.json();
      if (!res.ok) p = { state: 'failed', done: 0, total: 0, error: p.error || res.statusText };
    } catch (e) {
      p = { state: 'failed', done: 0, total: 0, error: String(e) };
    }
    $('sv-status').textContent = progressText(p);
    // How many answers showed the survey under way (the tests read it: the bar moved).
    if (p.state === 'running' && p.done < p.total) root.dataset.partial = String(Number(root.dataset.partial || 0) + 1);
    $('sv-progress').max = Math.max(1, p.total);
    $('sv-progress').value = p.state === 'done' ? Math.max(1, p.total) : p.done;
    if (p.state === 'done') return load();
    if (p.state !== 'failed') setTimeout(poll, 250);
  };

  const load = async () => {
    const res = await fetch(apiImage(id, 'survey'));
    const body = await res.json();
    if (!res.ok) {
      $('sv-status').textContent = `failed: ${body.error || res.statusText}`;
      return;
    }
    state.survey = body;
    root.dataset.state = 'done';
    for (const s of ['sv-results', 'sv-pictures', 'sv-files-panel']) $(s).hidden = false;
    drawStatic();
    drawCosts();
    drawFiles();
  };

  const setSVG = (box, link, svg) => {
    box.innerHTML = svg;
    // Saved from memory: a blob URL is no request to anyone (the static site asks its host for
    // nothing but its files).
    if (link.href.startsWith('blob:')) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  };

  const drawStatic = () => {
    const s = state.survey;
    const h = $('sv-hist');
    setSVG(h, $('sv-hist-svg'), histogramSVG(s.histogram));
    setSVG($('sv-plot'), $('sv-plot-svg'), plotSVG(cumulativeSaved(s.files, ZERO())));
    $('sv-dirs').innerHTML = s.directories.length === 0
      ? '<tr><td colspan="5">no directory below the root holds a file that saves a call</td></tr>'
      : s.directories.map((d) => `<tr><td><code>${esc(d.path)}</code></td><td>${int(d.files)}</td><td>${int(d.callsPerBlock)}</td><td>${int(d.callsBatched)}</td><td>${int(d.saved)}</td></tr>`).join('');
    const ns = s.noSaving || [];
    $('sv-nosaving').innerHTML = s.noSavingFiles === 0
      ? 'None: every file of more than one block that a zero invalidates saves calls.'
      : `${int(s.noSavingFiles)} file(s) whose zero makes more than one call, every block its own run: `
        + ns.map((n) => `<a href="${esc(playerURL(id, n, ZERO()))}"><code>${esc(n.path)}</code></a> (${int(n.calls)} calls)`).join(', ')
        + (s.noSavingFiles > ns.length ? ` and ${int(s.noSavingFiles - ns.length)} more.` : '.');
    const c = s.compressed, cz = c.ops[ZERO()];
    $('sv-compressed').textContent = c.files === 0
      ? 'No compressed file.'
      : `Compressed files, apart: ${int(c.files)} (${int(cz[PB()].slotsCompress)} cluster markers met by the zero); a zero of them: ${int(cz[PB()].calls)} calls per-block, ${int(cz[BT()].calls)} batched, ${int(cz[PB()].errnos)} refused by the kernel with an errno.`;
    $('sv-unlisted').textContent = (s.unlisted || []).length === 0 ? ''
      : `The listing stepped over ${int(s.unlisted.length + (s.unlistedDropped || 0))} damaged entries, not surveyed: ${s.unlisted.map((u) => `${u.path} (${u.error})`).join('; ')}.`;
  };

  const drawCosts = () => {
    const s = state.survey, c = costs();
    const rows = [];
    for (const op of ops()) {
      for (const m of contract().modes.order) {
        const x = s.totals.ops[op][m];
        rows.push(`<tr><th scope="row">${op}</th><td>${m}</td><td>${int(x.calls)}</td><td>${int(x.sitLockAcquisitions)}</td><td>${int(x.blocksInvalidated)}</td><td>${int(x.runs)}</td><td>${int(x.slotsNew)}</td><td>${int(x.slotsNull)}</td><td>${int(x.dnodeChunks)}</td><td>≈ ${fmtTime(estimateMs(x.calls, x.blocksInvalidated, c))}</td><td class="result">${int(x.errnos)} / ${int(x.errors)} (${int(x.refused)})</td></tr>`);
      }
    }
    $('sv-totals').innerHTML = rows.join('');
    const z = s.totals.ops[ZERO()], zp = z[PB()], zb = z[BT()];
    const ms = estimateMs(zp.calls, zp.blocksInvalidated, c) - estimateMs(zb.calls, zb.blocksInvalidated, c);
    $('sv-headline').textContent = `${int(s.totals.files)} regular files. Zeroing every one, batching makes ${int(zb.calls)} f2fs_invalidate_blocks calls instead of ${int(zp.calls)}: ${int(zp.calls - zb.calls)} fewer, ≈ ${fmtTime(ms)} saved (estimated).`;
    const custom = c.perCall !== defaults.perCall || c.perBlock !== defaults.perBlock;
    $('sv-cost-source').textContent = custom
      ? `An estimate from the costs typed above: ${c.perCall} µs per call, ${c.perBlock} µs per block.`
      : `${s.costs.source}.`;
  };

  const drawFiles = () => {
    const s = state.survey, c = costs(), op = state.op;
    $('sv-files-head').innerHTML = COLUMNS.map((k) => {
      const sorted = k.key === state.key;
      const aria = sorted ? (state.desc ? 'descending' : 'ascending') : 'none';
      return `<th scope="col" aria-sort="${aria}"><button type="button" class="sortbtn" data-key="${k.key}" data-testid="sort-${k.key}">${esc(k.label)}${sorted ? (state.desc ? ' ▾' : ' ▴') : ''}</button></th>`;
    }).join('') + '<th scope="col">result</th>';
    const f = state.filter;
    const rows = sortFiles(f ? s.files.filter((x) => x.path.includes(f)) : s.files, state.key, state.desc, op, c);
    $('sv-count').textContent = `${int(Math.min(rows.length, state.shown))} of ${int(rows.length)} files shown`;
    $('sv-files').innerHTML = rows.slice(0, state.shown).map((x) => {
      const m = x.ops[op], pb = m[PB()], b = m[BT()];
      const res = [outcome(pb), outcome(b)].filter(Boolean);
      const err = pb.error || b.error;
      const result = res.length === 0 ? 'OK' : `${res.join(' / ')}${err ? `: ${err}` : ''}`;
      const cells = COLUMNS.slice(1).map((k) => {
        const v = k.value(x, op, c);
        if (k.key === 'est') return `<td>${pb.error || b.error ? '–' : `≈ ${fmtTime(/** @type {number} */ (v))}`}</td>`;
        if (k.key === 'size') return `<td>${bytes(x.size)}</td>`;
        return `<td>${typeof v === 'number' && v < 0 ? '–' : int(/** @type {number} */ (v))}</td>`;
      }).join('');
      return `<tr data-testid="survey-row"${x.compressed ? ' class="compressed"' : ''}><td><a href="${esc(playerURL(id, x, op))}" data-testid="survey-play"><code>${pathHTML(x.path)}</code></a>${x.compressed ? ' <span class="small muted">compressed</span>' : ''}</td>${cells}<td class="small result">${esc(result)}</td></tr>`;
    }).join('');
    $('sv-more').hidden = rows.length <= state.shown;
  };

  $('sv-files-head').addEventListener('click', (e) => {
    const btn = /** @type {any} */ (e.target).closest?.('button[data-key]');
    if (!btn) return;
    const key = btn.dataset.key;
    if (key === state.key) state.desc = !state.desc;
    else { state.key = key; state.desc = key !== 'path'; }
    drawFiles();
  });
  $('sv-op').addEventListener('change', () => { state.op = $('sv-op').value; drawFiles(); });
  $('sv-filter').addEventListener('input', () => { state.filter = $('sv-filter').value; state.shown = PAGE; if (state.survey) drawFiles(); });
  $('sv-more').addEventListener('click', () => { state.shown += PAGE; drawFiles(); });
  for (const k of ['sv-per-call', 'sv-per-block']) {
    $(k).addEventListener('input', () => { if (state.survey) { drawCosts(); drawFiles(); } });
  }
  $('sv-costs-reset').addEventListener('click', () => {
    $('sv-per-call').value = String(defaults.perCall);
    $('sv-per-block').value = String(defaults.perBlock);
    if (state.survey) { drawCosts(); drawFiles(); }
  });
  poll();
}

if (typeof document !== 'undefined') initSurvey(document);
