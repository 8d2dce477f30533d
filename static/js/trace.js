// A kernel trace attached to the player (issue 12, "Web"): a file picker or a file dropped on the
// page is uploaded (POST /api/images/{id}/traces) and the player reconnects with &trace=ID (the
// page URL too, so the permalink carries it). The hello then says whether the kernel's
// f2fs_invalidate_blocks calls agree with the model's (hello.trace, ktrace's report) and every
// hello and frame carries the kernel's calls beside the compared mode's latest calls
// (docs/protocol.md, "Kernel traces in the player"): the call log ticks the calls that agree, the
// slider marks the first divergence, a button seeks there, the counters add the kernel's count.

import { int, bytes } from './fmt.js';

/** The largest trace the server takes (web.MaxTraceBody). */
export const MAX_TRACE_BYTES = 64 << 20;

/** Kernel calls kept by number: more than the call log ever shows. */
const KEEP_CALLS = 1024;

/**
 * @typedef {object} Divergence ktrace.Divergence
 * @property {number} index
 * @property {[number, number]|null} kernel
 * @property {[number, number]|null} model
 * @property {number} [kernelCall]
 * @property {number} slot
 * @property {number} chunk
 * @property {string} dnode
 */

/**
 * @typedef {object} TraceInfo hello.trace
 * @property {string} id
 * @property {string} mode the model's mode compared
 * @property {string} format "ftrace" or "plain"
 * @property {number} op 1-based operation of the trace
 * @property {number} calls the kernel's calls, as recorded
 * @property {number} modelCalls
 * @property {boolean} expanded
 * @property {boolean} agree
 * @property {Divergence|null} firstDivergence
 * @property {number} step the player step just after the model's diverging call, -1 when none
 */

/**
 * @typedef {object} CallNote what the call log says of one of the model's calls
 * @property {boolean} ok the kernel's call of the same number is the same call
 * @property {[number, number]|null} kernel the kernel's call (null: it made no call of that number)
 * @property {boolean} first this is the first divergence
 */

/**
 * The kernel's calls by call number, as the hello and frames bring them beside the compared
 * mode's calls (kernel.calls[i] is call number kernel.first + i). A call's number names the same
 * kernel call whatever the step, so what was learnt stays true after a seek; only the most recent
 * KEEP_CALLS numbers are kept.
 */
export class KernelLog {
  constructor() {
    this.mode = '';
    /** @type {Map<number, [number, number]|null>} */
    this.calls = new Map();
    /** bumped when something new is learnt, so the call log redraws */
    this.version = 0;
    /** the first divergence's call index, -1 when none */
    this.firstDivergence = -1;
  }

  /** Forgets everything (a new hello, another trace). */
  clear() {
    this.mode = '';
    this.calls.clear();
    this.firstDivergence = -1;
    this.version++;
  }

  /**
   * Takes a hello's or frame's kernel object.
   * @param {{mode: string, first: number, calls: Array<[number, number]|null>}|undefined|null} k
   */
  add(k) {
    if (!k || !Array.isArray(k.calls)) return;
    if (k.mode !== this.mode) { this.calls.clear(); this.mode = k.mode; this.version++; }
    k.calls.forEach((c, i) => {
      const n = k.first + i;
      const v = Array.isArray(c) ? /** @type {[number, number]} */ ([c[0], c[1]]) : null;
      const old = this.calls.get(n);
      if (old === undefined || (old === null) !== (v === null) || (old && v && (old[0] !== v[0] || old[1] !== v[1]))) {
        this.calls.delete(n);
        this.calls.set(n, v);
        this.version++;
      }
    });
    // A Map iterates in insertion order: the oldest learnt go first.
    while (this.calls.size > KEEP_CALLS) this.calls.delete(/** @type {number} */ (this.calls.keys().next().value));
  }

  /**
   * What to say of the model's call number n (0-based) of mode, [start, len].
   * @param {string} mode
   * @param {number} n
   * @param {[number, number, string?]} call
   * @returns {CallNote|null} null when the trace is not compared with mode or the kernel's call
   *   of that number is not known here
   */
  note(mode, n, call) {
    if (mode !== this.mode || !this.calls.has(n)) return null;
    const k = /** @type {[number, number]|null} */ (this.calls.get(n));
    return { ok: !!k && k[0] === call[0] && k[1] === call[1], kernel: k, first: n === this.firstDivergence };
  }
}

