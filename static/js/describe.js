// The player's sentences about the run: what a slot holds, where the cursor is, what the SIT panel
// and the outcome line say. Pure functions of the model (state.js) and the slot view's pin, so the
// panels (panels.js), the tooltip and the node tests (static/jstest/describe.test.js) share them.
import { NULL_ADDR, NEW_ADDR, COMPRESS_ADDR } from './state.js';
import { int } from './fmt.js';

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
 * Says what one slot value is.
 * @param {RunState} st
 * @param {number} off slot offset in the range
 * @param {number} v
 * @returns {string}
 */
export function slotValueText(st, off, v) {
  if (v === NULL_ADDR) return 'NULL_ADDR: a hole';
  if (v === NEW_ADDR) return 'NEW_ADDR: reserved, reads as zeros';
  if (v === COMPRESS_ADDR) return 'COMPRESS_ADDR: a compressed-cluster marker';
  const g = st.geometry;
  const seg = st.segnoOf(v);
  if (seg < 0) return `address ${v}, outside the main area`;
  const run = st.runs ? st.runs.runAt(off) : -1;
  return `address ${v}, segment ${seg}, block offset ${(v - g.segment0Blkaddr) % g.blocksPerSeg}${run >= 0 ? `, physical run ${run + 1} of ${st.runs?.count}` : ''}`;
}

/**
 * Describes a slot for the tooltip: its index and file offset, its chunk, its value now and
 * before the run, a rejected address.
 * @param {RunState} st
 * @param {number} off slot offset in the range
 * @returns {string}
 */
export function slotText(st, off) {
  const idx = st.range.start + off;
  const v = st.slots[off];
  const ci = st.chunkOf(idx);
  const c = st.chunks[ci];
  const lines = [`slot ${int(idx)} (file offset ${int(idx * st.geometry.blockSize)})`];
  if (c) {
    lines.push(`chunk ${ci + 1} of ${st.chunks.length}: ${c.path}, slot ${int(idx - c.start)} of ${int(c.len)}`);
    if (c.missing) lines.push(`(+ ${c.missing} node${c.missing > 1 ? 's' : ''} created by ALLOC_NODE)`);
  }
  lines.push(slotValueText(st, off, v));
  const b = st.initial[off];
  if (b !== v) lines.push(`before the run: ${slotValueText(st, off, b)}`);
  if (st.bad.has(off)) lines.push('✕ rejected by f2fs_is_valid_blkaddr');
  if (st.info.image) lines.push('click to pin it: links to its block and its place on the file page show above the map');
  return lines.join('\n');
}

/**
 * The slot panel's text line: where the cursor (or the pinned slot) is and what it holds.
 * @param {RunState} st
 * @param {number|null} pin the pinned slot's offset, or null
 * @returns {string}
 */
export function cursorLine(st, pin) {
  const off = Math.min(st.n - 1, Math.max(0, pin ?? (st.cursor() - st.range.start)));
  const idx = st.range.start + off;
  const ci = st.chunkOf(idx);
  const c = st.chunks[ci];
  const where = pin !== null ? 'pinned at' : 'cursor at';
  const chunk = c ? ` in ${c.path} (chunk ${ci + 1} of ${st.chunks.length})` : '';
  let s = `${where} slot ${int(idx)}${chunk}: ${slotValueText(st, off, st.slots[off])}`;
  const b = st.initial[off];
  if (b !== st.slots[off]) s += `; before the run ${slotValueText(st, off, b)}`;
  const bt = st.per.batched;
  if (bt && bt.pending) s += ` · pending run (${bt.pending.start}, ${bt.pending.len})`;
  return s;
}

/**
 * The slot panel's heading aside: "2,048 slots in 3 chunks · 5 physical runs".
 * @param {RunState} st
 * @returns {string}
 */
export function slotsAside(st) {
  if (!st.ready) return '';
  return `${plural(st.n, 'slot')} in ${plural(st.chunks.length, 'chunk')}${st.runs ? ` · ${plural(st.runs.count, 'physical run')}` : ''}`;
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
 * @returns {string}
 */
export function sitLine(st) {
  const segs = st.segmentsByActivity().slice(0, 3);
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
 * Says how the run's file is compressed: "compressed (lz4, cluster 4 blocks)".
 * @param {RunState} st
 * @returns {string}
 */
export function compressedText(st) {
  return `compressed (${st.info.algorithm || 'unknown algorithm'}, cluster ${st.info.clusterSize} blocks)`;
}

/**
 * The outcome line: what the run returned and why ('' while a plain run is under way).
 * @param {RunState} st
 * @returns {string}
 */
export function outcomeText(st) {
  if (st.info.compressed && !st.done) {
    return `This file is ${compressedText(st)}: f2fs refuses FALLOC_FL_ZERO_RANGE on compressed and pinned files, so the first step is EOPNOTSUPP.`;
  }
  if (!st.done) return '';
  const o = st.outcome;
  if (o === 'EOPNOTSUPP') {
    const t = 'EOPNOTSUPP: f2fs refuses FALLOC_FL_ZERO_RANGE on compressed and pinned files (f2fs_fallocate checks before anything changes)';
    if (st.info.compressed) return `${t}, and this file is ${compressedText(st)}: a cluster's first slot may hold COMPRESS_ADDR, the compressed-cluster marker, not an address.`;
    return `${t}.`;
  }
  if (o && o !== 'done') {
    const msg = st.modes.map((md) => st.per[md].message).find(Boolean);
    // A request refused before f2fs (length 0, a directory) is the VFS's or open(2)'s answer.
    const by = st.modes.map((md) => st.per[md].returnedBy).find(Boolean) || 'f2fs_zero_range';
    return `${by} returns -${o}${msg ? `: the kernel logs "${msg}"` : ''}.`;
  }
  if (o !== 'done') return '';
  const pb = st.per['per-block'];
  const bt = st.per.batched;
  if (pb && bt) {
    const a = pb.counters.sitLockAcquisitions;
    const b = bt.counters.sitLockAcquisitions;
    return `f2fs_zero_range returns 0: ${int(pb.counters.calls)} per-block calls against ${int(bt.counters.calls)} batched${b > 0 && a > b ? `, ${(a / b).toFixed(a / b >= 10 ? 0 : 1)}× fewer SIT lock holds` : ''}, and the same slots and SIT at the end.`;
  }
  const ms = st.per[st.modes[0]];
  return `f2fs_zero_range returns 0: ${int(ms.counters.calls)} calls, ${int(ms.counters.blocksInvalidated)} blocks released.`;
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
