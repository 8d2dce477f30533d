// "Check an after-image" (issue 21): the user picks a stored image, or uploads one (POST
// /api/images, the store's own path and limits), and the server holds it against the model's
// after-state of the run shown — its operations, the played zero, the unmount — in every mode of
// the run (GET /api/images/{id}/aftercheck, web/aftercheck.go, afterck as `zrviz run --after`
// does). The side panel says whether they agree, lists the differences and, apart, what the kernel
// did after the call (each naming its kernel function). The slots and SIT panels get a mark on
// every differing slot and SIT bit they show: a button with the model's value and the image's, in
// a tooltip on hover and focus and in its accessible name.

import { int, bytes, approxBytes } from './fmt.js';
import { apiImage, uploadURL, fileSlotURL } from './links.js';
import { openInWorker } from './localimage.js';
import { isStatic } from './contract.js';
import { runQuery, SidePanels } from './sidepanel.js';

/** Marks drawn on a panel at most: the rest are listed, not marked. */
export const MAX_MARKS = 48;

/**
 * @typedef {object} Difference afterck.Difference
 * @property {string} what slot, i_size, i_blocks, i_inline, file, sit-bit, valid_block_count, valid_node_count, nat
 * @property {string} [file]
 * @property {number} [ino]
 * @property {number} [index]
 * @property {string} [field]
 * @property {number} [segno]
 * @property {number} [bit]
 * @property {number} [addr]
 * @property {number} [nid]
 * @property {string} model
 * @property {string} image
 */

/**
 * @typedef {object} Explanation afterck.Explanation
 * @property {string} kind
 * @property {string} func
 * @property {string} text
 */

/**
 * @typedef {object} ModeReport
 * @property {string} mode
 * @property {boolean} agree
 * @property {number} total
 * @property {Explanation[]} explained at most afterck.MaxExplained of them, from explainedFrom on
 * @property {number} [explainedTotal] every explanation, listed or not
 * @property {number} [explainedFrom]
 * @property {{kind: string, func: string, segno?: number, n: number}[]} [explainedSummary] counts by kind and segment
 * @property {string} [explainedNext] the address of the next page of explanations
 * @property {Difference[]} differences
 */

/**
 * How many explanations a mode's report counts (listed or not).
 * @param {ModeReport} m
 * @returns {number}
 */
export function explainedCount(m) {
  return m.explainedTotal ?? m.explained.length;
}

/**
 * The explanations a report counts beyond those it lists, by kind ("writeback-out-of-place 16,128"),
 * or '' when it lists them all.
 * @param {ModeReport} m
 * @returns {string}
 */
export function explainedRest(m) {
  const total = explainedCount(m);
  if (total <= m.explained.length) return '';
  /** @type {Map<string, number>} */
  const kinds = new Map();
  for (const c of m.explainedSummary || []) kinds.set(c.kind, (kinds.get(c.kind) || 0) + c.n);
  const by = [...kinds].map(([k, n]) => `${k} ${int(n)}`).join(', ');
  return `the first ${int(m.explained.length)} of ${int(total)}${by ? ` (${by})` : ''}`;
}

/**
 * @typedef {object} CheckBody GET /api/images/{id}/aftercheck
 * @property {{id: string, name: string}} after
 * @property {string[]} ops
 * @property {string} path
 * @property {number} ino
 * @property {ModeReport[]} modes
 */

/**
 * @typedef {object} Mark a differing slot or SIT bit, as the panels mark it
 * @property {string} key
 * @property {'slot'|'sit'} on
 * @property {number} index slot: the file block index
 * @property {number} segno sit
 * @property {number} bit sit
 * @property {string} model
 * @property {string} image
 * @property {string[]} modes the modes whose model differs there
 * @property {string} text what the mark says
 */

/**
 * A slot value as afterck writes it ("NEW", "NULL", "5634") in words.
 * @param {string} v
 * @returns {string}
 */
export function valueWords(v) {
  if (v === 'NEW') return 'NEW_ADDR';
  if (v === 'NULL') return 'NULL_ADDR';
  if (v === 'COMPRESS') return 'COMPRESS_ADDR';
  return /^\d+$/.test(v) ? `block ${int(Number(v))}` : v;
}

/**
 * One difference in words, as `zrviz run --after` says it, the values spelled out.
 * @param {Difference} d
 * @returns {string}
 */
