// The compare page (issue 28): a zero and a punch of one range, both batched, side by side. Each
// side is a player session of its own on /ws/run (ws.js RunSocket, connection.js's handlers, a
// RunState and a SlotsView: the player's own machinery, one set per side); one set of controls
// drives both by slot: position p means "the first p slots of the range walked", sent to each side
// as gotoSlot (step 0 and the end as reset and end), so the two show the same file block whatever
// their step counts. The lockstep, the summary line and the call log's lines are DOM-free and
// tested in static/jstest/compare.test.js.
import { RunSocket } from './ws.js';
import { RunState } from './state.js';
import { SlotsView } from './render.js';
import { CanvasFit } from './canvas.js';
import { TourQuiz } from './tourquiz.js';
import { playerHandlers } from './connection.js';
import { contract } from './contract.js';
import { int, showCount } from './fmt.js';

/** How long a whole play takes at most, in ticks (TICK_MS each): about 15 s for any range. */
export const PLAY_TICKS = 150;
/** One tick of play, ms: 10 controls a second per socket, well under the server's 50 (web/ratelimit.go). */
export const TICK_MS = 100;

/**
 * The control that shows position p of a range of n slots from start on one side: reset at 0,
 * end at n, else the first step whose cursor reaches slot start + p.
 * @param {number} p
 * @param {number} start
 * @param {number} n
 * @returns {{type: string, slot?: number}}
 */
export function controlFor(p, start, n) {
  if (p <= 0) return { type: 'reset' };
  if (p >= n) return { type: 'end' };
  return { type: 'gotoSlot', slot: start + p };
}

/**
 * The slots one tick of play moves: a range of any size plays in about PLAY_TICKS ticks.
 * @param {number} n
 * @returns {number}
 */
export function playStride(n) {
  return Math.max(1, Math.ceil(n / PLAY_TICKS));
}

/**
 * The span both sides walk: the union of their ranges (a zero and a punch of one range have the
 * same one; a side not ready yet counts for nothing).
 * @param {Array<{ready: boolean, range: {start: number, end: number}}>} states
 * @returns {{start: number, n: number}}
 */
export function spanOf(states) {
  let start = Infinity;
  let end = -Infinity;
  for (const s of states) {
    if (!s.ready) continue;
    start = Math.min(start, s.range.start);
    end = Math.max(end, s.range.end);
  }
  if (start === Infinity) return { start: 0, n: 0 };
  return { start, n: Math.max(0, end - start) };
}

/**
 * One set of controls for several sessions: the position, play and pause, and what each session
 * is sent. Every session is sent the same control for the same position.
 */
export class Lockstep {
  /** @param {Array<(m: object) => void>} sends one per session */
  constructor(sends) {
    this.sends = sends;
    this.pos = 0;
    this.start = 0;
    this.n = 0;
    /** the last position, the end: n, or 1 for a range of no slots (its run still has an end:
     * an error, a size changed) */
    this.last = 0;
    this.playing = false;
  }

  /**
   * Sets the span (spanOf) and sends the position to every session (a reconnected one too).
   * @param {{start: number, n: number}} s
   */
  setSpan(s) {
    this.start = s.start;
    this.n = s.n;
    this.last = Math.max(1, s.n);
    this.pos = Math.min(this.pos, this.last);
    this.send();
  }

  /** Sends the position's control to every session. */
  send() {
    const m = controlFor(this.pos, this.start, this.last);
    for (const s of this.sends) s(m);
  }

  /**
   * Goes to position p (clamped to [0, last]).
   * @param {number} p
   */
  go(p) {
    const q = Math.max(0, Math.min(this.last, Math.round(p)));
    if (q === this.pos) return;
    this.pos = q;
    this.send();
  }

  /** @param {number} d slots on (negative: back); pauses */
  step(d) { this.playing = false; this.go(this.pos + d); }

  /** @param {number} p pauses and goes to p */
  seek(p) { this.playing = false; this.go(p); }

  home() { this.seek(0); }

  end() { this.seek(this.last); }

  /** Play from here (from the start when at the end), or pause. */
  toggle() {
    if (this.playing) { this.playing = false; return; }
    if (this.last === 0) return; // no span yet
    if (this.pos >= this.last) this.go(0);
    this.playing = true;
  }

  /** One tick of play: playStride slots on; the end pauses. */
  tick() {
    if (!this.playing) return;
    this.go(this.pos + playStride(this.last));
    if (this.pos >= this.last) this.playing = false;
  }
}

/**
 * Where the controls are, in words: slots walked of the range's, or for a range of no slots (the
 * kernel refuses it, or it ends past the file) the start or the end.
 * @param {Lockstep} lock
 * @returns {string}
 */
