// Sequences of operations (issues 12, 17): "then zero another range" continues from the end state
// of the run shown. The run's own operation becomes one more `before=` line (the ops language of
// package request: `zero PATH OFFSET LENGTH [keep_size]`, decimal, the length resolved) and the new
// range is played on the state it leaves; the URL carries the whole sequence. Any other operation
// of the language (write, fsync, sync, tune, and whatever request.Forms lists) is added first, in
// order, and runs between the run shown and the next zero (opsform.js builds its line).

import { byteCount } from './size.js';
import { int, groupDigits } from './fmt.js';
import { imagePage, setRunQuery } from './links.js';
import { contract, playedOf } from './contract.js';
import { parseForms, formLine, placeholder } from './opsform.js';

/** Operations a query may carry before the played one (request.MaxOps - 1). */
export const MAX_BEFORE = 63;

/**
 * @typedef {object} RunInfo hello.run
 * @property {string} [op] the played call (contract().played): "zero" (or absent), "punch", "truncate"
 * @property {string} image
 * @property {string} path
 * @property {string} offset decimal string (a truncate's new size)
 * @property {string} length decimal string, resolved
 * @property {string} [size] the file's size before the run, decimal string
 * @property {boolean} keepSize
 * @property {string} mode
 * @property {string[]} before
 * @property {string} [sandbox]
 */

/**
 * Writes a run as a line of the ops language, as request.Run.OpLine does, by the call's declaration
 * (contract().played): `zero PATH OFFSET LENGTH [keep_size]`, `punch PATH OFFSET LENGTH`,
 * `truncate PATH SIZE` (a size rule's size is its offset, as the hello's run carries it).
 * @param {{op?: string, path: string, offset: string, length: string, keepSize: boolean}} r
 * @returns {string}
 */
export function opLine(r) {
  const p = playedOf(r.op);
  const kind = r.op || contract().ops.zero;
  if (!p) return `${kind} ${r.path} ${r.offset} ${r.length}`;
  const q = contract().query;
  // Its range's words in its fields' order: an offset, a length, a size (the hello's offset).
  const w = [p.kind, r.path, ...rangeFields(p).map((f) => (f === q.length ? r.length : r.offset))];
  if (p.keepSize && r.keepSize) w.push('keep_size');
  return w.join(' ');
}

/**
 * The query fields of a played call's range, in the order of its words (its fields but keepSize).
 * @param {import('./contract.js').Played} p
 * @returns {string[]}
 */
function rangeFields(p) {
  return p.fields.filter((f) => f !== contract().query.keepSize);
}

/**
 * Reads a decimal byte count typed in a field: digits with optional separators (, _ space).
 * Kept as a string: Number() would round past 2^53.
 * @param {string} s
 * @returns {string} the digits without leading zeros, or "" when s is not a count
 */
export function decimal(s) {
  const d = String(s).trim().replace(/[,_\s]/g, '');
  if (!/^\d+$/.test(d) || d.length > 19) return '';
  const v = d.replace(/^0+(?=\d)/, '');
  // At most 2^63-1, what the server's int64 takes.
  if (v.length === 19 && v > '9223372036854775807') return '';
  return v;
}

/**
 * Says why the run shown cannot be continued, or "" when it can.
 * @param {RunInfo} run
 * @param {number} [added] operations added before the next zero
 * @returns {string}
 */
export function chainRefusal(run, added = 0) {
  if (!run || !run.image) return 'a sandbox run has no file to continue on';
  if (/\s/.test(run.path)) return 'the ops language cannot name a path with spaces';
  if ((run.before || []).length + added >= MAX_BEFORE) return `at most ${MAX_BEFORE + 1} operations in a sequence`;
  return '';
}

/**
 * @typedef {object} NextRange
 * @property {string} [op] the call played next: a zero (absent), a punch or a truncate (whose size
 *   is offset)
 * @property {string} offset decimal
 * @property {string} length decimal
 * @property {boolean} keepSize
 */

/**
 * Reports whether an operation of kind is played (a zero, a punch, a truncate: the walks the
 * player shows), not run before the next one.
 * @param {string} kind
 * @returns {boolean}
 */
