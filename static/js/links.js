// The one place the front end builds URLs of images and rooms: pages (/images/ID/…), API
// resources (/api/images/ID/…) and the links from the player into the block inspector and the
// file page, the same URLs as Go's templates.BlockURL and templates.FileSlotURL, escaped as
// net/url escapes them. Nothing else calls encodeURIComponent.

import { int } from './fmt.js';
import { contract, playedOf } from './contract.js';
import { withholds, WITHHOLD } from './quiz.js';

/**
 * Escapes s as Go's url.QueryEscape does: everything but letters, digits and -_.~ as %XX
 * (upper-case hex, UTF-8), a space as +.
 * @param {string} s
 * @returns {string}
 */
export function queryEscape(s) {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/**
 * Escapes s as Go's url.PathEscape does for a path segment: as queryEscape, but a space is %20
 * and $&+,:;=@ stay (url.PathEscape keeps them; ; and , are escaped).
 * @param {string} s
 * @returns {string}
 */
export function pathEscape(s) {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%(24|26|2B|3A|3D|40)/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
}

/**
 * Joins path segments, each escaped as a path segment (numbers as they are).
 * @param {Array<string|number>} parts
 * @returns {string}
 */
function segments(parts) {
  return parts.map((p) => pathEscape(String(p))).join('/');
}

/**
 * A page of image id: imagePage(id) is the image's page, imagePage(id, 'run') → /images/ID/run.
 * @param {string} id
 * @param {...(string|number)} parts
 * @returns {string}
 */
export function imagePage(id, ...parts) {
  return `/images/${segments([id, ...parts])}`;
}

/**
 * An API resource of image id: apiImage(id, 'segments', 3) → /api/images/ID/segments/3;
 * apiImage(id) is the image itself.
 * @param {string} id
 * @param {...(string|number)} parts
 * @returns {string}
 */
export function apiImage(id, ...parts) {
  return `/api/images/${segments([id, ...parts])}`;
}

/**
 * The upload endpoint for a file named name, under the client's progress token.
 * @param {string} token
 * @param {string} name
 * @returns {string}
 */
export function uploadURL(token, name) {
  return `/api/images?token=${queryEscape(token)}&name=${queryEscape(name)}`;
}

/**
 * The progress of the upload under the client's token (phase, bytes expanded), while it is stored.
 * @param {string} token
 * @returns {string}
 */
export function uploadProgressURL(token) {
  return `/api/uploads/${segments([token])}`;
}

/**
 * The follower's page of room code.
 * @param {string} code
 * @returns {string}
 */
export function followPage(code) {
  return `/follow/${segments([code])}`;
}

/**
 * The block inspector's page of block addr in image id (templates.BlockURL).
 * @param {string} id
 * @param {number} addr
 * @returns {string}
 */
export function blockURL(id, addr) {
  return imagePage(id, 'blocks', addr >>> 0);
}

/**
 * The file page of path in image id with file block index slot marked (templates.FileSlotURL).
 * @param {string} id
 * @param {string} path
 * @param {number} slot
 * @returns {string}
 */
export function fileSlotURL(id, path, slot) {
  return `${imagePage(id, 'file')}?path=${queryEscape(path)}#slot=${slot}`;
}

/** Slot values that are not block addresses (f2fs.h: NULL_ADDR, NEW_ADDR, COMPRESS_ADDR): the contract's. */
const NOT_ADDRESSES = new Set(Object.values(contract().addr));

/**
 * @typedef {object} RunFields a run as the query names it
 * @property {string} path
 * @property {string|number} offset
 * @property {string|number} [length] "" or absent: to the end of the file (the server's default)
 * @property {string} [mode] absent: left as q has it (the next-state API takes none)
 * @property {boolean} [keepSize]
 * @property {string[]} [before] operations run first, in the ops language
 * @property {string} [op] the played call: "zero" (or absent) or another of contract().played
 * @property {string|number} [size] truncate's new size; absent: offset (a truncate's size is its
 *   request's offset, as the hello's info carries it)
 */

/**
 * Writes a run into a query, under the field names the server reads (the contract's, from Go's
 * request.Field* and web.FieldBefore): path, op (only a punch or a truncate), offset, length, mode,
 * keepSize (only when set) and every before line, replacing what q held of them; a truncate writes
 * size instead of offset, length and keepSize, a punch no keepSize (request.Parse reads no more).
 * The one place a run query is built; chain.js, figure.js, nextstate.js, sidepanel.js and
 * permalink.js call it.
 * @param {URLSearchParams} q
 * @param {RunFields} run
 * @returns {URLSearchParams} q
 */
export function setRunQuery(q, run) {
  const f = contract().query;
  const p = playedOf(run.op);
  const op = run.op || contract().ops.zero;
  q.set(f.path, run.path);
  if (op === contract().ops.zero) q.delete(f.op); else q.set(f.op, op);
  // The fields the call's declaration reads (contract().played): its range's, keepSize where it
  // is a choice; the others are deleted.
  const takes = new Set(p ? p.fields : [f.offset, f.length]);
  const value = {
    [f.offset]: String(run.offset),
    [f.length]: run.length === undefined || run.length === '' ? '' : String(run.length),
    [f.size]: String(run.size === undefined || run.size === '' ? run.offset : run.size),
    [f.keepSize]: run.keepSize ? 'true' : '',
  };
  for (const k of [f.offset, f.length, f.size, f.keepSize]) {
    if (takes.has(k) && value[k] !== '') q.set(k, value[k]); else q.delete(k);
  }
  if (run.mode) q.set(f.mode, run.mode);
  q.delete(f.before);
  for (const op of run.before || []) q.append(f.before, op);
  return q;
}

/**
 * @typedef {object} SlotLinks
 * @property {string} file the slot on the file page
 * @property {string} block the block the slot points at ("" for NULL, NEW and COMPRESS_ADDR)
 * @property {number} addr
 */

/**
 * The links of a slot: its place on the file page and, when it holds an address, that block.
 * @param {string} id image id ("" for a sandbox run: no links)
 * @param {string} path
 * @param {number} slot file block index
 * @param {number} value the slot's content
 * @returns {SlotLinks|null}
 */
export function slotLinks(id, path, slot, value) {
  if (!id || !path || !(slot >= 0)) return null;
  const v = value >>> 0;
  return { file: fileSlotURL(id, path, slot), block: NOT_ADDRESSES.has(v) ? '' : blockURL(id, v), addr: v };
}

/**
 * The slot panel's links: the pinned slot (or the cursor's) on the file page and the block it
 * pointed at before the run, in the block inspector. Keyboard users reach them with Tab; the
 * canvas's tooltip names the same slot.
 */
export class SlotLinks {
  /** @param {Document} doc */
  constructor(doc) {
    this.doc = doc;
    /** @type {import('./player.js').PlayerController|null} */
    this.ctl = null;
    this.key = '';
    this.queued = false;
    /** @type {HTMLElement|null} */
    this.el = null;
  }

  /** @param {import('./player.js').PlayerController} ctl */
  attach(ctl) {
    this.ctl = ctl;
    const h = this.doc.getElementById('slots-title');
    if (!h) return;
    const el = this.doc.createElement('span');
    el.className = 'slot-links';
    el.dataset.testid = 'slot-links';
    h.append(el);
    this.el = el;
    const canvas = this.doc.getElementById('slots');
    canvas?.addEventListener('click', () => this.schedule());
    canvas?.addEventListener('keydown', () => this.schedule());
  }

  /** Updates after the player has drawn (a pin is taken in the same event). */
  schedule() {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => { this.queued = false; this.render(); });
  }

  render() {
    const el = this.el;
    const ctl = this.ctl;
    if (!el || !ctl) return;
    const info = ctl.state.info;
    const f = ctl.focusSlot();
    const links = f ? slotLinks(info.image, info.path, f.index, f.before) : null;
    // The block inspector names the block's segment and whether it lies in the main area: a
    // question that withholds segments withholds the way there too.
    const view = ctl.views?.slots?.opts;
    if (links && view && view.quiz && withholds(view.veil, WITHHOLD.segments)) links.block = '';
    const key = links && f ? `${f.index}:${f.pinned}:${links.block}` : '';
    if (key === this.key) return;
    this.key = key;
    el.hidden = !links;
    if (!links || !f) return;
    // The links stay the same elements while the cursor moves: one that has the focus keeps it.
    if (!el.firstChild) {
      const doc = this.doc;
      const what = doc.createElement('span');
      const block = doc.createElement('a');
      block.dataset.testid = 'slot-block-link';
      const sep = doc.createElement('span');
      sep.textContent = ' · ';
      const file = doc.createElement('a');
      file.dataset.testid = 'slot-file-link';
      file.textContent = 'file page';
      el.append(what, block, sep, file);
    }
    const [what, block, sep, file] = /** @type {HTMLElement[]} */ ([...el.children]);
    el.dataset.slot = String(f.index);
    what.textContent = `${f.pinned ? 'pinned' : 'cursor'} slot ${int(f.index)}: `;
    block.hidden = !links.block;
    sep.hidden = !links.block;
    if (links.block) {
      /** @type {HTMLAnchorElement} */ (block).href = links.block;
      block.textContent = `block ${links.addr}`;
      block.title = `block ${links.addr}, which slot ${f.index} held before the run, in the block inspector`;
    }
    /** @type {HTMLAnchorElement} */ (file).href = links.file;
    file.title = `slot ${f.index} on the file page's block map`;
  }
}
