// Writeback around the played zero (issue 17): the server runs the run's sequence on core.Seq and
// says, per operation, which dirty page writeback wrote where (GET /api/images/{id}/writeback,
// web/writeback.go); this module words it, one event a page — which page, old block → new block,
// in place or out of place, the SIT change with the segments' valid counts — and lists it in the
// writeback side panel, the played zero's own writeback (before its walk) marked.

import { int } from './fmt.js';
import { apiImage } from './links.js';
import { runQuery, SidePanels } from './sidepanel.js';
import { contract } from './contract.js';

/**
 * @typedef {object} WBBit web.wbBit
 * @property {number} segno
 * @property {number} bit
 * @property {number} addr
 * @property {boolean} set
 * @property {number} before the segment's valid blocks before the page
 * @property {number} after
 */

/**
 * @typedef {object} WBPage web.wbPage (core.PageWrite, the function, the SIT change)
 * @property {string} path
 * @property {number} index
 * @property {string} how in-place, out-of-place, past-eof, truncated
 * @property {number} old
 * @property {number} [new]
 * @property {string} [log]
 * @property {number} [segno]
 * @property {string} func
 * @property {WBBit[]} sit
 */

/**
 * @typedef {object} WBGroup web.wbGroup: one operation of the sequence
 * @property {number} op
 * @property {string} line
 * @property {string} kind
 * @property {boolean} [played]
 * @property {string} via
 * @property {string} [errno]
 * @property {number} dirtied
 * @property {WBPage[]} pages
 * @property {boolean} [checkpoint]
 * @property {boolean} [otherSIT] the operation changed those segments otherwise too (garbage
 *   collection inside it): the counts are writeback's part only
 */

/** The slot values that are not addresses, as the page's contract sends them. */
const { null: NULL_ADDR, new: NEW_ADDR, compress: COMPRESS_ADDR } = contract().addr;

/**
 * A slot value in words: "NEW_ADDR", "block 23167".
 * @param {number} a
 * @returns {string}
 */
export function addrWords(a) {
  if (a === NEW_ADDR) return 'NEW_ADDR';
  if (a === NULL_ADDR) return 'NULL_ADDR';
  if (a === COMPRESS_ADDR) return 'COMPRESS_ADDR';
  return `block ${int(a)}`;
}

/**
 * One SIT change: "segment 39 bit 95 set (valid 95 → 96)".
 * @param {WBBit} b
 * @returns {string}
 */
export function bitWords(b) {
  return `segment ${int(b.segno)} bit ${b.bit} ${b.set ? 'set' : 'cleared'} (valid ${int(b.before)} → ${int(b.after)})`;
}

/**
 * What writeback did to one page, in a sentence that names the kernel function.
 * @param {WBPage} p
 * @returns {string}
 */
export function pageWords(p) {
  const page = `page ${int(p.index)} of ${p.path}`;
  switch (p.how) {
    case 'in-place':
      return `${p.func}: ${page} rewritten in place at ${addrWords(p.old)}; the SIT does not change.`;
    case 'out-of-place': {
      const from = p.old === NEW_ADDR ? 'reserved NEW_ADDR' : addrWords(p.old);
      const log = p.log ? ` (${p.log} log, current segment ${int(p.segno ?? 0)})` : '';
      const sit = p.sit.length ? `: ${p.sit.map(bitWords).join(', ')}` : '';
      return `${p.func}: ${page} written out of place, ${from} → ${addrWords(p.new ?? 0)}${log}${sit}.`;
    }
    case 'past-eof':
      return `${p.func}: ${page} lies past i_size: not written.`;
    case 'truncated':
      return `${p.func}: ${page} maps NULL_ADDR ("already truncated"): not written.`;
  }
  return `${p.func}: ${page}: ${p.how}.`;
}

/**
 * The heading of one operation's events: "2. sync — sync(2): …: 2 pages".
 * @param {WBGroup} g
 * @returns {string}
 */
export function groupWords(g) {
  const n = g.pages.length;
  const what = g.kind === 'unmount' ? 'the unmount after the sequence' : `${g.op}. ${g.line}${g.played ? ' (played here: its writeback comes before the walk)' : ''}`;
  let s = `${what} — ${n ? `${int(n)} page${n === 1 ? '' : 's'} written back by ${g.via}` : 'no page written back'}`;
  if (g.errno) s += `; returns ${g.errno}`;
  if (g.otherSIT) s += '; the operation changed these segments otherwise too (f2fs_balance_fs\'s garbage collection): the counts are writeback\'s part';
  if (g.checkpoint) s += '; then a checkpoint: prefree segments become free (f2fs_write_checkpoint → f2fs_clear_prefree_segments)';
  if (g.kind !== 'unmount') s += `; ${int(g.dirtied)} dirty page${g.dirtied === 1 ? '' : 's'} left`;
  return `${s}.`;
}

/**
 * The side panel's summary: "3 pages written back: 1 before the walk, 2 at the unmount".
 * @param {WBGroup[]} groups
 * @returns {string}
 */
export function summaryWords(groups) {
  const total = groups.reduce((s, g) => s + g.pages.length, 0);
  if (!total) return 'no dirty page is written back in this sequence';
  const parts = groups.filter((g) => g.pages.length).map((g) => {
    const at = g.kind === 'unmount' ? 'at the unmount' : g.played ? 'before the played zero\'s walk' : `by the ${g.kind} (operation ${g.op})`;
    return `${int(g.pages.length)} ${at}`;
  });
  return `${int(total)} page${total === 1 ? '' : 's'} written back: ${parts.join(', ')}`;
}