export function whereText(lock) {
  if (lock.n === 0) return lock.pos === 0 ? 'at the start (no slots in the range)' : 'at the end (no slots in the range)';
  return `${int(lock.pos)} / ${int(lock.n)} slots walked`;
}

/**
 * @param {number} n
 * @param {string} one
 * @param {string} [many]
 * @returns {string}
 */
function plural(n, one, many = `${one}s`) {
  return `${int(n)} ${n === 1 ? one : many}`;
}

/**
 * The summary line: each side's calls (and SIT lock acquisitions when they differ from the calls:
 * a NEW_ADDR slot's call returns before it takes the lock).
 * @param {Array<{op: string, calls: number|null, locks: number|null}>} sides
 * @param {boolean} done every side is at its end
 * @returns {string}
 */
export function summaryLine(sides, done) {
  if (sides.some((s) => s.calls === null)) return 'connecting…';
  const parts = sides.map((s) => {
    let t = `${s.op}: ${plural(/** @type {number} */ (s.calls), 'call')}`;
    if (s.locks !== null && s.locks !== s.calls) t += ` (${plural(s.locks, 'SIT lock acquisition')})`;
    return t;
  });
  return `${parts.join('; ')}${done ? '' : ' so far'}`;
}

/**
 * The per-side figures of a model: its one mode's counters, or nulls before the hello.
 * @param {RunState} st
 * @returns {{calls: number|null, locks: number|null, blocks: number|null, done: boolean}}
 */
export function figuresOf(st) {
  const ms = st.ready ? st.per[st.modes[0]] : null;
  const c = ms && ms.counters;
  if (!c) return { calls: null, locks: null, blocks: null, done: false };
  return { calls: c.calls ?? 0, locks: c.sitLockAcquisitions ?? 0, blocks: c.blocksInvalidated ?? 0, done: !!ms.done };
}

/**
 * The query of a side's socket: the page's (its op and mode included) at step.
 * @param {string} query
 * @param {number} step
 * @returns {string}
 */
export function sideQuery(query, step) {
  const q = new URLSearchParams(query);
  q.set('step', String(step));
  return q.toString();
}

/**
 * A call of the call log in words: its address (NEW_ADDR and COMPRESS_ADDR by name: a punch calls
 * f2fs_invalidate_blocks with them, and the call returns at once) and length, and why it was made.
 * @param {[number, number, string?]} call [start, len, reason]
 * @returns {{call: string, why: string}}
 */
export function callWords(call) {
  const [start, len, why] = call;
  const a = contract().addr;
  const at = start === a.new ? 'NEW_ADDR' : start === a.compress ? 'COMPRESS_ADDR' : String(start);
  return { call: `f2fs_invalidate_blocks(${at}, ${len})`, why: why || '' };
}

/** The page's URL parameter for the position (slots walked): a permalink to the view. */
export const AT = 'at';

/**
 * The position a page's search asks for: a whole number of slots walked, 0 when absent or not one.
 * @param {string} search location.search
 * @returns {number}
 */
export function atOf(search) {
  const v = new URLSearchParams(search).get(AT) || '';
  return /^\d{1,15}$/.test(v) ? Number(v) : 0;
}

/**
 * The page's search with the position p (0: left out, as a fresh page starts there).
 * @param {string} search
 * @param {number} p
 * @returns {string} without the "?"
 */
export function withAt(search, p) {
  const q = new URLSearchParams(search);
  if (p > 0) q.set(AT, String(p)); else q.delete(AT);
  return q.toString();
}

/** A RunSocket on a side's own query (the server rendered it from request's field names). */
class SideSocket extends RunSocket {
  /**
   * @param {string} query
   * @param {import('./ws.js').RunParams} params
   * @param {import('./ws.js').Handlers} on
   * @param {() => number} resumeStep
   */
  constructor(query, params, on, resumeStep) {
    super(params, on, resumeStep);
    this.query = query;
  }

  path() {
    return `/ws/run?${sideQuery(this.query, this.params.step)}`;
  }
}

/**
 * One side of the page: its model, socket and views.
 */