export function differenceWords(d) {
  const mi = `the model has ${valueWords(d.model)}, the image ${valueWords(d.image)}`;
  switch (d.what) {
    case 'slot':
      return `slot ${int(d.index ?? 0)} of ${d.file}${d.field ? ` (${d.field})` : ''}: ${mi}`;
    case 'sit-bit':
      return `segment ${int(d.segno ?? 0)} bit ${d.bit} (block ${int(d.addr ?? 0)}): the model has it ${d.model}, the image ${d.image}`;
    case 'nat':
      return `NAT entry of node ${d.nid} (${d.file}): the model has ${d.model}, the image ${d.image}`;
    case 'valid_block_count': case 'valid_node_count':
      return `checkpoint ${d.what}: the model has ${d.model}, the image ${d.image}`;
  }
  return `${d.file || ''} ${d.what}: the model has ${d.model}, the image ${d.image}`.trim();
}

/**
 * An explanation in words, its kernel function first.
 * @param {Explanation} x
 * @returns {string}
 */
export function explainedWords(x) {
  return `${x.func}: ${x.text}`;
}

/**
 * The verdict over every mode: "agrees" when each mode's model agrees with the image.
 * @param {CheckBody} b
 * @returns {{agree: boolean, text: string}}
 */
export function verdict(b) {
  const modes = b.modes || [];
  const agree = modes.length > 0 && modes.every((m) => m.agree);
  const seq = `${int(b.ops.length)} operation${b.ops.length === 1 ? '' : 's'} and the unmount`;
  if (agree) {
    const ex = explainedCount(modes[0]);
    const by = modes.length > 1 ? 'both modes' : `the ${modes[0].mode} model`;
    return { agree, text: `✓ ${b.after.name} agrees with ${by}: it is what the kernel leaves after ${seq}${ex ? ` (${int(ex)} thing${ex === 1 ? '' : 's'} the kernel did after the call explained, below)` : ''}.` };
  }
  const per = modes.map((m) => `${m.mode}: ${m.agree ? 'agrees' : `${int(m.total)} difference${m.total === 1 ? '' : 's'}`}`).join(' · ');
  return { agree, text: `✗ ${b.after.name} differs from the model of ${seq} — ${per}.` };
}

/**
 * Whether the panels can mark difference d: a slot of the played file (ino) or a SIT bit.
 * @param {Difference} d
 * @param {number} ino
 * @returns {boolean}
 */
function placeable(d, ino) {
  return (d.what === 'slot' && d.ino === ino && typeof d.index === 'number')
    || (d.what === 'sit-bit' && typeof d.segno === 'number' && typeof d.bit === 'number');
}

/**
 * What the panels' marks show, each count named for what it counts, so that it adds up with the
 * verdict's (which counts every difference of a mode): the differing slots and SIT bits (over all
 * modes, at most MAX_MARKS of them marked), then the differences that have no place on the panels
 * (sizes, counters, NAT entries, another file's slots) and those the report did not send.
 * "48 of the 879 differing slots and SIT bits are marked on the panels; 1 other difference
 * (valid_block_count) has no place on them: see the list."
 * @param {CheckBody} b
 * @param {{slots: Mark[], sit: Mark[]}} marks marksOf(b)
 * @param {number} shown the marks drawn
 * @returns {string} '' when every mode agrees
 */
export function markedWords(b, marks, shown) {
  const differ = (b.modes || []).filter((m) => !m.agree);
  if (!differ.length) return '';
  const n = marks.slots.length + marks.sit.length;
  const parts = [n
    ? `${int(shown)} of the ${int(n)} differing slot${n === 1 ? '' : 's'} and SIT bits ${shown === 1 ? 'is' : 'are'} marked on the panels`
    : 'no differing slot of this file and no SIT bit to mark on the panels'];
  // Per mode when there is one; over several, the kinds without a count (their counts differ).
  /** @type {Set<string>} */
  const kinds = new Set();
  let other = 0;
  let unsent = 0;
  let sent = 0;
  for (const m of differ) {
    for (const d of m.differences) {
      if (!placeable(d, b.ino)) { kinds.add(d.what === 'slot' ? "another file's slot" : d.what); other++; }
    }
    if (m.total - m.differences.length > unsent) { unsent = m.total - m.differences.length; sent = m.differences.length; }
  }
  const kindWords = [...kinds].slice(0, 3).join(', ') + (kinds.size > 3 ? ', …' : '');
  if (other && differ.length === 1) {
    parts.push(`${int(other)} other difference${other === 1 ? '' : 's'} (${kindWords}) ${other === 1 ? 'has' : 'have'} no place on them: see the list`);
  } else if (other) {
    parts.push(`the other differences (${kindWords}) have no place on them: see the list`);
  }
  if (unsent) parts.push(`${int(unsent)} more difference${unsent === 1 ? ' was' : 's were'} counted, not sent (a report sends a mode's first ${int(sent)})`);
  return `${parts.join('; ')}.`;
}

