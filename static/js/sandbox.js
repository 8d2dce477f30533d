// The sandbox page: a slot list typed by hand, run in both modes by
// POST /api/sandbox, shown side by side; the generator buttons fill the
// text box with the usual lessons.
import { int } from './fmt.js';
import { contract } from './contract.js';

const { perBlock: PER_BLOCK, batched: BATCHED, both: BOTH } = contract().modes;

/** Calls listed per mode (the API sends at most 10,000). */
const SHOW_CALLS = 200;

/**
 * Wires the sandbox page.
 * @param {Document} doc
 */
export function initSandbox(doc) {
  const root = /** @type {HTMLElement} */ (doc.getElementById('sandbox'));
  const form = /** @type {HTMLFormElement} */ (doc.getElementById('sb-form'));
  const box = /** @type {HTMLTextAreaElement} */ (doc.getElementById('slots'));
  if (!root || !form || !box) return;
  const maxPermalink = Number(root.dataset.maxPermalink || 8192);
  const maxInput = Number(root.dataset.maxInput || 1048576);
  const el = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  let seq = 0;

  const run = async () => {
    const slots = box.value;
    const err = el('sb-error');
    err.hidden = true;
    if (new TextEncoder().encode(slots).length > maxInput) {
      showError(err, `The list is longer than ${int(maxInput)} bytes, the most the server reads.`);
      return;
    }
    const my = ++seq;
    el('sb-run').setAttribute('aria-busy', 'true');
    try {
      const res = await fetch('/api/sandbox', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ slots, mode: BOTH }),
      });
      const body = await res.json();
      if (my !== seq) return; // a newer run is on its way
      if (!res.ok) {
        showError(err, body.error || `HTTP ${res.status}`);
        if (typeof body.pos === 'number' && body.index > 0) {
          // Select the offending token (the list before it is ASCII, so byte
          // offsets are character offsets).
          box.focus();
          box.setSelectionRange(body.pos, body.pos + (body.token || '').replace(/…$/, '').length);
        }
        return;
      }
      show(doc, body, maxPermalink, lesson);
    } catch (e) {
      if (my === seq) showError(err, `The server did not answer: ${e instanceof Error ? e.message : e}`);
    } finally {
      if (my === seq) el('sb-run').removeAttribute('aria-busy');
    }
  };

  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); }
  });
  let lesson = '';
  box.addEventListener('input', () => { lesson = ''; });
  for (const b of doc.querySelectorAll('[data-testid="sandbox-gen"]')) {
    const btn = /** @type {HTMLElement} */ (b);
    btn.addEventListener('click', () => {
      box.value = btn.dataset.slots || '';
      lesson = `${btn.textContent}: ${btn.dataset.lesson || ''}`;
      run();
    });
  }
  if (box.value.trim() !== '') run();
}

/**
 * Shows an error message, and hides the results of the list before: under an error they would
 * read as this list's, and their permalink would share the old one.
 * @param {HTMLElement} err
 * @param {string} text
 */
function showError(err, text) {
  err.textContent = text;
  err.hidden = false;
  const out = err.ownerDocument.getElementById('sb-out');
  if (out) out.hidden = true;
}

/**
 * Renders an answer of POST /api/sandbox.
 * @param {Document} doc
 * @param {any} body
 * @param {number} maxPermalink
 * @param {string} lesson what the list teaches, when a lesson button made it
 */
