// The image page's directory tree. The server lists the first entries of each directory (at most a
// page of them, and 5,000 paths in all); a directory that goes on is marked data-state="partial"
// with data-after naming its last entry shown. Here directories open and close, and the entries a
// page left out are fetched from GET /api/images/{id}/dir a page at a time when the reader asks: a
// directory of 3,000 dentry blocks or a chain of 255-byte names costs the page nothing more.
import { bytes } from './fmt.js';
import { imagePage, apiImage, setRunQuery } from './links.js';
import { contract } from './contract.js';

/**
 * @typedef {{path: string, ino: number, type: string, size: number}} Entry
 * @typedef {{dir: Entry, entries: Entry[], more: boolean, next?: string,
 *   problems: Array<{path: string, count: number, error: string}>, problemsDropped?: number}} DirPage
 */

/**
 * The API URL of a page of directory dir: the entries after name after ("" for the first page).
 * @param {string} id image id
 * @param {string} dir absolute path
 * @param {string} after
 * @param {number} limit
 * @returns {string}
 */
export function dirURL(id, dir, after, limit) {
  const q = new URLSearchParams({ path: dir, limit: String(limit) });
  if (after) q.set('after', after);
  return `${apiImage(id, 'dir')}?${q}`;
}

/**
 * The file page of path (templates/urls.go fileURL).
 * @param {string} id
 * @param {string} path
 * @returns {string}
 */
export function fileURL(id, path) {
  return `${imagePage(id, 'file')}?${new URLSearchParams({ path })}`;
}

/**
 * The player on the whole file (templates/urls.go RunURL with offset 0, mode both).
 * @param {string} id
 * @param {string} path
 * @param {number} size
 * @returns {string}
 */
export function runURL(id, path, size) {
  const q = setRunQuery(new URLSearchParams(), { path, offset: 0, length: Math.max(size, 1), mode: contract().modes.both });
  return `${imagePage(id, 'run')}?${q}`;
}

/**
 * The index just past the subtree of item i: items are listed depth first, so the subtree is the
 * run of items after i that are deeper than it.
 * @param {number[]} depths the items' depths in order
 * @param {number} i
 * @returns {number}
 */
export function subtreeEnd(depths, i) {
  let j = i + 1;
  while (j < depths.length && depths[j] > depths[i]) j++;
  return j;
}

/**
 * What a page adds below a directory: its entries (each with its depth and name) and, when the
 * directory goes on, where the next page starts.
 * @param {DirPage} page
 * @param {number} depth the directory's depth
 * @returns {{items: Array<Entry & {depth: number, name: string}>, after: string|null}}
 */
export function pageItems(page, depth) {
  const items = page.entries.map((e) => ({ ...e, depth: depth + 1, name: e.path.slice(e.path.lastIndexOf('/') + 1) }));
  return { items, after: page.more ? (page.next || null) : null };
}

const ICONS = /** @type {Record<string, string>} */ ({ dir: '▾', symlink: '↪', file: '▪' });

/**
 * Wires the tree of the image page.
 * @param {Document} doc
 * @param {(url: string) => Promise<DirPage>} [getPage] fetches a page (tests pass their own)
 */