/**
 * The marks of a check: every differing slot of the played file (ino) and every differing SIT bit,
 * over all modes (each mark says which modes differ there).
 * @param {CheckBody} b
 * @returns {{slots: Mark[], sit: Mark[]}}
 */
export function marksOf(b) {
  /** @type {Map<string, Mark>} */
  const by = new Map();
  for (const m of b.modes || []) {
    for (const d of m.differences) {
      /** @type {Mark|null} */
      let k = null;
      if (d.what === 'slot' && d.ino === b.ino && typeof d.index === 'number') {
        k = { key: `s${d.index}`, on: 'slot', index: d.index, segno: -1, bit: -1, model: d.model, image: d.image, modes: [], text: '' };
      } else if (d.what === 'sit-bit' && typeof d.segno === 'number' && typeof d.bit === 'number') {
        k = { key: `b${d.segno}:${d.bit}`, on: 'sit', index: -1, segno: d.segno, bit: d.bit, model: d.model, image: d.image, modes: [], text: '' };
      }
      if (!k) continue;
      const old = by.get(k.key);
      if (old) { if (!old.modes.includes(m.mode)) old.modes.push(m.mode); continue; }
      k.modes.push(m.mode);
      k.text = `${differenceWords(d)}`;
      by.set(k.key, k);
    }
  }
  const all = [...by.values()];
  for (const k of all) if ((b.modes || []).length > 1) k.text += ` (${k.modes.join(' and ')})`;
  return {
    slots: all.filter((k) => k.on === 'slot').sort((x, y) => x.index - y.index),
    sit: all.filter((k) => k.on === 'sit').sort((x, y) => x.segno - y.segno || x.bit - y.bit),
  };
}

/**
 * Where a slot's mark goes on the slots panel (SlotsView's layout, canvas CSS px): on its zoom
 * cell when the zoom lane shows it, else over its place on the whole range's strip.
 * @param {{labelW: number, stripW: number, ovY: number, ovH: number, zoomY: number, zoomFrom: number, zoomCount: number, zoomH: number, zoomPerLine: number, zoomStep: number}} L
 * @param {number} n slots in the range
 * @param {number} off the slot's offset in the range
 * @param {number} cell the zoom lane's cell width
 * @returns {{x: number, y: number, w: number, h: number, where: 'zoom'|'range'}|null}
 */
export function slotMarkBox(L, n, off, cell) {
  if (!(n > 0) || off < 0 || off >= n) return null;
  if (off >= L.zoomFrom && off < L.zoomFrom + L.zoomCount && L.zoomPerLine > 0) {
    const k = off - L.zoomFrom;
    const line = Math.floor(k / L.zoomPerLine);
    return { x: L.labelW + (k % L.zoomPerLine) * cell, y: L.zoomY + line * L.zoomStep, w: cell, h: L.zoomH, where: 'zoom' };
  }
  const x = L.labelW + ((off + 0.5) / n) * L.stripW;
  return { x: x - 6, y: L.ovY - 2, w: 12, h: L.ovH + 4, where: 'range' };
}

/**
 * Where a SIT bit's mark goes on the SIT panel (SITView's layout), in the column of mode mi: null
 * when the panel does not show the segment (not touched by the run, or scrolled away).
 * @param {{segs: number[], rowH: number, mapX: number[], cell: number, top: number, cols: number}} L
 * @param {[number, number]} shown the rows shown, 1-based first and last (SITView.shown)
 * @param {number} segno
 * @param {number} bit
 * @param {number} mi
 * @returns {{x: number, y: number, w: number, h: number}|null}
 */
