// Glossary popovers: wherever a term appears (legends, panel titles, narration, counters, tour
// stops) its entry opens on hover, on focus and on click, so nothing is hover-only. The entries come
// from the page (templ.JSONScript "glossary-data", package glossary); /glossary lists them all.

/**
 * @typedef {object} Entry
 * @property {string} slug
 * @property {string} term
 * @property {string} text
 * @property {string} onDisk
 * @property {string} source
 * @property {string[]} [match]
 * @property {string[]} [see]
 */

/**
 * @typedef {{text: string, slug?: string}} Part a piece of running text, a term when slug is set
 */

/**
 * A matcher of the glossary's words in running text.
 */
export class TermMatcher {
  /** @param {Entry[]} entries */
  constructor(entries) {
    /** @type {Map<string, string>} word → slug */
    this.words = new Map();
    for (const e of entries) for (const m of e.match || []) this.words.set(m, e.slug);
    const alts = [...this.words.keys()].sort((a, b) => b.length - a.length).map(escapeRe);
    // Whole words only: "SIT" is not linked inside "SITE", nor "slot" inside "slots_x".
    this.re = alts.length ? new RegExp(`(?<![A-Za-z0-9_])(?:${alts.join('|')})(?![A-Za-z0-9_])`, 'g') : null;
  }

  /**
   * Splits text into plain parts and terms, each term linked at its first mention only (a
   * sentence full of links reads badly).
   * @param {string} text
   * @param {Set<string>} [seen] slugs linked already (shared across the texts of one panel)
   * @returns {Part[]}
   */
  split(text, seen = new Set()) {
    /** @type {Part[]} */
    const out = [];
    if (!this.re || !text) return text ? [{ text }] : [];
    let last = 0;
    this.re.lastIndex = 0;
    for (let m = this.re.exec(text); m; m = this.re.exec(text)) {
      const slug = /** @type {string} */ (this.words.get(m[0]));
      if (seen.has(slug)) continue;
      seen.add(slug);
      if (m.index > last) out.push({ text: text.slice(last, m.index) });
      out.push({ text: m[0], slug });
      last = m.index + m[0].length;
    }
    if (last < text.length) out.push({ text: text.slice(last) });
    return out;
  }
}

/**
 * @param {string} s
 * @returns {string}
 */
function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Reads the page's glossary.
 * @param {Document} doc
 * @returns {Map<string, Entry>}
 */
export function loadGlossary(doc) {
  const el = doc.getElementById('glossary-data');
  /** @type {Entry[]} */
  let list = [];
  try { list = JSON.parse(el?.textContent || '[]') || []; } catch { list = []; }
  return new Map(list.map((e) => [e.slug, e]));
}

/**
 * Makes the element that names a term and opens its entry: a button, so a Tab stop in the page's
 * order, that focus, Enter, a click, a tap or hover opens (issue 30: the README promises every
 * term opens on focus). The player keeps them from crowding the keyboard's way to the controls
 * by its order: the controls and the session bar come before every panel that holds terms.
 * @param {Document} doc
 * @param {string} text
 * @param {string} slug
 * @returns {HTMLElement}
 */
export function termButton(doc, text, slug) {
  const b = doc.createElement('button');
  b.type = 'button';
  b.className = 'term';
  b.dataset.term = slug;
  b.textContent = text;
  return b;
}

/**
 * Writes text into el with its terms as term buttons.
 * @param {HTMLElement} el
 * @param {string} text
 * @param {TermMatcher|null} m
 * @param {Set<string>} [seen]
 */
export function writeTerms(el, text, m, seen) {
  const doc = el.ownerDocument;
  if (!m) { el.textContent = text; return; }
  const parts = m.split(text, seen);
  el.replaceChildren(...parts.map((p) => (p.slug ? termButton(doc, p.text, p.slug) : p.text)));
}

/** What a popover must not cover: the quiz's question, choices and answer box while it is open. */
export const POPOVER_AVOID = '#quiz:not([hidden]) .choices, #quiz:not([hidden]) form, #quiz:not([hidden]) .result';

/**
 * @typedef {{left: number, top: number, right: number, bottom: number}} Box
 */

