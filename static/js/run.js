// The player page: wires the websocket, the model and the canvases to the
// controls, the keyboard and the URL.
import { RunSocket } from './ws.js';
import { RunState, NULL_ADDR, NEW_ADDR, COMPRESS_ADDR } from './state.js';
import { SlotsView, SITView, drawMarkers } from './render.js';
import { CanvasFit, Tooltip } from './canvas.js';
import { int, rate } from './fmt.js';

/** Play speeds the speed slider and [ ] step through (steps per second). */
const SPEEDS = [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000,
  20000, 50000, 100000, 200000, 500000, 1000000];

/** Modes in the order the b key cycles through them. */
const MODE_CYCLE = ['per-block', 'batched', 'both'];

/** Draw times kept for the p95. */
const FRAME_SAMPLES = 240;

/**
 * Measures draw times and reports their 95th percentile.
 */
export class FrameMeter {
  constructor() {
    /** @type {number[]} */
    this.samples = [];
  }

  /** @param {number} ms */
  add(ms) {
    this.samples.push(ms);
    if (this.samples.length > FRAME_SAMPLES) this.samples.shift();
  }

  /** @returns {number} the 95th percentile of the kept draw times, ms */
  p95() {
    if (!this.samples.length) return 0;
    const s = [...this.samples].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))];
  }
}

/**
 * Starts the player on the page.
 * @param {Document} doc
 */