function show(doc, body, maxPermalink, lesson) {
  const el = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const out = el('sb-out');
  const first = out.hidden;
  out.hidden = false;
  el('sb-lesson').textContent = lesson;
  // Bring the result into view when it first appears (keep the scroll position after that).
  if (first) out.scrollIntoView({ block: 'nearest' });
  const lay = body.layout || [];
  const pad = lay.reduce((n, g) => n + g.pad, 0);
  const slots = lay.reduce((n, g) => n + g.len, 0);
  let text = `${int(slots)} slots from file block ${int(lay[0]?.index ?? 0)}, zeroed as fallocate(ZERO_RANGE, offset ${int(body.offset)}, length ${int(body.length)})`;
  if (lay.length > 1) {
    text += `; ${lay.length} groups, each after | at the start of a dnode (${int(pad)} NEW padding slots, which change no call)`;
  }
  el('sb-layout').textContent = `${text}.`;

  const player = /** @type {HTMLAnchorElement} */ (el('sb-player'));
  const link = /** @type {HTMLAnchorElement} */ (el('sb-permalink'));
  const tooLong = el('sb-toolong');
  if (body.permalink) {
    player.href = body.player;
    link.href = body.page;
    player.hidden = link.hidden = false;
    tooLong.hidden = true;
  } else {
    player.hidden = link.hidden = true;
    tooLong.hidden = false;
    tooLong.textContent = `This list is ${int(body.slots.length)} bytes written canonically, more than the ${int(maxPermalink)} a permalink carries: it runs here, but it cannot be opened in the player or shared as a link. Write contiguous addresses as ranges (A-B) and repeats as NEW*K to shorten it.`;
  }

  const by = Object.fromEntries((body.results || []).map((r) => [r.mode, r]));
  const pb = by[PER_BLOCK], b = by[BATCHED];
  const rows = [
    ['result', (r) => (r.errno || 'OK'), 'errno'],
    ['f2fs_invalidate_blocks calls', (r) => int(r.stats.calls), 'calls'],
    ['SIT lock acquisitions', (r) => int(r.stats.sitLockAcquisitions), 'locks'],
    ['blocks invalidated', (r) => int(r.stats.blocksInvalidated), 'blocks'],
    ['slots visited (addr/new/null)', (r) => `${int(r.stats.slotsAddr)}/${int(r.stats.slotsNew)}/${int(r.stats.slotsNull)}`, 'slots'],
    ['reserved NULL → NEW', (r) => int(r.stats.reserved), 'reserved'],
    ['dnode chunks', (r) => int(r.stats.dnodeChunks), 'chunks'],
    ['segments touched / became prefree', (r) => `${int(r.stats.segmentsTouched)} / ${int(r.stats.segmentsPrefree)}`, 'segments'],
  ];
  const tbody = el('sb-stats');
  tbody.replaceChildren(...rows.map(([label, f, key]) => {
    const tr = doc.createElement('tr');
    const th = doc.createElement('th');
    th.scope = 'row';
    th.textContent = /** @type {string} */ (label);
    tr.append(th);
    for (const [mode, r] of [[PER_BLOCK, pb], [BATCHED, b]]) {
      const td = doc.createElement('td');
      td.className = 'num';
      td.dataset.testid = `sb-${key}-${mode}`;
      td.textContent = r ? /** @type {(r: any) => string} */ (f)(r) : '–';
      tr.append(td);
    }
    return tr;
  }));
  for (const [mode, r] of [[PER_BLOCK, pb], [BATCHED, b]]) {
    const ol = el(`sb-calls-${mode}`);
    const items = [];
    for (const [start, len] of (r?.calls || []).slice(0, SHOW_CALLS)) {
      const li = doc.createElement('li');
      li.textContent = `f2fs_invalidate_blocks(${start}, ${len})`;
      items.push(li);
    }
    const more = (r?.stats.calls || 0) - items.length;
    if (more > 0) {
      const li = doc.createElement('li');
      li.className = 'more';
      li.textContent = `… ${int(more)} more`;
      items.push(li);
    }
    if (r?.message) {
      const li = doc.createElement('li');
      li.className = 'err';
      li.textContent = `${r.errno}: ${r.message}`;
      items.push(li);
    } else if (r?.errno) {
      const li = doc.createElement('li');
      li.className = 'err';
      li.textContent = r.errno;
      items.push(li);
    }
    ol.replaceChildren(...items);
  }
}

initSandbox(document);