/**
 * The narration's line: what writeback does around the played zero — the pages written back
 * before its walk (they change what the walk finds), and those the unmount writes after it.
 * @param {WBGroup[]} groups
 * @returns {string} "" when neither writes a page
 */
export function narrationWords(groups) {
  const parts = [];
  const played = groups.find((g) => g.played);
  if (played && played.pages.length) {
    parts.push(`before the walk, filemap_write_and_wait_range writes back ${played.pages.map(shortPage).join('; ')}`);
  }
  const um = groups.find((g) => g.kind === 'unmount');
  if (um && um.pages.length) {
    parts.push(`at the unmount ${int(um.pages.length)} dirty page${um.pages.length === 1 ? ' is' : 's are'} written back (${summaryHow(um.pages)})`);
  }
  return parts.length ? `${parts.join('. ')}.` : '';
}

/**
 * A page's writeback in a clause: "page 64 of /a out of place, NEW_ADDR → block 24,159 (…)".
 * @param {WBPage} p
 * @returns {string}
 */
function shortPage(p) {
  const page = `page ${int(p.index)} of ${p.path}`;
  switch (p.how) {
    case 'in-place': return `${page} in place at ${addrWords(p.old)} (f2fs_inplace_write_data: no SIT change)`;
    case 'out-of-place': {
      const sit = p.sit.length ? `: ${p.sit.map(bitWords).join(', ')}` : '';
      return `${page} out of place, ${addrWords(p.old)} → ${addrWords(p.new ?? 0)} (f2fs_outplace_write_data, ${p.log || 'data'} log)${sit}`;
    }
  }
  return `${page}: ${p.how}, not written`;
}

/**
 * How pages were written: "1 in place, 2 out of place".
 * @param {WBPage[]} ps
 * @returns {string}
 */
function summaryHow(ps) {
  const n = (/** @type {string} */ h) => ps.filter((p) => p.how === h).length;
  return [['in-place', 'in place'], ['out-of-place', 'out of place'], ['past-eof', 'past i_size, not written'], ['truncated', 'truncated, not written']]
    .filter(([h]) => n(h)).map(([h, w]) => `${int(n(h))} ${w}`).join(', ');
}

/**
 * The writeback side panel: fetched for each run (each hello), listed by operation.
 */
export class WritebackUI {
  /**
   * @param {Document} doc
   * @param {SidePanels} panels
   */
  constructor(doc, panels) {
    this.doc = doc;
    this.panels = panels;
    this.key = '';
    /** @type {WBGroup[]|null} */
    this.groups = null;
    panels.add('wb', () => this.load());
  }

  /** @param {string} id */
  $(id) { return /** @type {HTMLElement|null} */ (this.doc.getElementById(id)); }

  /** @param {any} h a hello */
  hello(h) {
    const run = h.run;
    if (!run || !run.image) return;
    const key = `${run.image}?${runQuery(run)}`;
    if (key === this.key) return;
    this.key = key;
    this.groups = null;
    const line = this.$('narr-wb');
    if (line) line.hidden = true;
    this.load();
  }

  /** Fetches the events of the run (once per run). */
  async load() {
    const key = this.key;
    if (!key || this.groups) { this.render(); return; }
    const [image, q] = [key.slice(0, key.indexOf('?')), key.slice(key.indexOf('?') + 1)];
    this.say('asking the model what writeback does…');
    try {
      const res = await fetch(`${apiImage(image, 'writeback')}?${q}`);
      const body = await res.json();
      if (key !== this.key) return;
      if (!res.ok) { this.say(`${res.status}: ${body.error || res.statusText}`); return; }
      this.groups = body.groups || [];
    } catch (err) {
      this.say(`writeback: ${/** @type {Error} */ (err).message}`);
      return;
    }
    this.render();
  }

  /** @param {string} s */
  say(s) {
    const el = this.$('wb-status');
    if (el) el.textContent = s;
  }

  render() {
    const g = this.groups;
    const open = this.$('wb-open');
    if (!g) return;
    const total = g.reduce((s, x) => s + x.pages.length, 0);
    if (open) open.textContent = `writeback (${int(total)} page${total === 1 ? '' : 's'})`;
    this.say(summaryWords(g));
    const nw = narrationWords(g);
    const line = this.$('narr-wb');
    const lt = this.$('narr-wb-text');
    if (line && lt) { line.hidden = !nw; lt.textContent = nw; }
    const aside = this.$('wb-aside');
    if (aside) aside.textContent = `${int(g.length - 1)} operation${g.length === 2 ? '' : 's'} and the unmount`;
    const list = this.$('wb-list');
    if (!list) return;
    list.replaceChildren(...g.map((x) => {
      const li = this.doc.createElement('li');
      li.dataset.testid = 'wb-group';
      li.dataset.kind = x.kind;
      if (x.played) li.classList.add('played');
      const h = this.doc.createElement('p');
      h.className = 'wb-head';
      h.textContent = groupWords(x);
      li.append(h);
      if (x.pages.length) {
        const ul = this.doc.createElement('ul');
        for (const p of x.pages) {
          const e = this.doc.createElement('li');
          e.dataset.testid = 'wb-page';
          e.dataset.how = p.how;
          e.textContent = pageWords(p);
          ul.append(e);
        }
        li.append(ul);
      }
      return li;
    }));
  }
}