export function isPlayed(kind) {
  return !!kind && playedOf(kind) !== null;
}

/**
 * The next run of a played line other than a zero the chain's form wrote (`punch PATH OFFSET
 * LENGTH`, `truncate PATH SIZE`, decimal: the words its declaration gives), or null for another
 * line.
 * @param {string} line
 * @returns {NextRange|null}
 */
export function playedNext(line) {
  const w = line.trim().split(/\s+/);
  const p = w[0] === contract().ops.zero ? null : playedOf(w[0]);
  if (!p) return null;
  const q = contract().query;
  const fields = rangeFields(p);
  const n = 2 + fields.length;
  const keepSize = p.keepSize && w.length === n + 1 && w[n] === 'keep_size';
  if (w.length !== n && !keepSize) return null;
  const at = (/** @type {string} */ f) => { const i = fields.indexOf(f); return i < 0 ? '' : w[2 + i]; };
  return { op: w[0], offset: at(q.offset) || at(q.size) || '0', length: at(q.length), keepSize };
}

/**
 * The range the form suggests zeroing next, inside the file as the run shown leaves it (its size
 * grown to the range's end unless keep_size): the range after the one played, of the same length
 * and clamped at the end of the file; when the played range reached the end, the first half of the
 * file (whole pages when the file has more than one), never a range past EOF. An empty file gets
 * its first page.
 * A punch keeps the size; a truncate leaves the file its new size (the run's offset), and the form
 * suggests its first half.
 * @param {{op?: string, size?: string, offset: string, length: string, keepSize: boolean}} run hello.run, decimal strings
 * @returns {{offset: string, length: string}}
 */
export function nextRange(run) {
  const p = playedOf(run.op);
  const trunc = !!p && p.range === 'size';
  const off = trunc ? 0n : BigInt(run.offset || '0');
  const len = trunc ? 0n : BigInt(run.length || '0');
  let size = BigInt((trunc ? run.offset : run.size) || '0');
  if (!run.keepSize && !(p && p.keepsSize) && !trunc && off + len > size) size = off + len;
  const page = 4096n;
  if (size === 0n) return { offset: '0', length: String(page) };
  const start = off + len;
  if (len > 0n && start < size) {
    const l = len < size - start ? len : size - start;
    return { offset: String(start), length: String(l) };
  }
  let half = (size / 2n) / page * page;
  if (half === 0n) half = size < page ? size : page;
  return { offset: '0', length: String(half) };
}

/**
 * @typedef {object} TraceRef the trace the page shows, carried into the next operation
 * @property {string} id
 * @property {number} op the trace's operation compared now (1-based, hello.trace.op)
 * @property {number} ops how many the trace holds (0 when unknown)
 */

/**
 * Builds the player URL that zeroes next after the run shown: the same file and mode, the run's
 * own operation appended to its before= lines.
 * @param {RunInfo} run
 * @param {NextRange} next
 * @param {URLSearchParams} [keep] the current page's query: its view options and room are kept
 *   (pace, colour, present, quiz, room)
 * @param {TraceRef|null} [trace] a trace of several operations goes on with the one the next zero is
 * @param {string[]} [added] operations (ops lines) run between the run shown and the next zero
 * @returns {string}
 */
export function chainURL(run, next, keep, trace, added = []) {
  const q = setRunQuery(new URLSearchParams(), {
    path: run.path, op: next.op, offset: next.offset, length: next.length, mode: run.mode || contract().modes.both,
    keepSize: next.keepSize, before: [...(run.before || []), opLine(run), ...added],
  });
  // A presenter's room goes along: its followers get the new run (the token is in sessionStorage).
  for (const k of ['pace', 'colour', 'present', 'quiz', 'room']) {
    const v = keep?.get(k);
    if (v) q.set(k, v);
  }
  const t = nextTraceOp(trace, 1 + added.length);
  if (t) {
    q.set('trace', t.id);
    q.set('traceOp', String(t.op));
  }
  return `${imagePage(run.image, 'run')}?${q}`;
}

