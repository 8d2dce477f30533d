// The images page: drag-and-drop or picker upload with a progress bar
// that covers both the transfer and the server's expansion of the image. In the static site there
// is no server to upload to: the page opens an image from this computer instead (localimage.js).
import { bytes, approxBytes } from './fmt.js';
import { imagePage, apiImage, uploadURL, uploadProgressURL } from './links.js';
import { isStatic } from './contract.js';
import { initLocalOpen, openInWorker } from './localimage.js';

const POLL_MS = 250;

/**
 * Wires the upload area of the images page.
 * @param {Document} doc
 */
export function initImages(doc) {
  if (isStatic()) {
    initLocal(doc);
    return;
  }
  const zone = /** @type {HTMLElement} */ (doc.getElementById('dropzone'));
  const input = /** @type {HTMLInputElement} */ (doc.getElementById('file-input'));
  if (!zone || !input) return;
  const maxUpload = Number(zone.dataset.maxUpload || 0);
  const ui = {
    box: /** @type {HTMLElement} */ (doc.getElementById('progress')),
    label: /** @type {HTMLElement} */ (doc.getElementById('progress-label')),
    bar: /** @type {HTMLElement} */ (doc.getElementById('progress-bar')),
    msg: /** @type {HTMLElement} */ (doc.getElementById('upload-msg')),
  };
  let busy = false;

  const start = (/** @type {File|undefined} */ file) => {
    if (!file || busy) return;
    if (maxUpload > 0 && file.size > maxUpload) {
      message(ui, 'error', `${file.name} is ${bytes(file.size)}; the server takes at most ${bytes(maxUpload)} (zrviz serve --max-upload).`);
      return;
    }
    busy = true;
    upload(file, ui)
      .then((img) => {
        addRow(doc, img);
        message(ui, 'ok', '', img);
      })
      .catch((err) => message(ui, 'error', String(err.message || err)))
      .finally(() => { busy = false; input.value = ''; });
  };

  initDelete(doc);
  // The picker opens from a real button, so Tab reaches it and Enter or Space opens it (a label
  // for a hidden input takes no focus).
  doc.getElementById('choose-file')?.addEventListener('click', () => input.click());
  input.addEventListener('change', () => start(input.files?.[0]));
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    start(e.dataTransfer?.files?.[0]);
  });
}

/**
 * Wires "open an image from this computer" (the static site): the worker opens the file, and its
 * row joins the list as the worker's /api/images describes it.
 * @param {Document} doc
 */
function initLocal(doc) {
  initLocalOpen(doc, {
    open: (file) => openInWorker(file, navigator.serviceWorker),
    async opened(img, say) {
      say('ok', `Opened ${img.name} as`, { href: imagePage(img.id), text: img.id });
      /** @type {{id: string, name: string, size: number, format: string, added: string}} */
      let info = { ...img, size: 0, format: '', added: '' };
      try {
        const r = await fetch('/api/images');
        const all = r.ok ? await r.json() : [];
        info = all.find((/** @type {{id: string}} */ x) => x.id === img.id) || info;
      } catch { /* the row shows what the worker's answer holds */ }
      addRow(doc, info, true);
    },
  });
}

/**
 * Shows the outcome of an upload.
 * @param {{msg: HTMLElement}} ui
 * @param {'ok'|'error'} kind
 * @param {string} text
 * @param {{id: string, name: string}} [img]
 */
function message(ui, kind, text, img) {
  ui.msg.hidden = false;
  ui.msg.className = `msg ${kind}`;
  ui.msg.textContent = '';
  if (img) {
    ui.msg.append(`Loaded ${img.name} as `);
    const a = document.createElement('a');
    a.href = imagePage(img.id);
    a.textContent = img.id;
    a.dataset.testid = 'upload-link';
    ui.msg.append(a, '.');
  } else {
    ui.msg.textContent = text;
  }
}