export function sitMarkBox(L, shown, segno, bit, mi) {
  const i = L.segs.indexOf(segno);
  if (i < 0 || i < shown[0] - 1 || i > shown[1] - 1 || mi < 0 || mi >= L.mapX.length) return null;
  const r = i - (shown[0] - 1);
  const s = Math.max(L.cell, 6);
  const cx = L.mapX[mi] + (bit % L.cols) * L.cell + L.cell / 2;
  const cy = L.top + r * L.rowH + 2 + Math.floor(bit / L.cols) * L.cell + L.cell / 2;
  return { x: cx - s / 2 - 2, y: cy - s / 2 - 2, w: s + 4, h: s + 4 };
}

/**
 * The after-image check's side panel and its marks on the slots and SIT panels.
 */
export class AfterCheckUI {
  /**
   * @param {Document} doc
   * @param {SidePanels} panels
   */
  constructor(doc, panels) {
    this.doc = doc;
    /** @type {import('./player.js').PlayerController|null} */
    this.ctl = null;
    /** @type {any} hello.run */
    this.run = null;
    /** @type {CheckBody|null} */
    this.body = null;
    /** @type {{slots: Mark[], sit: Mark[]}} */
    this.marks = { slots: [], sit: [] };
    this.layoutKey = '';
    /** @type {HTMLElement|null} */
    this.tip = null;
    panels.add('ac', () => this.fillPicker());
  }

  /** @param {string} id */
  $(id) { return /** @type {HTMLElement|null} */ (this.doc.getElementById(id)); }