/**
 * The trace operation the next run of a sequence compares: the trace marks every operation (a
 * sync or a write has its zr_op marker too), so the next zero is `ahead` operations on — 1 after
 * the current, more when operations run between — when the trace holds it; null otherwise (a
 * trace of one operation belongs to the run it was attached to, and a trace whose size is unknown
 * is not guessed at: the server would refuse the run).
 * @param {TraceRef|null|undefined} trace
 * @param {number} [ahead]
 * @returns {{id: string, op: number}|null}
 */
export function nextTraceOp(trace, ahead = 1) {
  if (!trace || !trace.id || !(trace.ops > 1)) return null;
  const op = trace.op + ahead;
  if (op > trace.ops) return null;
  return { id: trace.id, op };
}

/**
 * Describes the operations run before the one shown, for the page: "before this: zero /a 0 4,096",
 * "before this, 2 operations: 1. …; 2. …".
 * @param {string[]} before
 * @returns {string}
 */
export function beforeText(before) {
  const n = (before || []).length;
  if (!n) return '';
  if (n === 1) return `before this: ${opWords(before[0])}`;
  return `before this, ${int(n)} operations: ${before.map((op, i) => `${i + 1}. ${opWords(op)}`).join('; ')}`;
}

/**
 * An ops line with grouped digits: "zero /a 1,048,576 1,048,576 keep_size".
 * @param {string} op
 * @returns {string}
 */
export function opWords(op) {
  const f = op.trim().split(/\s+/);
  // The other operations of the ops language (write, fsync, sync, tune) are shown as written,
  // a write's numbers grouped.
  if (f.length === 4 && f[0] === 'write') return `write ${f[1]} ${groupDigits(f[2])} ${groupDigits(f[3])}`;
  // A played call's numbers (its declaration's range: OFFSET LENGTH or SIZE) grouped.
  const p = playedOf(f[0]);
  const n = p ? rangeFields(p).length : 0;
  if (!p || f.length < 2 + n) return op;
  const nums = f.slice(2, 2 + n).map(groupDigits);
  return [f[0], f[1], ...nums, ...(p.keepSize && f[2 + n] === 'keep_size' ? ['keep_size'] : [])].join(' ');
}

/**
 * The page's sequence: the operations before the run shown and, once it has finished, the next
 * operation's form: a zero (played), or any other operation of the language, added to the
 * operations run before the next zero.
 */
export class ChainUI {
  /** @param {Document} doc */
  constructor(doc) {
    this.doc = doc;
    /** @type {import('./player.js').PlayerController|null} */
    this.ctl = null;
    /** @type {RunInfo|null} */
    this.run = null;
    /** @type {() => TraceRef|null} */
    this.trace = () => null;
    this.shown = false;
    /** @type {import('./opsform.js').OpForm[]} */
    this.forms = parseForms('');
    /** operations added to run before the next zero, as ops lines */
    /** @type {string[]} */
    this.added = [];
  }

  /** @param {string} id */
  $(id) { return /** @type {HTMLElement|null} */ (this.doc.getElementById(id)); }