/**
 * Chooses where a popover of size p goes for a term at r in a viewport of size v: inside the
 * viewport, covering neither the term nor any of avoid, as near the term as can be — under it
 * when that is clear, else above it, beside it, or past the areas to avoid (above, below, left or
 * right of them). When no place is clear, the one that covers the least of avoid. 6 px margins.
 * @param {Box} r the term
 * @param {{width: number, height: number}} p the popover
 * @param {{width: number, height: number}} v the viewport
 * @param {Box[]} avoid
 * @returns {{left: number, top: number}}
 */
export function popoverPlace(r, p, v, avoid) {
  const m = 6;
  const clampX = (/** @type {number} */ x) => Math.max(m, Math.min(x, v.width - p.width - m));
  const clampY = (/** @type {number} */ y) => Math.max(m, Math.min(y, v.height - p.height - m));
  const xs = [r.left, r.right + m, r.left - p.width - m, ...avoid.flatMap((a) => [a.left - p.width - m, a.right + m])].map(clampX);
  const ys = [r.bottom + m, r.top - p.height - m, r.top, ...avoid.flatMap((a) => [a.top - p.height - m, a.bottom + m])].map(clampY);
  const area = (/** @type {{left: number, top: number}} */ s, /** @type {Box} */ a) => {
    const w = Math.min(s.left + p.width, a.right) - Math.max(s.left, a.left);
    const h = Math.min(s.top + p.height, a.bottom) - Math.max(s.top, a.top);
    return w > 0 && h > 0 ? w * h : 0;
  };
  const covered = (/** @type {{left: number, top: number}} */ s) => avoid.reduce((sum, a) => sum + area(s, a), 0);
  // How far the popover is from its term: the gap between the two boxes.
  const gap = (/** @type {{left: number, top: number}} */ s) => Math.hypot(
    Math.max(0, r.left - (s.left + p.width), s.left - r.right), Math.max(0, r.top - (s.top + p.height), s.top - r.bottom));
  /** @type {{left: number, top: number}|null} */
  let best = null;
  let bestCost = [Infinity, Infinity];
  // Under, above, then beside the term come first, so that a tie keeps the usual place.
  const order = [[0, 0], [0, 1], [1, 2], [2, 2]];
  const seen = new Set();
  const cands = [...order.map(([i, j]) => ({ left: xs[i], top: ys[j] })), ...xs.flatMap((left) => ys.map((top) => ({ left, top })))];
  for (const s of cands) {
    const k = `${s.left},${s.top}`;
    if (seen.has(k)) continue;
    seen.add(k);
    // Covering the term itself counts as much as covering what is to be avoided.
    const cost = [covered(s) + area(s, r), gap(s)];
    if (cost[0] < bestCost[0] || (cost[0] === bestCost[0] && cost[1] < bestCost[1])) {
      best = s;
      bestCost = cost;
    }
  }
  return /** @type {{left: number, top: number}} */ (best);
}

/**
 * The popover: one element for the page, filled with the entry of the term under the pointer or
 * focus. A click pins it open (for presenters: nothing is hover-only); Escape or a click elsewhere
 * closes it.
 */