/**
 * Sets the progress bar: a fraction 0..1, or null for indeterminate.
 * @param {{box: HTMLElement, label: HTMLElement, bar: HTMLElement}} ui
 * @param {string} label
 * @param {number|null} frac
 */
function progress(ui, label, frac) {
  ui.box.hidden = false;
  ui.label.textContent = label;
  ui.bar.classList.toggle('indeterminate', frac === null);
  const inner = /** @type {HTMLElement} */ (ui.bar.firstElementChild);
  inner.style.width = frac === null ? '100%' : `${Math.round(frac * 100)}%`;
}

/**
 * Uploads file as the raw request body and follows the server-side phases
 * (expanding, opening) by polling the upload's token.
 * @param {File} file
 * @param {{box: HTMLElement, label: HTMLElement, bar: HTMLElement, msg: HTMLElement}} ui
 * @returns {Promise<{id: string, name: string, size: number, format: string, added: string}>}
 */
function upload(file, ui) {
  ui.msg.hidden = true;
  const token = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
  const url = uploadURL(token, file.name);
  progress(ui, `Uploading ${file.name} (${bytes(file.size)})…`, 0);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    let sent = false;
    let timer = 0;
    const poll = async () => {
      try {
        const r = await fetch(uploadProgressURL(token));
        if (r.ok) {
          const p = await r.json();
          if (p.phase === 'expanding' || p.phase === 'opening') {
            const total = p.total > 0 ? p.total : 0;
            const what = p.phase === 'expanding' ? `Expanding (${p.format || 'compressed'})` : 'Opening the image';
            progress(ui, `${what}: ${approxBytes(p.written || 0)}${total ? ` of ${approxBytes(total)}` : ''} written…`,
              total ? Math.min(1, (p.written || 0) / total) : null);
          }
        }
      } catch { /* the final response settles the promise */ }
      if (sent) timer = window.setTimeout(poll, POLL_MS);
    };
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) {
        progress(ui, `Uploading ${file.name}: ${approxBytes(e.loaded)} of ${approxBytes(e.total)}`, e.loaded / e.total);
      }
    });
    xhr.upload.addEventListener('load', () => {
      sent = true;
      progress(ui, 'Expanding and opening on the server…', null);
      poll();
    });
    xhr.addEventListener('load', () => {
      sent = false;
      clearTimeout(timer);
      ui.box.hidden = true;
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* handled below */ }
      if (xhr.status === 200 || xhr.status === 201) {
        resolve(body);
      } else if (xhr.status === 413) {
        reject(new Error(body?.error || `Refused: ${file.name} is over the server's upload limit.`));
      } else {
        reject(new Error(`Refused (${xhr.status}): ${body?.error || xhr.statusText}`));
      }
    });
    xhr.addEventListener('error', () => {
      sent = false;
      clearTimeout(timer);
      ui.box.hidden = true;
      reject(new Error('The upload failed: the connection was closed (is the file over the limit?).'));
    });
    xhr.open('POST', url);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.send(file);
  });
}

/**
 * Formats an upload time as the server renders it: "2006-01-02 15:04:05 UTC".
 * @param {string} iso RFC 3339 time
 * @returns {string}
 */
