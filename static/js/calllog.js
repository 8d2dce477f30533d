// One line of the player's call log: f2fs_invalidate_blocks(start, len), its start linked to the
// block inspector and, with a kernel trace attached, ticked when the kernel made the same call
// (trace.js KernelLog) or marked with the kernel's call where they differ.

import { callText } from './trace.js';
import { contract } from './contract.js';

/**
 * Why a call was made, in the log's words, by core.Action name: "" for a per-block call (the
 * default), the batched flushes by their cause, truncate_node's call for its node block.
 * @param {string|undefined} why the call's reason
 * @param {number} start its first block (NEW_ADDR: a preallocated slot's, which returns at once)
 * @returns {string}
 */
export function callWhy(why, start) {
  const parts = [];
  if ((start >>> 0) === contract().addr.new) parts.push('NEW_ADDR: returns at once');
  if (why === 'run-break') parts.push('run-break: a NULL or skipped slot ends the run');
  else if (why === 'node-free') parts.push('node-free: truncate_node frees its node block');
  else if (why && why !== 'per-block') parts.push(why);
  return parts.join(' · ');
}

/**
 * What the call log needs from the page beyond the calls: links and the kernel's calls.
 * @typedef {object} CallLog
 * @property {(addr: number) => string} href the block inspector's URL of addr, "" for none
 * @property {(mode: string, n: number, call: [number, number, string?]) => import('./trace.js').CallNote|null} note
 * @property {() => string} key changes whenever href or note would answer differently
 */

/**
 * Builds the list item of the model's call number n (0-based) of mode.
 * @param {Document} doc
 * @param {string} mode
 * @param {number} n
 * @param {[number, number, string?]} call [start, len, reason]
 * @param {CallLog|null|undefined} log
 * @returns {HTMLLIElement}
 */
export function callItem(doc, mode, n, call, log) {
  const [start, len, why] = call;
  const li = doc.createElement('li');
  const note = log ? log.note(mode, n, call) : null;
  if (note) {
    const tick = doc.createElement('span');
    tick.className = note.ok ? 'kern ok' : 'kern bad';
    tick.textContent = note.ok ? '✓ ' : '✗ ';
    const sr = doc.createElement('span');
    sr.className = 'sr-only';
    sr.textContent = note.ok ? 'the kernel made the same call: ' : 'the kernel made another call: ';
    tick.prepend(sr);
    li.append(tick);
    li.dataset.kernel = note.ok ? 'agree' : 'diverge';
    li.title = note.ok
      ? `call ${n + 1}: the kernel's trace has the same call`
      : `call ${n + 1}: the kernel's trace has ${note.kernel ? `f2fs_invalidate_blocks${callText(note.kernel)}` : 'no call'}${note.first ? ' (the first divergence)' : ''}`;
  }
  const isNew = (start >>> 0) === contract().addr.new;
  const href = log && !isNew ? log.href(start) : '';
  li.dataset.reason = why || '';
  if (isNew) {
    li.append('f2fs_invalidate_blocks(NEW_ADDR, ', String(len), ')');
  } else if (href) {
    const a = doc.createElement('a');
    a.href = href;
    a.textContent = String(start);
    a.title = `block ${start} in the block inspector`;
    li.append('f2fs_invalidate_blocks(', a, `, ${len})`);
  } else {
    li.append(`f2fs_invalidate_blocks(${start}, ${len})`);
  }
  if (note && !note.ok) {
    const k = doc.createElement('span');
    k.className = 'kern bad';
    k.textContent = ` kernel ${callText(note.kernel)}${note.first ? ', first divergence' : ''}`;
    li.append(k);
  }
  const w = doc.createElement('span');
  w.className = 'why';
  const text = callWhy(why, start);
  w.textContent = text ? `  ${text}` : '';
  li.append(w);
  return li;
}
