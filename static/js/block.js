// The block inspector page: builds the hex dump from the page's data-hex
// and ties it to the list of decoded fields. Hovering or focusing a field
// highlights its bytes; hovering a byte (or moving over it with the arrow
// keys while the dump has focus) highlights the field that holds it. Enter
// on a byte follows its field's link; a click focuses the field's button.

const COLS = 16;

/**
 * Scrolls box (a scrolling container) so that el is in view, without
 * scrolling the page: the mouse stays over what it was over.
 * @param {HTMLElement|null} box
 * @param {HTMLElement} el
 */
function reveal(box, el) {
  if (!box) return;
  const r = el.getBoundingClientRect();
  const b = box.getBoundingClientRect();
  if (r.top >= b.top && r.bottom <= b.bottom) return;
  box.scrollTop += r.top - b.top - (b.height - r.height) / 2;
}

/**
 * @typedef {{i: number, off: number, size: number, name: string, row: HTMLElement,
 *   button: HTMLButtonElement, link: HTMLAnchorElement|null, value: string}} FieldInfo
 */

/**
 * Wires the page.
 * @param {Document} doc
 */
export function initBlock(doc) {
  const dump = /** @type {HTMLElement|null} */ (doc.getElementById('hexdump'));
  /** @type {FieldInfo[]} */
  const fields = [...doc.querySelectorAll('tr[data-testid="field"]')].map((el) => {
    const row = /** @type {HTMLElement} */ (el);
    return {
      i: Number(row.dataset.i),
      off: Number(row.dataset.offset),
      size: Number(row.dataset.size),
      name: row.dataset.name || '',
      row,
      button: /** @type {HTMLButtonElement} */ (row.querySelector('button.fld')),
      link: row.querySelector('a.fld-link'),
      value: (row.querySelector('td.val')?.firstChild?.textContent || '').trim(),
    };
  });
  if (!dump) return;
  const hex = dump.dataset.hex || '';
  const n = hex.length >> 1;
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) bytes[i] = parseInt(hex.substr(2 * i, 2), 16);

  // Which field holds each byte: the smallest one wins, so a slot inside a
  // larger area reads as the slot.
  const owner = new Int32Array(n).fill(-1);
  [...fields].sort((a, b) => b.size - a.size).forEach((f) => {
    for (let o = f.off; o < Math.min(n, f.off + f.size); o++) owner[o] = f.i;
  });
  // Bytes a problem names: the whole field that starts there, or the byte.
  const bad = new Set();
  doc.querySelectorAll('[data-testid="block-problem"]').forEach((p) => {
    for (const s of (/** @type {HTMLElement} */ (p).dataset.offsets || '').split(' ')) {
      if (s === '') continue;
      const o = Number(s);
      const f = o < n && owner[o] >= 0 ? fields[owner[o]] : null;
      if (f) for (let k = f.off; k < Math.min(n, f.off + f.size); k++) bad.add(k);
      else bad.add(o);
    }
  });

  /** @type {HTMLElement[]} */
  const hx = new Array(n);
  /** @type {HTMLElement[]} */
  const asc = new Array(n);
  const frag = doc.createDocumentFragment();
  for (let r = 0; r < n; r += COLS) {
    const row = doc.createElement('div');
    row.className = 'hx-row';
    const off = doc.createElement('span');
    off.className = 'hx-off';
    off.textContent = r.toString(16).padStart(4, '0');
    row.append(off);
    const hb = doc.createElement('span');
    hb.className = 'hx-bytes';
    const ab = doc.createElement('span');
    ab.className = 'hx-ascii';
    for (let c = 0; c < COLS && r + c < n; c++) {
      const o = r + c;
      const b = doc.createElement('span');
      const a = doc.createElement('span');
      b.textContent = hex.substr(2 * o, 2);
      const ch = bytes[o];
      a.textContent = ch >= 0x20 && ch < 0x7f ? String.fromCharCode(ch) : '.';
      b.dataset.o = a.dataset.o = String(o);
      let cls = owner[o] >= 0 ? `f f${owner[o] % 2}` : '';
      if (ch === 0) cls += ' z';
      if (bad.has(o)) cls += ' bad';
      b.className = `b ${cls}`;
      a.className = `a ${cls}`;
      hx[o] = b;
      asc[o] = a;
      hb.append(b);
      ab.append(a);
    }
    row.append(hb, ab);
    frag.append(row);
  }
  dump.replaceChildren(frag);

  const status = doc.getElementById('hexstatus');
  const list = /** @type {HTMLElement|null} */ (doc.querySelector('.fields-scroll'));
  /** @type {FieldInfo|null} */
  let lit = null;
  /** @type {FieldInfo|null} the field whose button has focus */
  let focused = null;
  let cursor = -1;

  /** @param {FieldInfo|null} f */
  const light = (f) => {
    if (lit === f) return;
    if (lit) {
      lit.row.classList.remove('hl');
      for (let o = lit.off; o < Math.min(n, lit.off + lit.size); o++) {
        hx[o].classList.remove('hl');
        asc[o].classList.remove('hl');
      }
    }
    lit = f;
    dump.dataset.lit = f ? String(f.i) : '';
    if (!f) return;
    f.row.classList.add('hl');
    for (let o = f.off; o < Math.min(n, f.off + f.size); o++) {
      hx[o].classList.add('hl');
      asc[o].classList.add('hl');
    }
  };

  // When the mouse leaves, the keyboard's field comes back: the focused
  // button's, else the one under the dump's cursor while the dump has focus.
  const restore = () => {
    if (focused) light(focused);
    else if (cursor >= 0 && doc.activeElement === dump) light(owner[cursor] >= 0 ? fields[owner[cursor]] : null);
    else light(null);
  };

  /** @param {number} o */
  const describe = (o) => {
    if (!status) return;
    const f = owner[o] >= 0 ? fields[owner[o]] : null;
    const where = `byte 0x${o.toString(16).padStart(3, '0')} = 0x${hex.substr(2 * o, 2)}`;
    status.textContent = f ? `${where} · ${f.name}: ${f.value}` : `${where} · no decoded field`;
  };

  /** @param {number} o */
  const moveCursor = (o) => {
    if (cursor >= 0) {
      hx[cursor].classList.remove('cur');
      asc[cursor].classList.remove('cur');
    }
    cursor = Math.max(0, Math.min(n - 1, o));
    hx[cursor].classList.add('cur');
    asc[cursor].classList.add('cur');
    dump.dataset.cursor = String(cursor);
    reveal(dump, hx[cursor]);
    light(owner[cursor] >= 0 ? fields[owner[cursor]] : null);
    describe(cursor);
  };

  for (const f of fields) {
    const on = () => {
      light(f);
      if (status) status.textContent = `${f.name} · bytes 0x${f.off.toString(16)}–0x${(f.off + Math.max(f.size, 1) - 1).toString(16)} · ${f.value}`;
    };
    f.button.addEventListener('mouseenter', on);
    f.button.addEventListener('focus', () => {
      focused = f;
      on();
      // Keyboard users see the bytes: bring the field's first row into view.
      if (f.size > 0 && f.off < n) reveal(dump, hx[f.off]);
    });
    f.button.addEventListener('mouseleave', restore);
    f.button.addEventListener('blur', () => {
      focused = null;
      restore();
    });
    f.button.addEventListener('click', () => {
      if (f.size > 0 && f.off < n) {
        dump.focus({ preventScroll: true });
        moveCursor(f.off);
      }
    });
  }

  dump.addEventListener('mouseover', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (!t.dataset || t.dataset.o === undefined) return;
    const o = Number(t.dataset.o);
    light(owner[o] >= 0 ? fields[owner[o]] : null);
    if (lit) reveal(list, lit.row);
    describe(o);
  });
  dump.addEventListener('mouseleave', restore);
  dump.addEventListener('click', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (!t.dataset || t.dataset.o === undefined) return;
    const o = Number(t.dataset.o);
    moveCursor(o);
    const f = owner[o] >= 0 ? fields[owner[o]] : null;
    if (f) reveal(list, f.row);
  });
  dump.addEventListener('focus', () => {
    if (cursor < 0) moveCursor(0);
  });
  dump.addEventListener('keydown', (e) => {
    const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -COLS, ArrowDown: COLS, PageUp: -COLS * 16, PageDown: COLS * 16 }[e.key];
    if (step !== undefined) {
      moveCursor((cursor < 0 ? 0 : cursor) + step);
      e.preventDefault();
    } else if (e.key === 'Home') {
      moveCursor(0);
      e.preventDefault();
    } else if (e.key === 'End') {
      moveCursor(n - 1);
      e.preventDefault();
    } else if (e.key === 'Enter' && cursor >= 0) {
      const f = owner[cursor] >= 0 ? fields[owner[cursor]] : null;
      if (f && f.link) f.link.click();
      else if (f) f.button.focus();
      e.preventDefault();
    }
  });

  // #off=N (decimal or 0x) starts with that byte under the cursor.
  const m = /^#off=(0x[0-9a-f]+|\d+)$/i.exec(location.hash);
  if (m) {
    const o = Number(m[1]);
    if (o < n) moveCursor(o);
  }
}

initBlock(document);