export function initTree(doc, getPage = fetchPage) {
  const ul = /** @type {HTMLUListElement|null} */ (doc.querySelector('[data-testid="file-tree"]'));
  if (!ul) return;
  const id = ul.dataset.id || '';
  const limit = Number(ul.dataset.page || 200);
  /** Each partial directory's "more" row. @type {WeakMap<HTMLElement, HTMLLIElement>} */
  const mores = new WeakMap();

  /** @param {HTMLElement} li */
  const depthOf = (li) => Number(li.dataset.depth || 0);
  /** The items of the tree below li (its subtree), in order. @param {HTMLElement} li */
  const subtree = (li) => {
    const out = [];
    const d = depthOf(li);
    for (let n = /** @type {HTMLElement|null} */ (li.nextElementSibling); n && depthOf(n) > d; n = /** @type {HTMLElement|null} */ (n.nextElementSibling)) out.push(n);
    return out;
  };

  /**
   * A tree item like the server's (templates/image.templ).
   * @param {Entry & {depth: number, name: string}} e
   */
  const item = (e) => {
    const li = doc.createElement('li');
    li.className = `${e.type} depth-${Math.min(e.depth, 12)}`;
    li.dataset.testid = 'file-entry';
    li.dataset.path = e.path;
    li.dataset.depth = String(e.depth);
    const span = (/** @type {string} */ cls, /** @type {string} */ text) => {
      const s = doc.createElement('span');
      s.className = cls;
      s.textContent = text;
      return s;
    };
    const icon = span('icon', ICONS[e.type] || '?');
    icon.setAttribute('aria-hidden', 'true');
    const name = span('name', '');
    if (e.type === 'file') {
      const a = doc.createElement('a');
      a.href = fileURL(id, e.path);
      a.dataset.testid = 'file-link';
      a.textContent = e.name;
      name.append(a);
    } else {
      name.textContent = e.type === 'dir' ? `${e.name}/` : e.name;
    }
    const zero = span('zero', '');
    if (e.type === 'file') {
      const a = doc.createElement('a');
      a.className = 'small';
      a.href = runURL(id, e.path, e.size);
      a.dataset.testid = 'file-run';
      a.title = 'zero the whole file in the player';
      a.textContent = 'zero ▸';
      zero.append(a);
    }
    li.append(icon, name, span('kind', e.type), span('size', e.type === 'dir' ? '' : bytes(e.size)),
      span('muted small ino', `ino ${e.ino}`), zero);
    if (e.type === 'dir') {
      li.dataset.state = 'closed';
      li.dataset.after = '';
    }
    return li;
  };

  /**
   * Fetches the page of dir li after its data-after and puts its entries at the end of its
   * subtree, followed by a "more" row when the directory goes on.
   * @param {HTMLElement} li
   */
  const load = async (li) => {
    if (li.dataset.loading) return;
    li.dataset.loading = '1';
    const more = mores.get(li);
    const moreButton = more?.querySelector('button');
    if (moreButton) moreButton.disabled = true;
    try {
      const page = await getPage(dirURL(id, li.dataset.path || '/', li.dataset.after || '', limit));
      const { items, after } = pageItems(page, depthOf(li));
      const rest = subtree(li);
      let prev = /** @type {Element} */ (more ? more.previousElementSibling : (rest.length ? rest[rest.length - 1] : li));
      for (const e of items) {
        const n = item(e);
        prev.after(n);
        prev = n;
        wireDir(n);
      }
      if (items.length) li.dataset.after = items[items.length - 1].name;
      li.dataset.state = after ? 'partial' : 'complete';
      for (const p of page.problems || []) {
        const note = doc.createElement('li');
        note.className = `muted small depth-${Math.min(depthOf(li) + 1, 12)}`;
        note.dataset.depth = String(depthOf(li) + 1);
        note.dataset.testid = 'tree-problem';
        note.textContent = `stepped over: ${p.path}: ${p.error}${p.count > 1 ? ` (${p.count} times)` : ''}`;
        prev.after(note);
        prev = note;
      }
      setMore(li, after !== null, prev);
    } catch (err) {
      const note = doc.createElement('li');
      note.className = `msg error depth-${Math.min(depthOf(li) + 1, 12)}`;
      note.dataset.depth = String(depthOf(li) + 1);
      note.textContent = `Could not list ${li.dataset.path}: ${err instanceof Error ? err.message : err}`;
      (more || li).after(note);
      if (moreButton) moreButton.disabled = false;
    } finally {
      delete li.dataset.loading;
    }
  };

  /**
   * Shows, moves or removes the "more" row of directory li (after last).
   * @param {HTMLElement} li
   * @param {boolean} on
   * @param {Element} last
   */
  const setMore = (li, on, last) => {
    let row = mores.get(li);
    if (!on) {
      if (row) row.remove();
      mores.delete(li);
      return;
    }
    if (!row) {
      row = doc.createElement('li');
      row.className = `more depth-${Math.min(depthOf(li) + 1, 12)}`;
      row.dataset.depth = String(depthOf(li) + 1);
      row.dataset.testid = 'tree-more';
      const b = doc.createElement('button');
      b.type = 'button';
      b.className = 'small';
      b.dataset.testid = 'tree-more-button';
      b.addEventListener('click', () => load(li));
      row.append(b);
      mores.set(li, row);
    }
    const b = /** @type {HTMLButtonElement} */ (row.querySelector('button'));
    b.textContent = `more of ${li.dataset.path} ▾`;
    b.title = `list the next ${limit} entries of ${li.dataset.path} (after ${li.dataset.after})`;
    b.disabled = false;
    if (row !== last) last.after(row);
  };

  /**
   * Opens or closes directory li: closing hides its subtree; opening shows it again (fetching the
   * first page of a directory never listed).
   * @param {HTMLElement} li
   * @param {boolean} open
   */
  const toggle = (li, open) => {
    const btn = li.querySelector('[data-testid="tree-toggle"]');
    if (btn) {
      btn.setAttribute('aria-expanded', String(open));
      btn.textContent = open ? 'close' : 'open';
    }
    li.dataset.open = open ? '1' : '';
    const icon = li.querySelector('.icon');
    if (icon) icon.textContent = open ? '▾' : '▸';
    if (open && li.dataset.state === 'closed') {
      load(li);
      return;
    }
    // Show or hide the subtree, leaving hidden what lies under a closed directory inside it.
    const items = subtree(li);
    let hideBelow = Infinity;
    for (const n of items) {
      const d = depthOf(n);
      if (d <= hideBelow) hideBelow = Infinity;
      n.hidden = !open || d > hideBelow;
      if (open && n.classList.contains('dir') && n.dataset.open === '' && d < hideBelow) hideBelow = d;
    }
  };

  /** Gives directory li its open/close button and, when partial, its "more" row. @param {HTMLElement} li */
  const wireDir = (li) => {
    if (!li.classList.contains('dir') || li.dataset.wired) return;
    li.dataset.wired = '1';
    const open = li.dataset.state !== 'closed';
    li.dataset.open = open ? '1' : '';
    const zero = li.querySelector('.zero');
    if (zero && li.dataset.path !== '/') {
      const b = doc.createElement('button');
      b.type = 'button';
      b.className = 'small';
      b.dataset.testid = 'tree-toggle';
      b.setAttribute('aria-expanded', String(open));
      b.textContent = open ? 'close' : 'open';
      b.addEventListener('click', () => toggle(li, li.dataset.open !== '1'));
      zero.append(b);
    }
    const icon = li.querySelector('.icon');
    if (icon) icon.textContent = open ? '▾' : '▸';
    if (li.dataset.state === 'partial') {
      const rest = subtree(li);
      setMore(li, true, rest.length ? rest[rest.length - 1] : li);
    }
  };

  for (const li of /** @type {NodeListOf<HTMLElement>} */ (ul.querySelectorAll('li.dir'))) wireDir(li);
}

/**
 * Fetches a page of the /dir API.
 * @param {string} url
 * @returns {Promise<DirPage>}
 */
async function fetchPage(url) {
  const r = await fetch(url);
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}