  /**
   * @param {import('./player.js').PlayerController} ctl
   * @param {() => TraceRef|null} trace the trace the page shows
   */
  attach(ctl, trace) {
    this.ctl = ctl;
    this.trace = trace;
    const form = /** @type {HTMLFormElement|null} */ (this.$('chain-form'));
    if (!form) return;
    this.forms = parseForms(form.dataset.forms);
    const kind = /** @type {HTMLSelectElement|null} */ (this.$('chain-kind'));
    if (kind) {
      kind.replaceChildren(...this.forms.map((f) => {
        const o = this.doc.createElement('option');
        o.value = f.kind;
        o.textContent = f.kind;
        o.title = f.line;
        return o;
      }));
      kind.value = contract().ops.zero;
      kind.addEventListener('change', () => this.kindChanged());
    }
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.submit();
    });
    for (const id of ['chain-offset', 'chain-length']) {
      this.$(id)?.addEventListener('input', () => /** @type {HTMLInputElement} */ (this.$(id)).setCustomValidity(''));
    }
    this.$('chain-staged')?.addEventListener('click', (e) => {
      const b = /** @type {HTMLElement} */ (e.target).closest('button[data-drop]');
      if (!b) return;
      this.added.splice(Number(/** @type {HTMLElement} */ (b).dataset.drop), 1);
      this.renderAdded();
      kind?.focus();
    });
    this.kindChanged();
  }

  /** The form of the chosen kind. */
  form() {
    const kind = /** @type {HTMLSelectElement|null} */ (this.$('chain-kind'));
    return this.forms.find((f) => f.kind === (kind ? kind.value : contract().ops.zero)) || this.forms[0];
  }

  /** Shows the fields of the chosen kind: a zero's range, or another operation's words. */
  kindChanged() {
    const f = this.form();
    const zero = f.kind === contract().ops.zero;
    const zf = this.$('chain-zero');
    if (zf) zf.hidden = !zero;
    const args = this.$('chain-args');
    const go = this.$('chain-go');
    // A zero, a punch and a truncate are played next; the other operations run before it.
    if (go) go.textContent = zero ? 'zero it' : isPlayed(f.kind) ? `${f.kind} it` : `add ${f.kind}`;
    if (!args) return;
    args.hidden = zero;
    args.replaceChildren();
    if (zero) return;
    f.args.forEach((a, i) => {
      const id = `chain-arg-${i}`;
      if (a.name === 'PATH') return; // the played file
      if (a.name) {
        const p = placeholder(a.name);
        const l = this.doc.createElement('label');
        l.htmlFor = id;
        l.textContent = p.label;
        const inp = this.doc.createElement('input');
        inp.type = 'text';
        inp.id = id;
        inp.dataset.arg = String(i);
        inp.dataset.testid = 'chain-arg';
        inp.size = 10;
        inp.autocomplete = 'off';
        inp.title = p.hint;
        if (p.count) inp.inputMode = 'numeric';
        inp.addEventListener('input', () => inp.setCustomValidity(''));
        args.append(l, inp);
      } else if ((a.words || []).length > 1) {
        const sel = this.doc.createElement('select');
        sel.id = id;
        sel.dataset.arg = String(i);
        sel.dataset.testid = 'chain-arg';
        sel.setAttribute('aria-label', `${f.kind}: ${(a.words || []).join(' or ')}`);
        if (a.optional) sel.append(new Option('—', ''));
        for (const w of a.words || []) sel.append(new Option(w, w));
        args.append(sel);
      } else if (a.optional) {
        const l = this.doc.createElement('label');
        l.className = 'check';
        const cb = this.doc.createElement('input');
        cb.type = 'checkbox';
        cb.id = id;
        cb.dataset.arg = String(i);
        cb.dataset.testid = 'chain-arg';
        l.append(cb, ` ${(a.words || [''])[0]}`);
        args.append(l);
      } else {
        const k = this.doc.createElement('span');
        k.className = 'k';
        k.textContent = (a.words || [''])[0];
        args.append(k);
      }
    });
  }

  /** Lists the operations added before the next zero. */
  renderAdded() {
    const ol = this.$('chain-staged');
    if (!ol) return;
    ol.hidden = this.added.length === 0;
    ol.replaceChildren(...this.added.map((op, i) => {
      const li = this.doc.createElement('li');
      li.dataset.testid = 'chain-added';
      const w = this.doc.createElement('span');
      w.className = 'op';
      w.title = op;
      w.textContent = `then ${opWords(op)}`;
      li.append(w);
      const b = this.doc.createElement('button');
      b.type = 'button';
      b.dataset.drop = String(i);
      b.textContent = '✕';
      b.setAttribute('aria-label', `remove ${op}`);
      b.title = 'remove';
      li.append(b);
      return li;
    }));
  }

  /** @param {any} h a hello */
  hello(h) {
    this.run = h.run;
    const el = this.$('ops-before');
    if (el) {
      const before = (h.run && h.run.before) || [];
      el.hidden = before.length === 0;
      el.textContent = beforeText(before);
      el.title = before.map((/** @type {string} */ op, /** @type {number} */ i) => `${i + 1}. ${op}`).join('\n');
      el.dataset.count = String(before.length);
    }
    this.shown = false;
    this.frame();
  }

  /** Shows the form once the run has finished (a failed run leaves nothing to continue from). */
  frame() {
    const form = /** @type {HTMLFormElement|null} */ (this.$('chain-form'));
    if (!form || !this.ctl || !this.run) return;
    const st = this.ctl.state;
    const show = st.done && st.outcome === 'done' && !chainRefusal(this.run) && !this.doc.body.classList.contains('room-follower');
    if (show === !form.hidden) return;
    form.hidden = !show;
    if (show && !this.shown) {
      // Suggest a range inside the file: the next one of the same length, or its first half.
      this.shown = true;
      const off = /** @type {HTMLInputElement} */ (this.$('chain-offset'));
      const len = /** @type {HTMLInputElement} */ (this.$('chain-length'));
      const next = nextRange(this.run);
      if (!off.value) off.value = next.offset;
      if (!len.value) len.value = next.length;
    }
  }

  /** Says why not, in the form's alert. */
  refuse(/** @type {string} */ why) {
    const e = this.$('chain-error');
    if (e) e.textContent = why;
  }

  /** A zero opens the player on the sequence with the new range last; another kind is added. */
  submit() {
    if (!this.run) return;
    const f = this.form();
    if (f.kind !== contract().ops.zero) {
      this.add(f, isPlayed(f.kind));
      return;
    }
    const off = /** @type {HTMLInputElement} */ (this.$('chain-offset'));
    const len = /** @type {HTMLInputElement} */ (this.$('chain-length'));
    const keep = /** @type {HTMLInputElement} */ (this.$('chain-keep'));
    // The forms the header's range takes: 4096, 0x1000, 64MiB (size.js).
    const o = byteCount(off.value);
    const l = byteCount(len.value);
    for (const [el, v] of /** @type {Array<[HTMLInputElement, string]>} */ ([[off, o], [len, l]])) {
      if (!v) {
        el.setCustomValidity('a byte count: 4096, 0x1000 or 64MiB');
        el.reportValidity();
        return;
      }
    }
    const why = chainRefusal(this.run, this.added.length);
    if (why) { this.refuse(why); return; }
    location.assign(chainURL(this.run, { offset: o, length: l, keepSize: keep.checked }, new URLSearchParams(location.search), this.trace(), this.added));
  }

  /**
   * Adds an operation of form f, its words from the fields, to those before the next zero; with
   * play (a punch, a truncate) opens the player on it instead, as a zero's "zero it" does.
   * @param {import('./opsform.js').OpForm} f
   * @param {boolean} [play]
   */
  add(f, play = false) {
    if (!this.run) return;
    const why = chainRefusal(this.run, this.added.length + (play ? 0 : 1));
    if (why) { this.refuse(why); return; }
    /** @type {Array<string|boolean|undefined>} */
    const values = f.args.map((_, i) => {
      const el = /** @type {HTMLInputElement|HTMLSelectElement|null} */ (this.doc.getElementById(`chain-arg-${i}`));
      if (!el) return undefined;
      return el instanceof HTMLInputElement && el.type === 'checkbox' ? el.checked : el.value;
    });
    const r = formLine(f, values, this.run.path);
    if (r.error) {
      const el = /** @type {HTMLInputElement|null} */ (this.doc.getElementById(`chain-arg-${r.arg}`));
      if (el && el.setCustomValidity) { el.setCustomValidity(r.error); el.reportValidity(); } else this.refuse(r.error);
      return;
    }
    this.refuse('');
    const next = play ? playedNext(r.line) : null;
    if (next) {
      location.assign(chainURL(this.run, next, new URLSearchParams(location.search), this.trace(), this.added));
      return;
    }
    this.added.push(r.line);
    this.renderAdded();
    const kind = /** @type {HTMLSelectElement|null} */ (this.$('chain-kind'));
    if (kind) { kind.value = contract().ops.zero; this.kindChanged(); }
    /** @type {HTMLElement|null} */ (this.$('chain-offset'))?.focus();
  }
}