export function initRun(doc) {
  const root = /** @type {HTMLElement|null} */ (doc.getElementById('player'));
  if (!root) return;
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const ds = root.dataset;
  // Offsets and lengths stay decimal strings: Number() would round 2^63−1.
  const params = {
    image: ds.image || '', path: ds.path || '', offset: ds.offset || '0', length: ds.length || '',
    mode: ds.mode || 'both', keepSize: ds.keepSize === 'true', step: Number(ds.step || 0),
    before: /** @type {string[]} */ (JSON.parse(ds.before || '[]')), pace: ds.pace || '',
    sandbox: ds.sandbox || '',
  };
  let runEnd = ds.runEnd === 'true';
  const st = new RunState();
  const slotsCanvas = /** @type {HTMLCanvasElement} */ ($('slots'));
  const sitCanvas = /** @type {HTMLCanvasElement} */ ($('sit'));
  const markersCanvas = /** @type {HTMLCanvasElement} */ ($('markers'));
  const fitSlots = new CanvasFit(slotsCanvas);
  const fitSIT = new CanvasFit(sitCanvas);
  const fitMarkers = new CanvasFit(markersCanvas);
  const slots = new SlotsView(slotsCanvas);
  const sit = new SITView(sitCanvas);
  const meter = new FrameMeter();
  const tip = new Tooltip();
  const seek = /** @type {HTMLInputElement} */ ($('seek'));
  const speed = /** @type {HTMLInputElement} */ ($('speed'));
  const modeSel = /** @type {HTMLSelectElement} */ ($('f-mode'));
  let status = 'connecting';
  let notice = '';
  let noticeTimer = 0;
  let dragging = false;
  let dirty = true;
  let markersDirty = true;

  const sock = new RunSocket(params, {
    hello(h) {
      st.hello(h);
      params.mode = st.mode;
      modeSel.value = st.mode;
      seek.max = String(st.totalSteps);
      $('step-total').textContent = int(st.totalSteps);
      speed.value = String(nearestSpeed(st.stepsPerSecond));
      markersDirty = true;
      slots.pin = null;
      if (runEnd) {
        runEnd = false;
        sock.send({ type: 'end' });
      }
      if (!st.initialComplete) sock.send({ type: 'initial', from: st.initialNext });
      dirty = true;
    },
    other(m) {
      if (m.type === 'initial') {
        st.addInitial(m);
        if (!st.initialComplete) sock.send({ type: 'initial', from: st.initialNext });
        dirty = true;
      }
    },
    frame(f) {
      st.frame(f, performance.now());
      dirty = true;
    },
    error(e) {
      notice = e.error || 'error';
      clearTimeout(noticeTimer);
      if (!e.fatal) noticeTimer = window.setTimeout(() => { notice = ''; dirty = true; }, 4000);
      dirty = true;
    },
    status(s) { status = s; dirty = true; },
  }, () => st.step);
  sock.connect();
  // A closed tab ends its run on the server; a page restored from the
  // back-forward cache opens a new one at the step it showed.
  window.addEventListener('pagehide', () => sock.stop());
  window.addEventListener('pageshow', (e) => { if (e.persisted) sock.resume(); });

  // Controls.
  const send = (/** @type {object} */ m) => { slots.rowScroll = null; sock.send(m); };
  const playPause = () => send({ type: st.playing ? 'pause' : 'play' });
  const setSpeed = (/** @type {number} */ i) => {
    const k = Math.max(0, Math.min(SPEEDS.length - 1, i));
    speed.value = String(k);
    $('speed-out').textContent = rate(SPEEDS[k]);
    sock.send({ type: 'speed', stepsPerSecond: SPEEDS[k] });
  };
  const setMode = (/** @type {string} */ m) => {
    modeSel.value = m;
    params.mode = m;
    sock.send({ type: 'mode', mode: m });
  };
  $('btn-play').addEventListener('click', playPause);
  $('btn-step').addEventListener('click', () => send({ type: 'step', n: 1 }));
  $('btn-back').addEventListener('click', () => send({ type: 'step', n: -1 }));
  $('btn-flush').addEventListener('click', () => send({ type: 'nextCall' }));
  $('btn-end').addEventListener('click', () => send({ type: 'end' }));
  $('btn-reset').addEventListener('click', () => send({ type: 'reset' }));
  speed.addEventListener('input', () => setSpeed(Number(speed.value)));
  modeSel.addEventListener('change', () => setMode(modeSel.value));
  let seekTimer = 0;
  seek.addEventListener('input', () => {
    dragging = true;
    $('step-now').textContent = int(Number(seek.value));
    if (!seekTimer) {
      seekTimer = window.setTimeout(() => { seekTimer = 0; send({ type: 'seek', step: Number(seek.value) }); }, 80);
    }
  });
  seek.addEventListener('change', () => {
    dragging = false;
    send({ type: 'seek', step: Number(seek.value) });
  });
  const preset = /** @type {HTMLSelectElement} */ ($('preset'));
  preset.addEventListener('change', () => {
    if (!preset.value) return;
    const [o, l] = preset.value.split(':');
    /** @type {HTMLInputElement} */ ($('f-offset')).value = o;
    /** @type {HTMLInputElement} */ ($('f-length')).value = l;
    /** @type {HTMLFormElement} */ (preset.form).submit();
  });

  doc.addEventListener('keydown', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (t && (t.tagName === 'SELECT' || (t.tagName === 'INPUT' && /** @type {HTMLInputElement} */ (t).type !== 'range'))) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    let handled = true;
    switch (e.key) {
      case ' ': playPause(); break;
      case 'ArrowRight': send(e.shiftKey ? { type: 'nextCall' } : { type: 'step', n: 1 }); break;
      case 'ArrowLeft': send({ type: 'step', n: -1 }); break;
      case 'Home': send({ type: 'reset' }); break;
      case 'End': send({ type: 'end' }); break;
      case '[': setSpeed(Number(speed.value) - 1); break;
      case ']': setSpeed(Number(speed.value) + 1); break;
      case 'b': case 'B': setMode(MODE_CYCLE[(MODE_CYCLE.indexOf(params.mode) + 1) % MODE_CYCLE.length]); break;
      default: handled = false;
    }
    if (handled) e.preventDefault();
  });
  // A focused button would also take the space bar as a click on keyup,
  // undoing the play/pause the keydown just did.
  doc.addEventListener('keyup', (e) => {
    if (e.key === ' ' && /** @type {HTMLElement} */ (e.target)?.tagName === 'BUTTON') e.preventDefault();
  });

  // Pointer: hover for numbers, click to pin the zoom, wheel to zoom/scroll.
  slotsCanvas.addEventListener('mousemove', (e) => {
    const r = slotsCanvas.getBoundingClientRect();
    const h = slots.hit(st, e.clientX - r.left, e.clientY - r.top);
    if (!h) { tip.hide(); return; }
    tip.show(slotText(st, h.slot), e.clientX, e.clientY);
  });
  slotsCanvas.addEventListener('mouseleave', () => tip.hide());
  slotsCanvas.addEventListener('click', (e) => {
    const r = slotsCanvas.getBoundingClientRect();
    const h = slots.hit(st, e.clientX - r.left, e.clientY - r.top);
    slots.pin = !h || (h.where === 'zoom' && slots.pin !== null) ? null : h.slot;
    dirty = true;
  });
  slotsCanvas.addEventListener('wheel', (e) => {
    const r = slotsCanvas.getBoundingClientRect();
    const y = e.clientY - r.top;
    e.preventDefault();
    if (y < slots.layout.rowsY - 14) {
      slots.cell = Math.max(6, Math.min(48, slots.cell + (e.deltaY < 0 ? 2 : -2)));
    } else {
      const base = slots.rowScroll ?? slots.layout.firstRow;
      slots.rowScroll = Math.max(0, base + Math.sign(e.deltaY) * Math.max(1, Math.floor(slots.layout.rows / 3)));
    }
    dirty = true;
  }, { passive: false });
  sitCanvas.addEventListener('mousemove', (e) => {
    const r = sitCanvas.getBoundingClientRect();
    const t = sit.hit(st, e.clientX - r.left, e.clientY - r.top);
    if (t) tip.show(t, e.clientX, e.clientY); else tip.hide();
  });
  sitCanvas.addEventListener('mouseleave', () => tip.hide());
  sitCanvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    sit.scroll += Math.sign(e.deltaY) * 2;
    dirty = true;
  }, { passive: false });
  new ResizeObserver(() => { dirty = true; markersDirty = true; }).observe(doc.body);

  // The draw loop: only when something changed or a flash is fading.
  let lastURL = 0;
  let lastP95 = 0;
  const loop = () => {
    const now = performance.now();
    if (st.ready && st.flash.size && st.ageFlash(now)) dirty = true;
    if (dirty) {
      dirty = false;
      const t0 = performance.now();
      slots.draw(st, fitSlots.get(), now);
      sit.draw(st, fitSIT.get());
      drawMarkers(st, fitMarkers.get());
      markersDirty = false;
      updateDOM(doc, st, { status, notice, dragging, seek });
      meter.add(performance.now() - t0);
      if (st.flash.size) dirty = true;
    } else if (markersDirty) {
      drawMarkers(st, fitMarkers.get());
      markersDirty = false;
    }
    if (now - lastP95 > 500) {
      lastP95 = now;
      $('frame-p95').textContent = meter.p95().toFixed(2);
      $('frame-samples').textContent = String(meter.samples.length);
    }
    // replaceState is not free (and browsers throttle it): once a second
    // while playing, at once otherwise.
    if (st.ready && now - lastURL > (st.playing ? 1000 : 150)) {
      lastURL = now;
      updateURL(params, st);
    }
    requestAnimationFrame(loop);
  };
  $('speed-out').textContent = rate(SPEEDS[Number(speed.value)]);
  requestAnimationFrame(loop);
}