function utc(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/**
 * Adds (or keeps) the uploaded image's row in the list.
 * @param {Document} doc
 * @param {{id: string, name: string, size: number, format: string, added: string}} img
 * @param {boolean} [local] opened from this computer (the static site): no time, no delete
 */
function addRow(doc, img, local = false) {
  const tbody = doc.getElementById('image-rows');
  if (!tbody || tbody.querySelector(`tr[data-id="${CSS.escape(img.id)}"]`)) return;
  const tr = doc.createElement('tr');
  tr.dataset.testid = 'image-item';
  tr.dataset.id = img.id;
  const href = imagePage(img.id);
  const cells = [
    () => { const a = doc.createElement('a'); a.href = href; a.textContent = img.name; a.dataset.testid = 'image-link'; return a; },
    () => img.id, () => img.format, () => (img.size ? bytes(img.size) : '–'),
    () => {
      if (local) {
        const m = doc.createElement('span');
        m.className = 'muted';
        m.textContent = 'this computer';
        return m;
      }
      const t = doc.createElement('time');
      t.dateTime = img.added;
      t.dataset.testid = 'image-added';
      t.textContent = utc(img.added);
      return t;
    },
    () => { const a = doc.createElement('a'); a.href = href; a.textContent = 'inspect ▸'; return a; },
    () => (local ? '' : deleteButton(doc, img)),
  ];
  const cls = ['', 'mono', '', 'num', 'small', 'small', 'small'];
  cells.forEach((mk, i) => {
    const td = doc.createElement('td');
    if (cls[i]) td.className = cls[i];
    td.append(mk());
    tr.append(td);
  });
  tbody.append(tr);
}

/**
 * Makes the delete button of an uploaded image's row (the same as the server renders).
 * @param {Document} doc
 * @param {{id: string, name: string}} img
 * @returns {HTMLButtonElement}
 */
function deleteButton(doc, img) {
  const b = doc.createElement('button');
  b.type = 'button';
  b.className = 'danger small';
  b.dataset.testid = 'image-delete';
  b.dataset.id = img.id;
  b.dataset.name = img.name;
  b.setAttribute('aria-label', `Delete ${img.name}`);
  b.textContent = 'Delete';
  return b;
}

/** How long a delete button waits for the confirming second press. */
const CONFIRM_MS = 5000;

/**
 * Wires the delete buttons (one listener for the whole list, so rows added after an upload work
 * too). The first press asks for confirmation on the button itself; a second press within
 * CONFIRM_MS sends DELETE /api/images/{id} and removes the row.
 * @param {Document} doc
 */
function initDelete(doc) {
  const tbody = doc.getElementById('image-rows');
  const msg = /** @type {HTMLElement|null} */ (doc.getElementById('images-msg'));
  if (!tbody || !msg) return;
  const say = (/** @type {'ok'|'error'} */ kind, /** @type {string} */ text) => {
    msg.hidden = false;
    msg.className = `msg ${kind}`;
    msg.textContent = text;
  };
  tbody.addEventListener('click', async (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest('button[data-testid="image-delete"]');
    if (!(b instanceof HTMLButtonElement) || b.disabled) return;
    const { id = '', name = id } = b.dataset;
    if (b.dataset.armed !== '1') {
      b.dataset.armed = '1';
      b.textContent = 'Confirm delete';
      b.setAttribute('aria-label', `Press again to delete ${name}`);
      say('ok', `Press "Confirm delete" again to delete ${name}; links to it will stop working.`);
      window.setTimeout(() => {
        if (!b.isConnected || b.disabled) return;
        b.dataset.armed = '';
        b.textContent = 'Delete';
        b.setAttribute('aria-label', `Delete ${name}`);
      }, CONFIRM_MS);
      return;
    }
    b.disabled = true;
    try {
      const r = await fetch(apiImage(id), { method: 'DELETE' });
      if (r.status === 204 || r.status === 404) {
        const row = b.closest('tr');
        const next = row?.nextElementSibling?.querySelector('button, a') || doc.getElementById('choose-file');
        row?.remove();
        say('ok', `Deleted ${name}.`);
        if (next instanceof HTMLElement) next.focus();
        return;
      }
      let body = null;
      try { body = await r.json(); } catch { /* shown by status */ }
      say('error', `Could not delete ${name} (${r.status}): ${body?.error || r.statusText}`);
    } catch (err) {
      say('error', `Could not delete ${name}: ${String(err)}`);
    }
    b.disabled = false;
    b.dataset.armed = '';
    b.textContent = 'Delete';
  });
}

initImages(document);
