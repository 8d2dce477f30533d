// A kernel trace attached to the player (issue 12, "Web"): a file picker or a file dropped on the
// page is uploaded (POST /api/images/{id}/traces) and the player reconnects with &trace=ID (the
// page URL too, so the permalink carries it). The hello then says whether the kernel's
// f2fs_invalidate_blocks calls agree with the model's (hello.trace, ktrace's report) and every
// hello and frame carries the kernel's calls beside the compared mode's latest calls
// (docs/protocol.md, "Kernel traces in the player"): the call log ticks the calls that agree, the
// slider marks the first divergence, a button seeks there, the counters add the kernel's count.

import { int, bytes, showCount } from './fmt.js';
import { apiImage } from './links.js';

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

/**
 * Reports whether the server still holds trace tid of image id: traces live in its memory (64 at
 * most), so a permalink's trace may have gone; the player then opens without it.
 * @param {string} id
 * @param {string} tid
 * @returns {Promise<boolean>} false only for a 404
 */
export async function traceKept(id, tid) {
  try {
    const res = await fetch(apiImage(id, 'traces', tid), { method: 'HEAD' });
    return res.status !== 404;
  } catch {
    return true; // offline: the socket will say so
  }
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
  const res = await fetch(apiImage(id, 'traces'), { method: 'POST', body: file, headers: { 'Content-Type': 'text/plain' } });
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  if (res.status !== 201 && res.status !== 200) {
    throw new Error(`${res.status}: ${(body && body.error) || res.statusText}`);
  }
  return body;
}

/**
 * The page's kernel trace: the attach control (picker and drop), the status, the counters' box,
 * the words in the narration, the slider's mark and the button that seeks to the divergence.
 */
export class TraceUI {
  /** @param {Document} doc */
  constructor(doc) {
    this.doc = doc;
    this.log = new KernelLog();
    /** @type {TraceInfo|null} */
    this.info = null;
    /** @type {import('./player.js').PlayerController|null} */
    this.ctl = null;
    /** an upload waiting for its hello: the trace id and when the file was chosen */
    /** @type {{id: string, t0: number}|null} */
    this.pending = null;
    /** @type {HTMLElement|null} */
    this.mark = null;
    /** @type {any} the run of the last hello */
    this.run = null;
    this.dragDepth = 0;
  }

  /** @param {string} id */
  $(id) { return /** @type {HTMLElement|null} */ (this.doc.getElementById(id)); }

  /**
   * What the call log asks of the trace (calllog.js CallLog), with block links for image id.
   * @param {() => string} image the run's image id ("" for a sandbox run)
   * @param {(id: string, addr: number) => string} blockURL
   * @returns {import('./calllog.js').CallLog}
   */
  callLog(image, blockURL) {
    return {
      href: (addr) => (image() ? blockURL(image(), addr) : ''),
      note: (mode, n, call) => this.log.note(mode, n, call),
      key: () => `${image()}:${this.log.mode}:${this.log.version}`,
    };
  }