/**
 * Returns the index in SPEEDS nearest to a rate.
 * @param {number} sps
 * @returns {number}
 */
function nearestSpeed(sps) {
  let best = 0;
  for (let i = 0; i < SPEEDS.length; i++) {
    if (Math.abs(Math.log(SPEEDS[i]) - Math.log(sps)) < Math.abs(Math.log(SPEEDS[best]) - Math.log(sps))) best = i;
  }
  return best;
}

/**
 * Describes a slot for the tooltip.
 * @param {RunState} st
 * @param {number} off slot offset in the range
 * @returns {string}
 */
function slotText(st, off) {
  const idx = st.range.start + off;
  const v = st.slots[off];
  const ci = st.chunkOf(idx);
  const c = st.chunks[ci];
  const lines = [`slot ${int(idx)} (file offset ${int(idx * st.geometry.blockSize)})`];
  if (c) {
    lines.push(`chunk ${ci}: ${c.path}, slot ${idx - c.start} of ${c.len}`);
    if (c.missing) lines.push(`(+ ${c.missing} node${c.missing > 1 ? 's' : ''} created by ALLOC_NODE)`);
  }
  if (v === NULL_ADDR) lines.push('NULL_ADDR: a hole');
  else if (v === NEW_ADDR) lines.push('NEW_ADDR: reserved, reads as zeros');
  else if (v === COMPRESS_ADDR) lines.push('COMPRESS_ADDR');
  else {
    const g = st.geometry;
    const seg = st.segnoOf(v);
    lines.push(`address ${v}` + (seg >= 0
      ? `, segment ${seg}, block offset ${(v - g.segment0Blkaddr) % g.blocksPerSeg}`
      : ' — outside the main area'));
  }
  if (st.bad.has(off)) lines.push('✕ rejected by f2fs_is_valid_blkaddr');
  return lines.join('\n');
}