export class Popover {
  /**
   * @param {Document} doc
   * @param {Map<string, Entry>} entries
   */
  constructor(doc, entries) {
    this.doc = doc;
    this.entries = entries;
    this.el = doc.createElement('div');
    this.el.className = 'popover';
    this.el.id = 'glossary-popover';
    this.el.setAttribute('role', 'tooltip');
    this.el.dataset.testid = 'glossary-popover';
    this.el.hidden = true;
    doc.body.append(this.el);
    /** @type {HTMLElement|null} the term the popover belongs to */
    this.for = null;
    this.pinned = false;
    this.hideTimer = 0;
    const termOf = (/** @type {EventTarget|null} */ t) => /** @type {HTMLElement|null} */ (
      t instanceof Element ? t.closest('[data-term]') : null);
    doc.addEventListener('mouseover', (e) => {
      const t = termOf(e.target);
      if (t) this.show(t, false);
      else if (e.target instanceof Node && this.el.contains(e.target)) clearTimeout(this.hideTimer);
    });
    doc.addEventListener('mouseout', (e) => {
      const t = termOf(e.target);
      if ((t || (e.target instanceof Node && this.el.contains(e.target))) && !this.pinned) this.hideSoon();
    });
    doc.addEventListener('focusin', (e) => {
      const t = termOf(e.target);
      if (t) this.show(t, false);
    });
    doc.addEventListener('focusout', (e) => {
      if (termOf(e.target) && !this.pinned) this.hideSoon();
    });
    doc.addEventListener('click', (e) => {
      const t = termOf(e.target);
      if (t) {
        e.preventDefault();
        if (this.pinned && this.for === t) this.hide();
        else { this.show(t, true); }
        return;
      }
      if (this.pinned && !(e.target instanceof Node && this.el.contains(e.target))) this.hide();
    });
    doc.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !this.el.hidden) { this.hide(); e.stopPropagation(); }
    }, true);
  }

  /**
   * Shows the entry of term element t next to it.
   * @param {HTMLElement} t
   * @param {boolean} pin
   */
  show(t, pin) {
    clearTimeout(this.hideTimer);
    const slug = t.dataset.term || '';
    const e = this.entries.get(slug);
    if (!e) return;
    if (this.for !== t || this.el.hidden) this.fill(e);
    if (this.for && this.for !== t) this.for.removeAttribute('aria-describedby');
    this.for = t;
    this.pinned = pin || (this.pinned && this.for === t);
    t.setAttribute('aria-describedby', this.el.id);
    this.el.hidden = false;
    this.place(t);
  }

  /**
   * @param {Entry} e
   */
  fill(e) {
    const d = this.doc;
    const box = d.createElement('div');
    box.dataset.testid = `term-${e.slug}`;
    box.className = 'entry';
    const h = d.createElement('b');
    h.className = 'name';
    h.textContent = e.term;
    const p = d.createElement('p');
    p.textContent = e.text;
    const disk = d.createElement('p');
    disk.className = 'fact';
    disk.append(label(d, 'On disk'), e.onDisk);
    const src = d.createElement('p');
    src.className = 'fact';
    src.append(label(d, 'In the kernel'), e.source);
    const more = d.createElement('a');
    more.href = `/glossary#term-${e.slug}`;
    more.textContent = 'glossary ▸';
    more.className = 'more';
    more.target = '_blank';
    more.rel = 'noopener';
    box.append(h, p, disk, src, more);
    this.el.replaceChildren(box);
  }

  /**
   * Places the popover under (or above, or beside) the term, inside the viewport and clear of what
   * it must not cover: an open quiz question's choices and answer box.
   * @param {HTMLElement} t
   */
  place(t) {
    const vw0 = this.doc.documentElement.clientWidth;
    // A fixed box without a width is as wide as the room to its right: measured where it was, it
    // would change size where it goes. Measure it at the left edge, then hold that width.
    this.el.style.width = '';
    this.el.style.left = '0px';
    this.el.style.top = '0px';
    this.el.style.width = `${Math.min(this.el.getBoundingClientRect().width, vw0 - 12)}px`;
    const pr = this.el.getBoundingClientRect();
    const avoid = [...this.doc.querySelectorAll(POPOVER_AVOID)]
      .filter((el) => !el.closest('[hidden]'))
      .map((el) => el.getBoundingClientRect())
      .filter((r) => r.width > 0 && r.height > 0);
    const vw = this.doc.documentElement.clientWidth;
    const vh = this.doc.documentElement.clientHeight;
    const { left, top } = popoverPlace(t.getBoundingClientRect(), { width: pr.width, height: pr.height }, { width: vw, height: vh }, avoid);
    this.el.style.left = `${left}px`;
    this.el.style.top = `${top}px`;
  }

  /** Hides the popover after a moment (the pointer may be on its way into it). */
  hideSoon() {
    clearTimeout(this.hideTimer);
    this.hideTimer = window.setTimeout(() => this.hide(), 250);
  }

  /** Hides the popover. */
  hide() {
    clearTimeout(this.hideTimer);
    this.el.hidden = true;
    this.pinned = false;
    if (this.for) this.for.removeAttribute('aria-describedby');
    this.for = null;
  }
}

/**
 * @param {Document} d
 * @param {string} s
 * @returns {HTMLElement}
 */
function label(d, s) {
  const k = d.createElement('span');
  k.className = 'k';
  k.textContent = s;
  return k;
}