  /** @param {import('./player.js').PlayerController} ctl */
  attach(ctl) {
    this.ctl = ctl;
    const form = this.$('ac-form');
    if (!form) return;
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const v = /** @type {HTMLSelectElement} */ (this.$('ac-pick')).value;
      if (v) this.check(v); else this.say('choose an image, or upload one', true);
    });
    const file = /** @type {HTMLInputElement} */ (this.$('ac-file'));
    this.$('ac-upload')?.addEventListener('click', () => file.click());
    file.addEventListener('change', () => {
      const f = file.files && file.files[0];
      if (f) this.upload(f);
      file.value = '';
    });
    this.tip = this.doc.createElement('div');
    this.tip.className = 'ac-tip';
    this.tip.id = 'ac-tip';
    this.tip.setAttribute('role', 'tooltip');
    this.tip.hidden = true;
    this.doc.body.append(this.tip);
    const loop = () => { this.place(); requestAnimationFrame(loop); };
    requestAnimationFrame(loop);
  }

  /** @param {any} h a hello */
  hello(h) {
    const key = h.run ? runQuery(h.run) : '';
    if (this.run && key !== runQuery(this.run)) this.clear();
    this.run = h.run;
  }

  /** Forgets the check shown (another run). */
  clear() {
    this.body = null;
    this.marks = { slots: [], sit: [] };
    this.render();
  }

  /**
   * @param {string} s
   * @param {boolean} bad
   */
  say(s, bad) {
    const el = this.$('ac-status');
    if (!el) return;
    el.textContent = s;
    el.classList.toggle('bad', bad);
  }

  /** Lists the stored images in the picker. */
  async fillPicker() {
    const sel = /** @type {HTMLSelectElement|null} */ (this.$('ac-pick'));
    if (!sel || !this.run) return;
    try {
      const res = await fetch('/api/images');
      if (!res.ok) return;
      /** @type {Array<{id: string, name: string, size: number}>} */
      const list = await res.json();
      const keep = sel.value;
      sel.replaceChildren(new Option('a stored image…', ''), ...list.map((im) => {
        const o = new Option(`${im.name} (${im.id})${im.id === this.run.image ? ' — the before-image' : ''}`, im.id);
        return o;
      }));
      if (keep && list.some((im) => im.id === keep)) sel.value = keep;
    } catch { /* offline: the check will say */ }
  }

  /**
   * Uploads an after-image through the store's upload, then checks it.
   * @param {File} f
   */
  upload(f) {
    if (isStatic()) {
      this.openHere(f);
      return;
    }
    const token = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
    this.say(`uploading ${f.name} (${bytes(f.size)})…`, false);
    const xhr = new XMLHttpRequest();
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) this.say(`uploading ${f.name}: ${approxBytes(e.loaded)} of ${approxBytes(e.total)}`, false);
    });
    xhr.upload.addEventListener('load', () => this.say(`expanding and opening ${f.name} on the server…`, false));
    xhr.addEventListener('load', async () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* below */ }
      if ((xhr.status === 200 || xhr.status === 201) && body && body.id) {
        await this.fillPicker();
        const sel = /** @type {HTMLSelectElement|null} */ (this.$('ac-pick'));
        if (sel) sel.value = body.id;
        this.check(body.id);
      } else {
        this.say(`${f.name}: ${xhr.status}: ${(body && body.error) || xhr.statusText || 'upload failed'}`, true);
      }
    });
    xhr.addEventListener('error', () => this.say(`${f.name}: the upload failed (network)`, true));
    xhr.open('POST', uploadURL(token, f.name));
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.send(f);
  }

  /**
   * Opens an after-image in the static site: read in this browser by its worker, never uploaded
   * (localimage.js), then checks it.
   * @param {File} f
   */
  async openHere(f) {
    this.say(`opening ${f.name} (${bytes(f.size)}) in this browser; it stays on this machine…`, false);
    let img;
    try {
      img = await openInWorker(f, navigator.serviceWorker);
    } catch (e) {
      this.say(`${f.name}: ${e instanceof Error ? e.message : e}`, true);
      return;
    }
    await this.fillPicker();
    const sel = /** @type {HTMLSelectElement|null} */ (this.$('ac-pick'));
    if (sel) sel.value = img.id;
    this.check(img.id);
  }

  /**
   * Holds stored image id against the model of the run shown.
   * @param {string} id
   */
  async check(id) {
    if (!this.run || !this.run.image) return;
    this.say(`holding ${id} against the model of this run (its operations, this zero, the unmount)…`, false);
    const q = new URLSearchParams(runQuery(this.run));
    q.set('after', id);
    let res;
    let body;
    try {
      res = await fetch(`${apiImage(this.run.image, 'aftercheck')}?${q}`);
      body = await res.json();
    } catch (err) {
      this.say(`the check failed: ${/** @type {Error} */ (err).message}`, true);
      return;
    }
    if (!res.ok) {
      this.clear();
      this.say(`${res.status}: ${body.error || res.statusText}`, true);
      return;
    }
    this.body = body;
    this.marks = marksOf(body);
    this.say('', false);
    // The panels show the model's state at the end of the walk, what the differences are of.
    this.ctl?.send({ type: 'end' });
    this.render();
    // The first differing slot of the range up close, its cell marked.
    const st = this.ctl ? this.ctl.state : null;
    const first = st ? this.marks.slots.find((k) => k.index >= st.range.start && k.index < st.range.end) : null;
    if (first) this.pin(first.index);
  }

  /**
   * Shows file block index up close: the slots panel's zoom lane pinned at it.
   * @param {number} index
   */
  pin(index) {
    const ctl = this.ctl;
    if (!ctl || !ctl.views || !ctl.state.ready) return;
    const off = index - ctl.state.range.start;
    if (off < 0 || off >= ctl.state.n) return;
    ctl.views.slots.pin = off;
    ctl.applyPresenterState({}); // redraws
  }

  /** Writes the verdict and the lists. */
  render() {
    const b = this.body;
    const v = this.$('ac-verdict');
    const diffs = this.$('ac-diffs');
    const exp = this.$('ac-explained');
    this.doc.body.classList.toggle('has-aftercheck', !!b);
    if (!v || !diffs || !exp) return;
    if (!b) {
      v.textContent = '';
      v.className = 'ac-verdict';
      delete v.dataset.agree;
      diffs.replaceChildren();
      exp.replaceChildren();
      /** @type {HTMLElement} */ (this.$('ac-diff-h')).hidden = true;
      /** @type {HTMLElement} */ (this.$('ac-exp-h')).hidden = true;
      this.layoutKey = '';
      this.place();
      return;
    }
    const vd = verdict(b);
    v.textContent = vd.text;
    v.className = `ac-verdict ${vd.agree ? 'ok' : 'bad'}`;
    v.dataset.agree = String(vd.agree);
    // Differences: the first mode that differs lists them (the others are counted in the verdict).
    const m = b.modes.find((x) => !x.agree) || b.modes[0];
    const dh = /** @type {HTMLElement} */ (this.$('ac-diff-h'));
    dh.hidden = m.agree;
    dh.textContent = `differences (${m.mode}${m.total > m.differences.length ? `, the first ${int(m.differences.length)} of ${int(m.total)}` : ''})`;
    diffs.replaceChildren(...(m.agree ? [] : m.differences.slice(0, 200).map((d) => {
      const li = this.doc.createElement('li');
      li.dataset.testid = 'ac-difference';
      li.dataset.what = d.what;
      li.textContent = differenceWords(d);
      if (d.what === 'slot' && d.file && this.run) {
        li.append(' ');
        const a = this.doc.createElement('a');
        a.href = fileSlotURL(this.run.image, d.file, d.index ?? 0);
        a.textContent = 'on the file page';
        li.append(a);
      }
      return li;
    })));
    const eh = /** @type {HTMLElement} */ (this.$('ac-exp-h'));
    const ex = b.modes[0].explained;
    eh.hidden = ex.length === 0;
    const rest = explainedRest(b.modes[0]);
    eh.textContent = `explained: what the kernel did after the call${rest ? ` — ${rest}` : ''}`;
    exp.replaceChildren(...ex.map((x) => {
      const li = this.doc.createElement('li');
      li.dataset.testid = 'ac-explanation';
      const f = this.doc.createElement('code');
      f.textContent = x.func;
      li.append(f, `: ${x.text}`);
      return li;
    }));
    if (b.modes[0].explainedNext) {
      // The rest pages on through the API (its address is the answer's own).
      const li = this.doc.createElement('li');
      const a = this.doc.createElement('a');
      a.href = b.modes[0].explainedNext;
      a.dataset.testid = 'ac-explained-next';
      a.textContent = 'the next explanations (JSON)';
      li.append(a);
      exp.append(li);
    }
    this.layoutKey = '';
    this.place();
  }

  /**
   * The marks' layer over canvas id (made on first use), inside the canvas's panel.
   * @param {string} id
   * @returns {HTMLElement|null}
   */
  layer(id) {
    const canvas = this.$(id);
    if (!canvas || !canvas.parentElement) return null;
    let el = /** @type {HTMLElement|null} */ (canvas.parentElement.querySelector(`.ac-marks[data-for="${id}"]`));
    if (!el) {
      el = this.doc.createElement('div');
      el.className = 'ac-marks';
      el.dataset.for = id;
      el.setAttribute('role', 'group');
      el.setAttribute('aria-label', id === 'slots' ? 'slots that differ from the after-image' : 'SIT bits that differ from the after-image');
      canvas.after(el);
      el.addEventListener('mouseover', (e) => this.showTip(/** @type {HTMLElement} */ (e.target)));
      el.addEventListener('focusin', (e) => this.showTip(/** @type {HTMLElement} */ (e.target)));
      el.addEventListener('mouseout', () => this.hideTip());
      el.addEventListener('focusout', () => this.hideTip());
    }
    const c = /** @type {HTMLElement} */ (canvas);
    el.style.left = `${c.offsetLeft}px`;
    el.style.top = `${c.offsetTop}px`;
    el.style.width = `${c.offsetWidth}px`;
    el.style.height = `${c.offsetHeight}px`;
    return el;
  }

  /** @param {HTMLElement} t */
  showTip(t) {
    const b = t.closest('.ac-mark');
    if (!b || !this.tip) return;
    this.tip.textContent = /** @type {HTMLElement} */ (b).dataset.tip || '';
    this.tip.hidden = false;
    const r = b.getBoundingClientRect();
    const w = Math.min(360, innerWidth - 16);
    this.tip.style.maxWidth = `${w}px`;
    this.tip.style.left = `${Math.max(8, Math.min(innerWidth - w - 8, r.left))}px`;
    this.tip.style.top = `${r.bottom + 6 + 60 > innerHeight ? r.top - 60 : r.bottom + 6}px`;
  }

  hideTip() { if (this.tip) this.tip.hidden = true; }

  /** Places the marks where the panels draw their slots and bits (each frame, when they moved). */
  place() {
    const ctl = this.ctl;
    if (!ctl || !ctl.views) return;
    const st = ctl.state;
    const { slots, sit } = ctl.views;
    const sv = slots.layout;
    const cell = slots.opts.present ? Math.max(slots.cell, 26) : slots.cell;
    const key = [this.body ? 1 : 0, st.ready, st.n, st.range.start, sv.w, sv.h, sv.labelW, sv.stripW, sv.zoomFrom, sv.zoomCount, sv.zoomY, cell,
      sit.layout.segs.length, sit.layout.cell, sit.layout.top, sit.shown.join(','), sit.layout.mapX.join(','),
      /** @type {HTMLElement} */ (this.$('slots'))?.offsetWidth, /** @type {HTMLElement} */ (this.$('sit'))?.offsetHeight].join('|');
    if (key === this.layoutKey) return;
    this.layoutKey = key;
    const sl = this.layer('slots');
    const bl = this.layer('sit');
    if (!sl || !bl) return;
    /** @type {HTMLElement[]} */
    const sm = [];
    /** @type {Set<string>} the marks' keys drawn */
    const drawn = new Set();
    if (this.body && st.ready) {
      for (const k of this.marks.slots) {
        if (sm.length >= MAX_MARKS) break;
        const off = k.index - st.range.start;
        const box = slotMarkBox(sv, st.n, off, cell);
        if (!box) continue;
        drawn.add(k.key);
        sm.push(this.mark(k, box, box.where));
        // Where it lies in the whole range too, when the zoom lane shows it up close: a tick for
        // the eye (the cell's mark is the one to focus).
        if (box.where === 'zoom') {
          const r = slotMarkBox({ ...sv, zoomCount: 0 }, st.n, off, cell);
          if (r) sm.push(this.tick(k, r));
        }
      }
    }
    sl.replaceChildren(...sm);
    /** @type {HTMLElement[]} */
    const bm = [];
    if (this.body && st.ready) {
      for (const k of this.marks.sit) {
        // In each mode's column whose model differs there.
        for (const m of k.modes) {
          if (bm.length >= MAX_MARKS) break;
          const box = sitMarkBox(sit.layout, sit.shown, k.segno, k.bit, st.modes.indexOf(m));
          if (!box) continue;
          drawn.add(k.key);
          bm.push(this.mark(k, box, 'bit', st.modes.length > 1 ? m : ''));
        }
      }
    }
    bl.replaceChildren(...bm);
    const aside = this.$('ac-marked');
    if (aside) aside.textContent = this.body ? markedWords(this.body, this.marks, drawn.size) : '';
  }

  /**
   * A slot's place on the whole range's strip, when its cell is marked in the zoom lane: seen, not
   * focused (the cell's mark says it).
   * @param {Mark} k
   * @param {{x: number, y: number, w: number, h: number}} box
   * @returns {HTMLElement}
   */
  tick(k, box) {
    const e = this.doc.createElement('span');
    e.className = 'ac-mark range tick';
    e.setAttribute('aria-hidden', 'true');
    e.dataset.tip = k.text;
    e.style.left = `${Math.round(box.x)}px`;
    e.style.top = `${Math.round(box.y)}px`;
    e.style.width = `${Math.round(box.w)}px`;
    e.style.height = `${Math.round(box.h)}px`;
    return e;
  }

  /**
   * One mark: a button over the cell, its words in its name and its tooltip.
   * @param {Mark} k
   * @param {{x: number, y: number, w: number, h: number}} box
   * @param {string} where zoom, range (the whole range's strip) or bit
   * @param {string} [mode] the SIT column's mode
   * @returns {HTMLElement}
   */
  mark(k, box, where, mode = '') {
    const b = this.doc.createElement('button');
    b.type = 'button';
    b.className = `ac-mark ${where}`;
    b.dataset.testid = k.on === 'slot' ? 'ac-mark-slot' : 'ac-mark-bit';
    if (k.on === 'slot') b.dataset.index = String(k.index); else { b.dataset.segno = String(k.segno); b.dataset.bit = String(k.bit); }
    const text = mode ? `${k.text.replace(/ \([a-z-]+( and [a-z-]+)?\)$/, '')} (${mode} column)` : k.text;
    if (mode) b.dataset.mode = mode;
    b.dataset.tip = text;
    b.setAttribute('aria-label', `differs: ${text}${k.on === 'slot' ? ' — press to see the slot up close' : ''}`);
    if (k.on === 'slot') b.addEventListener('click', () => this.pin(k.index));
    b.style.left = `${Math.round(box.x)}px`;
    b.style.top = `${Math.round(box.y)}px`;
    b.style.width = `${Math.round(box.w)}px`;
    b.style.height = `${Math.round(box.h)}px`;
    return b;
  }
}