/**
 * Writes the model's numbers into the page.
 * @param {Document} doc
 * @param {RunState} st
 * @param {{status: string, notice: string, dragging: boolean, seek: HTMLInputElement}} ui
 */
function updateDOM(doc, st, ui) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const text = (/** @type {string} */ id, /** @type {string} */ s) => { const el = $(id); if (el.textContent !== s) el.textContent = s; };
  if (!ui.dragging) {
    ui.seek.value = String(st.step);
    text('step-now', int(st.step));
  }
  text('speed-out', rate(st.stepsPerSecond));
  const play = $('btn-play');
  text('btn-play', st.playing ? '❚❚ pause' : '▶ play');
  play.setAttribute('aria-pressed', String(st.playing));

  const statusEl = $('run-status');
  let s;
  let cls = 'status';
  if (!st.ready) s = ui.status === 'open' ? 'starting' : ui.status;
  else if (st.done) { s = st.outcome; cls += s === 'done' ? ' done' : ' err'; }
  else if (ui.status !== 'open') s = ui.status;
  else s = st.playing ? 'playing' : 'paused';
  text('run-status', s);
  if (statusEl.className !== cls) statusEl.className = cls;
  statusEl.title = ui.notice;

  const pb = st.per['per-block'];
  const bt = st.per.batched;
  // Plain digits in the headline figures: scripts and tests read them.
  text('stat-calls-per-block', pb ? String(pb.counters.calls) : '–');
  text('stat-calls-batched', bt ? String(bt.counters.calls) : '–');
  const blocks = Math.max(pb ? pb.counters.blocksInvalidated : 0, bt ? bt.counters.blocksInvalidated : 0);
  text('stat-blocks-invalidated', pb || bt ? String(blocks) : '–');
  /** @type {Array<[string, string]>} */
  const rows = [['calls', 'calls'], ['locks', 'sitLockAcquisitions'], ['blocks', 'blocksInvalidated'], ['slots', 'slotsVisited'], ['chunks', 'dnodeChunks']];
  for (const [id, key] of rows) {
    text(`c-pb-${id}`, pb ? int(pb.counters[key]) : '–');
    text(`c-bt-${id}`, bt ? int(bt.counters[key]) : '–');
  }

  // What batching saves, once both engines have made calls.
  let saving = '–';
  if (pb && bt && pb.counters.sitLockAcquisitions > 0) {
    const a = pb.counters.sitLockAcquisitions;
    const b = bt.counters.sitLockAcquisitions;
    saving = b > 0 ? `${int(a - b)} (${(a / b).toFixed(a / b >= 10 ? 0 : 1)}× fewer)` : int(a);
  }
  text('c-saving', saving);

  // Narration: one line per mode in the run.
  const narr = (/** @type {string} */ id, /** @type {any} */ ms) => {
    const p = $(id);
    p.hidden = !ms;
    if (!ms) return;
    let t = ms.narration || (st.step === 0 ? 'Press play, or → to step: the kernel has not started yet.' : '');
    if (ui.notice) t = `⚠ ${ui.notice}`;
    text(`${id}-text`, t);
    p.title = t;
  };
  narr('narr-pb', pb);
  narr('narr-bt', bt);

  // Call lanes.
  const lanes = $('lanes');
  lanes.style.setProperty('--lanes', String(st.modes.length || 1));
  const key = st.modes.map((m) => {
    const ms = st.per[m];
    const last = ms.calls[ms.calls.length - 1];
    return `${m}:${ms.counters.calls}:${last ? last.join(',') : ''}:${ms.pending ? `${ms.pending.start},${ms.pending.len}` : ''}`;
  }).join('|');
  if (lanes.dataset.key !== key) {
    lanes.dataset.key = key;
    lanes.replaceChildren(...st.modes.map((m) => lane(doc, m, st.per[m])));
  }
  text('slots-aside', st.ready ? `${int(st.n)} slots in ${int(st.chunks.length)} chunks · cursor ${int(st.cursor())}` : '');
  text('sit-aside', st.ready ? `${st.segOrder.size} segments` : '');
}