/**
 * The trace operation to compare (the traceOp query field) for a trace of n operations on a run
 * of m (the before= ones and the played one): none when the server's rule picks it (a trace of
 * one operation, or of as many as the run), else the run's own place in the sequence, or the
 * trace's last when the trace is shorter.
 * @param {number} n
 * @param {number} m
 * @returns {number} 0 for none
 */
export function traceOpFor(n, m) {
  if (n <= 1 || n === m) return 0;
  return Math.min(n, m);
}

/**
 * A call as the page writes it: "(34304, 512)".
 * @param {[number, number]|null|undefined} c
 * @returns {string}
 */
export function callText(c) {
  return c ? `(${int(c[0])}, ${int(c[1])})` : 'no call';
}

/**
 * Says in words how the kernel's trace compares with the model: which mode, whether the calls
 * were expanded block by block, and where they first differ.
 * @param {TraceInfo} t
 * @returns {string}
 */
export function traceWords(t) {
  if (!t) return '';
  const how = t.expanded
    ? `block by block (the kernel's ${int(t.calls)} multi-block call${t.calls === 1 ? '' : 's'} expanded to one per block)`
    : 'call by call';
  const which = `operation ${t.op} of the ${t.format} trace`;
  if (t.agree) {
    return `The kernel agrees with the ${t.mode} model, ${how}: ${int(t.modelCalls)} f2fs_invalidate_blocks call${t.modelCalls === 1 ? '' : 's'} each, in the same order (${which}).`;
  }
  const d = t.firstDivergence;
  if (!d) return `The kernel made ${int(t.calls)} calls and the ${t.mode} model ${int(t.modelCalls)} (${which}).`;
  let where = '';
  if (d.model) where = `, at slot ${int(d.slot)} in dnode ${d.dnode || '?'} (chunk ${d.chunk + 1})`;
  let kernel = d.kernel ? `the kernel called f2fs_invalidate_blocks${callText(d.kernel)}` : 'the kernel made no more calls';
  if (t.expanded && d.kernel && typeof d.kernelCall === 'number') kernel += ` (a block of its call ${int(d.kernelCall + 1)})`;
  const model = d.model ? `the model f2fs_invalidate_blocks${callText(d.model)}` : 'the model made no more calls';
  return `The kernel diverges from the ${t.mode} model, ${how}, at call ${int(d.index + 1)} (index ${int(d.index)}): ${kernel}, ${model}${where}. The kernel made ${int(t.calls)} calls, the model ${int(t.modelCalls)} (${which}).`;
}

/**
 * A short status for the trace: "agrees" or "diverges at call 8,193".
 * @param {TraceInfo} t
 * @returns {string}
 */
export function traceStatus(t) {
  if (t.agree) return `✓ agrees with ${t.mode}`;
  const d = t.firstDivergence;
  return d ? `✗ diverges from ${t.mode} at call ${int(d.index + 1)}` : `✗ differs from ${t.mode}`;
}

/**
 * The x of a step on the seek slider, as the markers canvas places it (render.js markerX: the
 * thumb's travel is inset by about half a thumb).
 * @param {number} step
 * @param {number} total
 * @param {number} w the slider's width in CSS pixels
 * @returns {number}
 */
export function stepX(step, total, w) {
  const inset = 8;
  if (!(total > 0)) return inset;
  return inset + (Math.max(0, Math.min(total, step)) / total) * (w - 2 * inset);
}

/**
 * Checks a chosen file before it is sent: says why not, or "".
 * @param {{size: number, name: string}} f
 * @returns {string}
 */
export function traceFileRefusal(f) {
  if (!f) return 'no file';
  if (f.size === 0) return `${f.name} is empty`;
  if (f.size > MAX_TRACE_BYTES) return `${f.name} is ${bytes(f.size)}; a trace may be at most ${bytes(MAX_TRACE_BYTES)}`;
  return '';
}

/** sessionStorage key of how many operations trace id holds (learnt at its upload). */
export function opsKey(/** @type {string} */ id) { return `zrviz.trace.${id}.ops`; }

/**
 * Uploads a trace file for image id.
 * @param {string} id
 * @param {Blob} file
 * @returns {Promise<{id: string, format: string, outside: number, sized: boolean, ops: Array<{calls: number}>}>}
 */
export async function uploadTrace(id, file) {
  const res = await fetch(`/api/images/${encodeURIComponent(id)}/traces`, { method: 'POST', body: file, headers: { 'Content-Type': 'text/plain' } });
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  if (res.status !== 201 && res.status !== 200) {
    throw new Error(`${res.status}: ${(body && body.error) || res.statusText}`);
  }
  return body;
}