class Side {
  /**
   * @param {HTMLElement} el the side's section
   * @param {() => void} changed
   */
  constructor(el, changed) {
    this.el = el;
    this.op = el.dataset.op || '';
    const q = (/** @type {string} */ role) => /** @type {HTMLElement} */ (el.querySelector(`[data-role="${role}"]`));
    this.calls = q('calls');
    this.locks = q('locks');
    this.blocks = q('blocks');
    this.now = q('now');
    this.log = q('log');
    this.stateEl = q('state');
    const canvas = /** @type {HTMLCanvasElement} */ (q('slots'));
    this.fit = new CanvasFit(canvas);
    this.slots = new SlotsView(canvas);
    this.st = new RunState();
    this.status = 'connecting';
    this.error = '';
    this.logKey = '';
    /** @type {{image: string, path: string, offset: string, length: string, mode: string, keepSize: boolean, before: string[], step: number, pace: string}} */
    const params = { image: '', path: '', offset: '0', length: '', mode: '', keepSize: false, before: [], step: 0, pace: '' };
    this.sock = new SideSocket(el.dataset.query || '', params, playerHandlers({
      st: this.st, tq: new TourQuiz(), view: this.slots.opts, params,
      send: (m) => this.sock.send(m),
      takeRunEnd: () => false,
      presenter: () => false,
      shown: () => { this.slots.pin = null; },
      redraw: changed,
      changed,
      notify: (text) => { this.error = text; changed(); },
      status: (s) => { this.status = s; changed(); },
      // A hello (a reconnect's too) starts the side again: an earlier error is over.
      hooks: { onHello: () => { this.error = ''; } },
    }), () => this.st.step);
  }

  /** Writes the side's figures, its latest calls and its narration. */
  update() {
    const st = this.st;
    const f = figuresOf(st);
    if (f.calls !== null) {
      showCount(this.calls, f.calls);
      showCount(this.locks, /** @type {number} */ (f.locks));
      showCount(this.blocks, /** @type {number} */ (f.blocks));
    }
    const ms = st.ready ? st.per[st.modes[0]] : null;
    this.now.textContent = ms ? ms.narration || (st.step === 0 ? 'The kernel has not started yet.' : '') : '';
    const calls = ms ? ms.calls || [] : [];
    const key = `${f.calls}:${calls.map((c) => c.join(',')).join(';')}`;
    if (key !== this.logKey) {
      this.logKey = key;
      const first = (f.calls ?? 0) - calls.length;
      const doc = this.el.ownerDocument;
      this.log.replaceChildren(...calls.map((c, i) => {
        const w = callWords(/** @type {[number, number, string]} */ (c));
        const li = doc.createElement('li');
        li.value = first + i + 1;
        const why = doc.createElement('span');
        why.className = 'why';
        why.textContent = w.why ? `  ${w.why}` : '';
        li.append(w.call, why);
        return li;
      }));
      this.log.start = first + 1;
      // The newest call in view: the list scrolls, oldest first.
      this.log.scrollTop = this.log.scrollHeight;
    }
    this.stateEl.textContent = this.error || (f.done ? `done: returned ${(ms && ms.errno) || '0'}` : this.status === 'open' ? `step ${int(st.step)} of ${int(st.totalSteps)}` : this.status);
    this.el.dataset.done = String(f.done);
  }
}

/**
 * Starts the compare page.
 * @param {Document} doc
 */