/**
 * Builds one mode's call lane: the pending run and the latest calls.
 * @param {Document} doc
 * @param {string} mode
 * @param {import('./state.js').ModeState} ms
 * @returns {HTMLElement}
 */
function lane(doc, mode, ms) {
  const el = doc.createElement('div');
  el.className = 'lane';
  const h = doc.createElement('h3');
  h.textContent = `${mode} · ${int(ms.counters.calls)} call${ms.counters.calls === 1 ? '' : 's'}`;
  const p = doc.createElement('div');
  p.className = 'pending';
  if (mode === 'batched') {
    if (ms.pending) {
      const b = doc.createElement('b');
      b.textContent = `(blkstart ${ms.pending.start}, blklen ${ms.pending.len})`;
      p.append('pending run ', b);
    } else {
      p.textContent = 'no pending run';
    }
  } else {
    p.textContent = 'one call per valid block, no run';
  }
  const ol = doc.createElement('ol');
  for (const [start, len, why] of ms.calls.slice(-5).reverse()) {
    const li = doc.createElement('li');
    const w = doc.createElement('span');
    w.className = 'why';
    w.textContent = why && why !== 'per-block' ? `  ${why}` : '';
    li.append(`f2fs_invalidate_blocks(${start}, ${len})`, w);
    ol.append(li);
  }
  el.append(h, p, ol);
  return el;
}

/**
 * Keeps the address bar a permalink of the view.
 * @param {{image: string, path: string, offset: number, length: number, mode: string, keepSize: boolean}} params
 * @param {RunState} st
 */
function updateURL(params, st) {
  const q = new URLSearchParams(location.search);
  if (params.sandbox) {
    q.set('mode', params.mode);
    q.set('step', String(st.step));
    const url = `${location.pathname}?${q}`;
    if (url !== location.pathname + location.search) history.replaceState(null, '', url);
    return;
  }
  q.set('path', params.path);
  q.set('offset', st.info.offset || String(params.offset));
  q.set('length', st.info.length || String(params.length));
  q.set('mode', params.mode);
  q.set('step', String(st.step));
  q.delete('run');
  q.delete('before');
  for (const op of params.before) q.append('before', op);
  if (params.keepSize) q.set('keepSize', 'true');
  const url = `${location.pathname}?${q}`;
  if (url !== location.pathname + location.search) history.replaceState(null, '', url);
}

initRun(document);
