// The player's sentences about the run: what a slot holds, where the cursor is, what the SIT panel
// and the outcome line say. Pure functions of the model (state.js) and the slot view's pin, so the
// panels (panels.js), the tooltip and the node tests (static/jstest/describe.test.js) share them.
import { NULL_ADDR, NEW_ADDR, COMPRESS_ADDR, blockWord } from './state.js';
import { int } from './fmt.js';
import { contract, blockOffset } from './contract.js';

const BATCHED = contract().modes.batched;
import { withholds, WITHHOLD } from './quiz.js';

/** @typedef {import('./state.js').RunState} RunState */

/**
 * Says "1 slot" or "2,048 slots".
 * @param {number} n
 * @param {string} word singular
 * @returns {string}
 */
export function plural(n, word) {
  return `${int(n)} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Says what one slot value is. An open quiz question's veil may withhold its segment (the number,
 * the block offset, "outside the main area") and its physical run.
 * @param {RunState} st
 * @param {number} off slot offset in the range
 * @param {number} v
 * @param {import('./quiz.js').Veil} [veil]
 * @returns {string}
 */
export function slotValueText(st, off, v, veil) {
  if (v === NULL_ADDR) return 'NULL_ADDR: a hole';
  if (v === NEW_ADDR) return 'NEW_ADDR: reserved, reads as zeros';
  if (v === COMPRESS_ADDR) return 'COMPRESS_ADDR: a compressed-cluster marker';
  if (withholds(veil, WITHHOLD.segments)) return `address ${v}`;
  const seg = st.segnoOf(v);
  if (seg < 0) return `address ${v}, outside the main area`;
  const run = st.runs && !withholds(veil, WITHHOLD.runs) ? st.runs.runAt(off) : -1;
  return `address ${v}, segment ${seg}, block offset ${blockOffset(st.geometry, v)}${run >= 0 ? `, physical run ${run + 1} of ${st.runs?.count}` : ''}`;
}

/**
 * Describes a slot for the tooltip: its index and file offset, its chunk, its value now and
 * before the run, a rejected address.
 * @param {RunState} st
 * @param {number} off slot offset in the range
 * @param {import('./quiz.js').Veil} [veil] an open quiz question's
 * @returns {string}
 */
export function slotText(st, off, veil) {
  const idx = st.range.start + off;
  const v = st.slots[off];
  const ci = st.chunkOf(idx);
  const c = st.chunks[ci];
  const lines = [`slot ${int(idx)} (file offset ${int(idx * st.geometry.blockSize)})`];
  if (c) {
    lines.push(`chunk ${ci + 1} of ${st.chunks.length}: ${c.path}, slot ${int(idx - c.start)} of ${int(c.len)}`);
    if (c.missing) lines.push(`(+ ${c.missing} node${c.missing > 1 ? 's' : ''} created by ALLOC_NODE)`);
  }
  lines.push(slotValueText(st, off, v, veil));
  const b = st.initial[off];
  if (b !== v) lines.push(`before the run: ${slotValueText(st, off, b, veil)}`);
  if (st.bad.has(off)) lines.push('✕ rejected by f2fs_is_valid_blkaddr');
  if (st.info.image) lines.push('click to pin it: links to its block and its place on the file page show above the map');
  return lines.join('\n');
}

/**
 * The slot panel's text line: where the cursor (or the pinned slot) is and what it holds.
 * @param {RunState} st
 * @param {number|null} pin the pinned slot's offset, or null
 * @param {import('./quiz.js').Veil} [veil] an open quiz question's
 * @param {boolean} [brief] presenter mode: the pending run is left to the canvas
 * @returns {string}
 */
export function cursorLine(st, pin, veil, brief = false) {
  const off = Math.min(st.n - 1, Math.max(0, pin ?? (st.pointer() - st.range.start)));
  const idx = st.range.start + off;
  const ci = st.chunkOf(idx);
  const c = st.chunks[ci];
  const where = pin !== null ? 'pinned at' : 'cursor at';
  const chunk = c ? ` in ${c.path} (chunk ${ci + 1} of ${st.chunks.length})` : '';
  let s = `${where} slot ${int(idx)}${chunk}: ${slotValueText(st, off, st.slots[off], veil)}`;
  const b = st.initial[off];
  if (b !== st.slots[off]) s += `; before the run ${slotValueText(st, off, b, veil)}`;
  const bt = st.per[BATCHED];
  // Presenter mode (brief) leaves the pending run to the canvas, which draws it with its words.
  if (bt && bt.pending && !brief) s += ` · pending run (${blockWord(bt.pending.start)}, ${bt.pending.len})`;
  return s;
}

/**
 * The slot panel's heading aside: "2,048 slots in 3 chunks · 5 physical runs" (the runs left out
 * while a quiz question withholds them).
 * @param {RunState} st
 * @param {import('./quiz.js').Veil} [veil]
 * @returns {string}
 */
export function slotsAside(st, veil) {
  if (!st.ready) return '';
  const runs = st.runs && !withholds(veil, WITHHOLD.runs);
  return `${plural(st.n, 'slot')} in ${plural(st.chunks.length, 'chunk')}${runs ? ` · ${plural(st.runs.count, 'physical run')}` : ''}`;
}

/**
 * The SIT panel's heading aside: how many segments the run touches, how many are listed.
 * @param {RunState} st
 * @param {number} a first shown (1-based)
 * @param {number} b last shown
 * @returns {string}
 */
export function sitAside(st, a, b) {
  const listed = st.segOrder.size;
  const all = st.modes.length ? st.sitTotals(st.modes[0]).segments : listed;
  const n = Math.max(all, listed);
  let t = plural(n, 'segment');
  if (n > listed) t += ` (the first ${int(listed)} listed; totals count all)`;
  if (b < listed && b > 0) t += ` (${int(a)}–${int(b)} shown: ↑ ↓)`;
  return t;
}

/**
 * The SIT panel's text line: the segments changed most recently.
 * @param {RunState} st
 * @param {number} [most] how many segments it names (presenter mode names one: three do not fit
 *   a projector's line at 18 px)
 * @returns {string}
 */
export function sitLine(st, most = 3) {
  const segs = st.segmentsByActivity().slice(0, most);
  if (!segs.length) return 'no segment touched';
  return segs.map((n) => {
    const per = st.modes.map((m) => {
      const s = st.per[m].segments.get(n);
      return s ? `${st.modes.length > 1 ? `${m} ` : ''}${int(s.valid)} (${s.status})` : '';
    }).filter(Boolean).join(', ');
    const s0 = st.per[st.modes[0]].segments.get(n);
    return `segment ${n}: valid ${s0 ? int(s0.validBefore) : '?'} before, now ${per}`;
  }).join(' · ');
}

/**
 * Slot counts by state: "addresses · NEW · NULL", and compressed markers when there are any.
 * @param {{addr: number, new: number, null: number, compress: number}} c
 * @returns {string}
 */
export function statesText(c) {
  return `${int(c.addr)} · ${int(c.new)} · ${int(c.null)}${c.compress ? ` · ${int(c.compress)} compressed` : ''}`;
}

/**
 * The outcome line: what the run returned and why, at the end; before it, what it will return when
 * that is known from the start (a compressed file), else ''. The server words it (player.Outcome,
 * sent with the hello); the page only chooses which of its lines to show.
 * @param {RunState} st
 * @returns {string}
 */
export function outcomeText(st) {
  return st.done ? st.said.line : st.said.ahead;
}

/**
 * The markers' description for screen readers: the stops, chunks and call markers on the seek bar.
 * A quiz draws no call markers (where the calls fall would answer its questions), and says none.
 * @param {RunState} st
 * @param {boolean} [quiz]
 * @returns {string}
 */
export function markersText(st, quiz = false) {
  const head = `${plural(st.stops.length, 'tour stop')}, ${plural(st.chunks.length, 'dnode chunk')}`;
  if (quiz) return head;
  const flushes = st.markers.filter((m) => m.kind === 'flush').length;
  return `${head}, ${st.markersThinned ? 'some of the ' : ''}${plural(flushes, 'call marker')}`;
}
