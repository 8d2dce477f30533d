// One line of the player's call log: f2fs_invalidate_blocks(start, len), its start linked to the
// block inspector and, with a kernel trace attached, ticked when the kernel made the same call
// (trace.js KernelLog) or marked with the kernel's call where they differ.

import { callText } from './trace.js';

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
  const href = log ? log.href(start) : '';
  if (href) {
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
  w.textContent = why && why !== 'per-block' ? `  ${why}` : '';
  li.append(w);
  return li;
}
