// Open an image from this computer, in the static site: the page hands the File the user picked or
// dropped to the site's service worker, which reads it where it lies (Blob.slice, a piece at a time,
// cmd/zrviz-wasm/local.go) and answers with the image's id, "local-" and its content fingerprint.
// The file never leaves the browser. The helpers are pure so that node --test checks them; the
// wiring at the end runs only in a page.
import { bytes } from './fmt.js';
import { imagePage } from './links.js';

/** How many leading bytes the format is told from (imgio.HeaderSize). */
export const HEADER_SIZE = 4096;

/**
 * The container format of an image from its first bytes, as imgio.DetectFormat tells it: gzip, xz,
 * zstd (possibly after skippable frames), Android sparse, else raw.
 * @param {Uint8Array} b up to HEADER_SIZE leading bytes
 * @returns {'raw'|'gzip'|'xz'|'zstd'|'android-sparse'}
 */
export function detectFormat(b) {
  const starts = (/** @type {number[]} */ m, at = 0) => b.length >= at + m.length && m.every((v, i) => b[at + i] === v);
  if (starts([0x1f, 0x8b])) return 'gzip';
  if (starts([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) return 'xz';
  if (starts([0x3a, 0xff, 0x26, 0xed])) return 'android-sparse';
  // zstd: a frame (28 b5 2f fd), possibly after skippable frames (5? 2a 4d 18, then a 4-byte length).
  let at = 0;
  let skipped = false;
  for (;;) {
    if (starts([0x28, 0xb5, 0x2f, 0xfd], at)) return 'zstd';
    const rest = b.length - at;
    if (rest < 4 || (b[at] & 0xf0) !== 0x50 || b[at + 1] !== 0x2a || b[at + 2] !== 0x4d || b[at + 3] !== 0x18) {
      return skipped && rest === 0 ? 'zstd' : 'raw';
    }
    if (rest < 8) return 'zstd';
    const n = (b[at + 4] | (b[at + 5] << 8) | (b[at + 6] << 16)) + b[at + 7] * 2 ** 24;
    if (n > rest - 8) return 'zstd';
    at += 8 + n;
    skipped = true;
  }
}

/**
 * How the worker reads a format: in place, or unpacked into memory.
 * @param {string} format
 * @returns {string}
 */
export function formatNote(format) {
  switch (format) {
    case 'raw': return 'read in place, a piece at a time';
    case 'android-sparse': return 'read in place through its chunk table';
    default: return `unpacked in this browser (${format}): its non-zero blocks are kept in memory`;
  }
}

/**
 * The progress line shown while a file opens: its name, size, format and how it is read.
 * @param {string} name
 * @param {number} size bytes
 * @param {string} format as detectFormat names it
 * @returns {string}
 */
export function openingMessage(name, size, format) {
  return `Opening ${name} (${bytes(size)}, ${format}): ${formatNote(format)}…`;
}

/**
 * The file a drop or a picker offers, or why none can be opened.
 * @param {ArrayLike<{name: string, size: number}>|null|undefined} files
 * @returns {{file: any, error?: undefined}|{file?: undefined, error: string}}
 */
export function pickFile(files) {
  const n = files?.length ?? 0;
  if (n === 0) return { error: 'No file was dropped: drop one F2FS image file (a folder cannot be opened).' };
  if (n > 1) return { error: `Drop one image at a time: ${n} files were dropped.` };
  const file = files?.[0];
  if (!file) return { error: 'No file was dropped.' };
  if (file.size === 0) return { error: `${file.name} is empty (0 bytes): not an F2FS image.` };
  return { file };
}

/**
 * What to do once a file opened under gotID on a permalink to wantID: reload when they are the
 * same image, else say that the file is another one.
 * @param {string} wantID the permalink's id, "local-" and a fingerprint
 * @param {string} gotID the opened file's id
 * @returns {{reload: boolean, text: string}}
 */
export function reopenOutcome(wantID, gotID) {
  if (wantID === gotID) return { reload: true, text: 'The same file: reloading this page with it…' };
  const fp = (/** @type {string} */ id) => id.replace(/^local-/, '');
  return {
    reload: false,
    text: `That is a different file (fingerprint ${fp(gotID)}); this permalink names the one with fingerprint ${fp(wantID)}.`,
  };
}

/**
 * Hands file to the site's service worker and waits for its answer (static/site/sw.js, message
 * 'zrviz-open', answered on the MessagePort sent with it).
 * @param {Blob} file
 * @param {{controller: {postMessage(msg: any, transfer: any[]): void}|null}|undefined} container
 *   navigator.serviceWorker
 * @param {typeof MessageChannel} [Channel]
 * @returns {Promise<{id: string, name: string}>}
 */
export function openInWorker(file, container, Channel = globalThis.MessageChannel) {
  const sw = container?.controller;
  if (!sw) {
    return Promise.reject(new Error('The site\'s service worker is not running, so the file cannot be read: reload the page.'));
  }
  return new Promise((resolve, reject) => {
    const ch = new Channel();
    ch.port1.onmessage = (/** @type {MessageEvent} */ e) => {
      ch.port1.close();
      const m = e.data || {};
      if (m.ok) resolve({ id: String(m.id), name: String(m.name) });
      else reject(new Error(String(m.error || 'the worker could not open the file')));
    };
    sw.postMessage({ type: 'zrviz-open', file }, [ch.port2]);
  });
}

/**
 * Wires "open an image from this computer" (templates/local.templ localOpen): the button opens the
 * picker, a drop or a pick opens the file through open, progress and errors go to the live region.
 * @param {Document} doc
 * @param {{open: (file: File) => Promise<{id: string, name: string}>,
 *          opened: (img: {id: string, name: string}, say: (kind: 'ok'|'error', text: string, link?: {href: string, text: string}) => void) => void}} how
 */
export function initLocalOpen(doc, how) {
  const zone = doc.getElementById('local-zone');
  const input = /** @type {HTMLInputElement|null} */ (doc.getElementById('local-input'));
  const msg = doc.getElementById('local-msg');
  if (!zone || !input || !msg) return;
  let busy = false;
  /** @type {(kind: 'ok'|'error'|'', text: string, link?: {href: string, text: string}) => void} */
  const say = (kind, text, link) => {
    msg.className = `msg live ${kind}`;
    msg.textContent = text;
    if (link) {
      const a = doc.createElement('a');
      a.href = link.href;
      a.textContent = link.text;
      a.dataset.testid = 'local-link';
      msg.append(' ', a);
    }
  };
  const start = async (/** @type {ArrayLike<File>|null|undefined} */ files) => {
    if (busy) return;
    const pick = pickFile(files);
    if (!pick.file) {
      say('error', pick.error || '');
      return;
    }
    const file = pick.file;
    busy = true;
    zone.setAttribute('aria-busy', 'true');
    try {
      const head = new Uint8Array(await file.slice(0, HEADER_SIZE).arrayBuffer());
      say('', openingMessage(file.name, file.size, detectFormat(head)));
      const img = await how.open(file);
      how.opened(img, say);
    } catch (err) {
      say('error', `Could not open ${file.name}: ${String(/** @type {Error} */ (err)?.message || err)}`);
    } finally {
      busy = false;
      zone.removeAttribute('aria-busy');
      input.value = '';
    }
  };
  doc.getElementById('local-choose')?.addEventListener('click', () => input.click());
  input.addEventListener('change', () => start(input.files));
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    start(/** @type {DragEvent} */ (e).dataTransfer?.files);
  });
  // A file picked while this module was still loading (the worker serves it, which takes a moment
  // on a cold start) fired its change event before the listener: open it now.
  if (input.files?.length) start(input.files);
}

/**
 * Wires the page of a permalink to a local image the worker does not hold (templates/local.templ
 * LocalMissing): once the same file is open again, the permalink reloads.
 * @param {Document} doc
 * @param {{reload(): void}} loc window.location
 * @param {(file: File) => Promise<{id: string, name: string}>} open
 */
export function initLocalMissing(doc, loc, open) {
  const want = doc.getElementById('local-missing')?.dataset.id || '';
  initLocalOpen(doc, {
    open,
    opened(img, say) {
      const o = reopenOutcome(want, img.id);
      if (o.reload) {
        say('ok', o.text);
        loc.reload();
        return;
      }
      say('error', `${o.text} It is open now as`, { href: imagePage(img.id), text: img.id });
    },
  });
}

if (globalThis.document?.getElementById('local-missing')) {
  initLocalMissing(document, location, (file) => openInWorker(file, navigator.serviceWorker));
}