export function initCompare(doc) {
  const root = doc.getElementById('compare');
  if (!root) return null;
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  let dirty = true;
  const changed = () => { dirty = true; };
  const sides = [...doc.querySelectorAll('.cmp-side')].map((el) => new Side(/** @type {HTMLElement} */ (el), changed));
  const lock = new Lockstep(sides.map((s) => (/** @type {object} */ m) => s.sock.send(m)));
  // A permalink's position: the first span clamps it and sends it to both sides.
  lock.pos = atOf(location.search);
  const seek = /** @type {HTMLInputElement} */ ($('cmp-seek'));
  const play = $('cmp-play');
  // Each hello (a first one, a reconnect) may change the span; a side that reconnected resumes at
  // its own step, so the position is sent again.
  let hellos = -1;
  const helloCount = () => sides.reduce((k, s) => k + s.st.hellos, 0);
  for (const s of sides) s.sock.connect();
  window.addEventListener('pagehide', () => { for (const s of sides) s.sock.stop(); });
  window.addEventListener('pageshow', (e) => { if (e.persisted) for (const s of sides) s.sock.resume(); });

  const act = (/** @type {() => void} */ f) => { f(); dirty = true; };
  $('cmp-reset').addEventListener('click', () => act(() => lock.home()));
  $('cmp-back').addEventListener('click', () => act(() => lock.step(-1)));
  $('cmp-step').addEventListener('click', () => act(() => lock.step(1)));
  $('cmp-end').addEventListener('click', () => act(() => lock.end()));
  play.addEventListener('click', () => act(() => lock.toggle()));
  seek.addEventListener('input', () => act(() => lock.seek(Number(seek.value))));
  doc.addEventListener('keydown', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    // Keys typed into the range form are the form's; on the slider they are ours (its own arrow
    // keys would move it a second time).
    const typing = ['SELECT', 'TEXTAREA'].includes(t.tagName) || (t.tagName === 'INPUT' && /** @type {HTMLInputElement} */ (t).type !== 'range');
    if (e.ctrlKey || e.metaKey || e.altKey || typing) return;
    /** @type {Record<string, () => void>} */
    const keys = { ' ': () => lock.toggle(), ArrowRight: () => lock.step(1), ArrowLeft: () => lock.step(-1), Home: () => lock.home(), End: () => lock.end() };
    const f = keys[e.key];
    if (!f) return;
    act(f);
    e.preventDefault();
  });
  // A focused button would also take the space bar as a click on keyup, undoing the toggle.
  doc.addEventListener('keyup', (e) => {
    if (e.key === ' ' && /** @type {HTMLElement} */ (e.target)?.tagName === 'BUTTON') e.preventDefault();
  });
  window.setInterval(() => { if (lock.playing) { lock.tick(); dirty = true; } }, TICK_MS);
  // Presenter mode (&present=1, the button, P): large type for a projector, as the player's; a
  // projector's width draws the strips' labels large too.
  const big = window.matchMedia('(min-width: 1800px)');
  const presentBtn = /** @type {HTMLButtonElement|null} */ (doc.getElementById('cmp-present'));
  let present = new URLSearchParams(location.search).get('present') === '1';
  const sizeLabels = () => {
    doc.body.classList.toggle('present', present);
    if (presentBtn) presentBtn.setAttribute('aria-pressed', String(present));
    for (const s of sides) { s.slots.opts.present = present || big.matches; s.slots.opts.version++; }
    dirty = true;
  };
  const setPresent = (/** @type {boolean} */ on) => {
    present = on;
    sizeLabels();
    const q = new URLSearchParams(location.search);
    if (on) q.set('present', '1'); else q.delete('present');
    history.replaceState(null, '', `${location.pathname}?${q}${location.hash}`);
  };
  presentBtn?.addEventListener('click', () => setPresent(!present));
  doc.addEventListener('keydown', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (e.key !== 'P' || e.ctrlKey || e.metaKey || e.altKey || t.tagName === 'INPUT' && /** @type {HTMLInputElement} */ (t).type !== 'range') return;
    setPresent(!present);
    e.preventDefault();
  });
  big.addEventListener('change', sizeLabels);
  sizeLabels();
  new ResizeObserver(() => { dirty = true; }).observe(doc.body);

  let lastURL = 0;
  const loop = () => {
    const now = performance.now();
    // The address follows the position (replaceState is throttled by browsers: once a second while
    // playing), once the sides have told the span.
    if (lock.last > 0 && now - lastURL > (lock.playing ? 1000 : 150)) {
      lastURL = now;
      const search = withAt(location.search, lock.pos);
      if (search !== location.search.replace(/^\?/, '')) history.replaceState(null, '', `${location.pathname}?${search}`);
    }
    for (const s of sides) if (s.st.ready && s.st.flash.size && s.st.ageFlash(now)) dirty = true;
    const h = helloCount();
    if (h !== hellos && sides.every((s) => s.st.ready)) {
      hellos = h;
      lock.setSpan(spanOf(sides.map((s) => s.st)));
      seek.max = String(lock.last);
      dirty = true;
    }
    if (dirty) {
      dirty = false;
      for (const s of sides) {
        s.slots.draw(s.st, s.fit.get(), now);
        s.update();
        if (s.st.flash.size) dirty = true;
      }
      const figs = sides.map((s) => ({ op: s.op, ...figuresOf(s.st) }));
      const ready = sides.every((s) => s.st.ready);
      const done = ready && lock.pos >= lock.last && figs.every((f) => f.done);
      $('cmp-summary').textContent = summaryLine(figs, done);
      seek.value = String(lock.pos);
      seek.setAttribute('aria-valuetext', ready ? whereText(lock) : 'connecting');
      $('cmp-pos').textContent = ready ? whereText(lock) : '–';
      play.textContent = lock.playing ? '❚❚ pause' : '▶ play';
      play.setAttribute('aria-pressed', String(lock.playing));
      const err = sides.find((s) => s.error);
      $('cmp-status').textContent = err ? `${err.op}: ${err.error}` : !ready ? 'connecting' : done ? 'done' : lock.playing ? 'playing' : 'paused';
    }
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
  return { sides, lock };
}

if (typeof document !== 'undefined') initCompare(document);