  /**
   * Wires the attach controls (on an image's player; a sandbox run has none).
   * @param {import('./player.js').PlayerController} ctl
   */
  attach(ctl) {
    this.ctl = ctl;
    const doc = this.doc;
    const input = /** @type {HTMLInputElement|null} */ (this.$('trace-file'));
    if (!input) return;
    this.$('trace-attach')?.addEventListener('click', () => input.click());
    input.addEventListener('change', () => {
      const f = input.files && input.files[0];
      if (f) this.upload(f);
      input.value = '';
    });
    this.$('trace-goto')?.addEventListener('click', () => this.gotoDivergence());
    this.$('trace-remove')?.addEventListener('click', () => this.remove());
    // Drop a file anywhere on the page (not while following a room: the room's run is the
    // presenter's).
    const overlay = doc.createElement('div');
    overlay.className = 'drop-overlay';
    overlay.hidden = true;
    overlay.textContent = 'drop a kernel trace: its f2fs_invalidate_blocks calls are held against the model';
    doc.body.append(overlay);
    const files = (/** @type {DragEvent} */ e) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files') && !doc.body.classList.contains('room-follower');
    doc.addEventListener('dragenter', (e) => { if (!files(e)) return; e.preventDefault(); this.dragDepth++; overlay.hidden = false; });
    doc.addEventListener('dragover', (e) => { if (!files(e)) return; e.preventDefault(); if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy'; });
    doc.addEventListener('dragleave', (e) => { if (!files(e)) return; if (--this.dragDepth <= 0) { this.dragDepth = 0; overlay.hidden = true; } });
    doc.addEventListener('drop', (e) => {
      if (!files(e)) return;
      e.preventDefault();
      this.dragDepth = 0;
      overlay.hidden = true;
      const f = e.dataTransfer && e.dataTransfer.files[0];
      if (f) this.upload(f);
    });
    const gone = doc.body.dataset.traceGone;
    if (gone) this.say(`trace ${gone} is no longer on the server (traces are kept in its memory): attach the file again`, true);
    const seek = doc.querySelector('.controls .seek');
    if (seek) {
      this.mark = doc.createElement('span');
      this.mark.className = 'divergence-mark';
      this.mark.dataset.testid = 'divergence-mark';
      this.mark.hidden = true;
      this.mark.setAttribute('aria-hidden', 'true');
      this.mark.addEventListener('click', () => this.gotoDivergence());
      seek.append(this.mark);
      new ResizeObserver(() => this.place()).observe(seek);
    }
  }

  /**
   * Uploads a trace file and reconnects the player with it.
   * @param {File} f
   */
  async upload(f) {
    const ctl = this.ctl;
    const image = this.run ? this.run.image : '';
    if (!ctl || !image) return;
    const why = traceFileRefusal(f);
    if (why) { this.say(why, true); return; }
    const t0 = performance.now();
    this.say(`sending ${f.name} (${bytes(f.size)})…`, false);
    let res;
    try {
      res = await uploadTrace(image, f);
    } catch (err) {
      this.say(`${f.name}: ${/** @type {Error} */ (err).message}`, true);
      return;
    }
    const n = (res.ops || []).length;
    try { sessionStorage.setItem(opsKey(res.id), String(n)); } catch { /* storage refused */ }
    const m = (this.run.before || []).length + 1;
    const op = traceOpFor(n, m);
    this.pending = { id: res.id, t0 };
    this.say(`${f.name}: ${res.format}, ${int(n)} operation${n === 1 ? '' : 's'}, ${int((res.ops || []).reduce((s, o) => s + o.calls, 0))} calls; comparing…`, false);
    this.setParams(res.id, op ? String(op) : '');
    ctl.reconnect();
  }

  /**
   * Puts the trace in the socket's parameters and the page URL (the permalink carries it).
   * @param {string} id "" to remove
   * @param {string} op
   */
  setParams(id, op) {
    this.ctl?.params({ trace: id, traceOp: op });
    const q = new URLSearchParams(location.search);
    if (id) q.set('trace', id); else q.delete('trace');
    if (id && op) q.set('traceOp', op); else q.delete('traceOp');
    history.replaceState(null, '', `${location.pathname}?${q}${location.hash}`);
  }

  /** Removes the trace. */
  remove() {
    if (!this.ctl) return;
    this.setParams('', '');
    this.info = null;
    this.log.clear();
    this.ctl.reconnect();
    this.render();
    this.say('', false);
    /** @type {HTMLElement|null} */ (this.$('trace-attach'))?.focus();
  }

  /** Seeks to just after the model's diverging call. */
  gotoDivergence() {
    if (this.ctl && this.info && this.info.step >= 0) this.ctl.send({ type: 'seek', step: this.info.step });
  }

  /**
   * @param {string} s
   * @param {boolean} bad
   */
  say(s, bad) {
    const el = this.$('trace-status');
    if (!el) return;
    el.textContent = s;
    el.classList.toggle('bad', bad);
  }

  /** @param {any} h a hello */
  hello(h) {
    this.run = h.run;
    this.log.clear();
    this.info = h.trace || null;
    if (this.info) this.log.firstDivergence = this.info.firstDivergence ? this.info.firstDivergence.index : -1;
    this.log.add(h.kernel);
    const box = this.$('trace-box');
    if (this.pending && this.info && this.info.id === this.pending.id && box) {
      // The whole attach, from the file chosen to the comparison on the page (upload, parse,
      // a new connection, the server's comparison and its hello).
      const ms = performance.now() - this.pending.t0;
      box.dataset.attachMs = ms.toFixed(1);
      this.pending = null;
    }
    this.render();
  }

  /** @param {any} f a frame */
  frame(f) {
    this.log.add(f.kernel);
  }

  render() {
    const doc = this.doc;
    const t = this.info;
    doc.body.classList.toggle('has-trace', !!t);
    const kern = this.$('kern-box');
    if (kern) kern.hidden = !t;
    const kv = this.$('stat-calls-kernel');
    if (kv) showCount(kv, t ? t.calls : null);
    const words = this.$('narr-kernel');
    if (words) words.hidden = !t;
    const wt = this.$('narr-kernel-text');
    if (wt) wt.textContent = t ? traceWords(t) : '';
    const go = /** @type {HTMLButtonElement|null} */ (this.$('trace-goto'));
    if (go) go.hidden = !t || t.step < 0;
    const rm = this.$('trace-remove');
    if (rm) rm.hidden = !t;
    const box = this.$('trace-box');
    if (box) box.dataset.state = t ? (t.agree ? 'agree' : 'diverge') : 'none';
    const attach = this.$('trace-attach');
    if (attach) attach.textContent = t ? 'another trace…' : 'attach a kernel trace…';
    if (t) {
      const ms = box && box.dataset.attachMs ? ` · attached in ${Math.round(Number(box.dataset.attachMs))} ms` : '';
      this.say(`kernel trace (${t.format}, ${int(t.calls)} call${t.calls === 1 ? '' : 's'}): ${traceStatus(t)}${ms}`, !t.agree);
    }
    this.place();
  }

  /** Places the divergence's mark on the slider. */
  place() {
    const m = this.mark;
    if (!m) return;
    const t = this.info;
    const total = this.ctl ? this.ctl.state.totalSteps : 0;
    m.hidden = !t || t.step < 0 || !(total > 0);
    if (m.hidden || !t) return;
    const w = /** @type {HTMLElement} */ (m.parentElement).getBoundingClientRect().width;
    m.style.left = `${Math.round(stepX(t.step, total, w))}px`;
    m.title = `the first divergence: call ${int((t.firstDivergence ? t.firstDivergence.index : 0) + 1)}, step ${int(t.step)} (click to go there)`;
  }
}
