// The player page: wires the websocket, the model and the canvases to the
// controls, the keyboard, the tour, the quiz, the glossary and the URL.
// run.js starts it; a page that mirrors a presenter (rooms) uses the
// controller initRun returns (presenterState, applyPresenterState,
// onPresenterChange, send, onMessage).
import { RunSocket } from './ws.js';
import { RunState, NULL_ADDR, NEW_ADDR, COMPRESS_ADDR } from './state.js';
import { SlotsView, SITView, MarkersView } from './render.js';
import { CanvasFit, Tooltip } from './canvas.js';
import { int, rate } from './fmt.js';
import { DEFAULT_PACE, isPace, timeLeftText, paceValue } from './pace.js';
import { MODEL, MEASURED, modelMs, fmtTime, formula } from './cost.js';
import {
  stopAt, stopStep, nextStop, prevStop, tourPosition, openQuestion, passedQuestion, verdictText, scoreText,
} from './tour.js';
import { nextMode, tourAfterHello } from './modeswitch.js';
import { COLOUR_BY, COLOUR_KEY, colourBy } from './colour.js';
import { loadGlossary, TermMatcher, Popover, writeTerms, termButton } from './glossary.js';
import { legendColours as paintLegend } from './palette.js';
import { callItem } from './calllog.js';
import { VEILED_NARRATION, veiledTitle, questionPlace, choicesOf, checkAnswer, verdictSpeech } from './quiz.js';
import { wireFigures } from './figure.js';

/** Play speeds the custom-speed slider steps through (steps per second). */
const SPEEDS = [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000,
  20000, 50000, 100000, 200000, 500000, 1000000];

/** Modes in the order the b key cycles through them. */
/** Paces from slowest to fastest, for [ and ]. */
const PACE_ORDER = ['step', '180', '60', '30', '10'];

/** Keys that drive the run: a follower's page ignores them while it mirrors a presenter. */
const DRIVE_KEYS = new Set([' ', 'ArrowRight', 'ArrowLeft', 'Home', 'End', 'PageDown', 'PageUp', 'n', 'p', '[', ']', 'b', 'B', 'q', 'g']);

/** The controls that drive the run, disabled while a follower's page mirrors a presenter. */
const DRIVE_CONTROLS = ['btn-reset', 'btn-back', 'btn-play', 'btn-step', 'btn-flush', 'btn-end', 'pace', 'speed', 'seek',
  'goto-slot', 'f-mode', 'quiz-toggle'];

/** Draw times kept for the p95: the latest draws, up to this many. */
const FRAME_SAMPLES = 20000;

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
    if (this.samples.length >= FRAME_SAMPLES) this.samples.shift();
    this.samples.push(ms);
  }

  /** Starts over. */
  reset() { this.samples = []; }

  /** @returns {number} the 95th percentile of the kept draw times, ms */
  p95() {
    if (!this.samples.length) return 0;
    const s = [...this.samples].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))];
  }
}

/**
 * What a presenter's page shows beyond the run itself: the state a room mirrors on its
 * followers' pages.
 * @typedef {object} PresenterState
 * @property {number} step
 * @property {boolean} playing
 * @property {string} pace "10", "30", "60", "180", "step" or "" (a custom speed)
 * @property {string} mode "per-block", "batched" or "both"
 * @property {number} stop the open tour stop's index, -1 for none
 * @property {boolean} quiz
 * @property {number} question the stop whose question is being asked, -1 for none
 * @property {string} colourBy "run", "segment" or "log"
 * @property {boolean} present presenter mode
 */

/**
 * The handle a page gets on its player.
 * @typedef {object} PlayerController
 * @property {RunState} state the model
 * @property {{slots: SlotsView, sit: SITView}} views the slots and SIT panels (their layouts place marks)
 * @property {() => PresenterState} presenterState
 * @property {(s: Partial<PresenterState>, opts?: {drive?: boolean}) => void} applyPresenterState
 *   shows s on this page: the open stop, the quiz, the colouring and presenter mode always; with
 *   drive, also step, play/pause, pace and mode, by sending this page's own controls (a follower
 *   whose frames come from the presenter's session leaves drive off)
 * @property {(fn: (s: PresenterState) => void) => void} onPresenterChange fn runs after every
 *   change the user makes here (at most once an animation frame)
 * @property {(msg: object) => void} send sends a control on this page's socket
 * @property {(change?: Partial<import('./ws.js').RunParams>) => import('./ws.js').RunParams} params
 *   changes the socket's parameters (used from the next connection on) and returns them
 * @property {() => void} reconnect opens a new connection with the parameters, at the step shown
 * @property {(on: boolean) => void} setDriving off: the controls and keys that drive the run are
 *   disabled (a follower mirroring its presenter)
 * @property {() => {index: number, now: number, before: number, pinned: boolean}|null} focusSlot
 *   the pinned slot, or the cursor's: file block index, its value now and before the run
 */

/**
 * @typedef {object} RunOptions
 * @property {(msg: any) => void} [onMessage] gets server messages the player does not handle
 *   (rooms: "room", "answers"), and quiz verdicts and errors after the player has taken them
 * @property {Partial<import('./ws.js').RunParams>} [params] socket parameters beyond the page's
 *   (follow, room and token, trace)
 * @property {(h: any) => void} [onHello] gets each hello after the model took it
 * @property {(f: any) => void} [onFrame] gets each frame after the model took it
 * @property {import('./calllog.js').CallLog} [callLog] block links and the kernel's calls in the call log
 */

/**
 * Starts the player on the page.
 * @param {Document} doc
 * @param {RunOptions} [opts]
 * @returns {PlayerController|null}
 */
export function initRun(doc, opts = {}) {
  const root = /** @type {HTMLElement|null} */ (doc.getElementById('player'));
  if (!root) return null;
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const ds = root.dataset;
  const url = new URLSearchParams(location.search);
  // Offsets and lengths stay decimal strings: Number() would round 2^63−1.
  const params = {
    image: ds.image || '', path: ds.path || '', offset: ds.offset || '0', length: ds.length || '',
    mode: ds.mode || 'both', keepSize: ds.keepSize === 'true', step: Number(ds.step || 0),
    before: /** @type {string[]} */ (JSON.parse(ds.before || '[]')),
    pace: isPace(url.get('pace') || '') ? /** @type {string} */ (url.get('pace')) : '',
    sandbox: ds.sandbox || '',
    // A follower's page (rooms): the room code. ws.js may connect such a page to /ws/follow.
    follow: ds.follow || '',
  };
  Object.assign(params, opts.params || {});
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
  const markers = new MarkersView();
  sit.opts = slots.opts;
  const meter = new FrameMeter();
  const tip = new Tooltip();
  const seek = /** @type {HTMLInputElement} */ ($('seek'));
  const speed = /** @type {HTMLInputElement} */ ($('speed'));
  const paceSel = /** @type {HTMLSelectElement} */ ($('pace'));
  const modeSel = /** @type {HTMLSelectElement|null} */ (doc.getElementById('f-mode'));
  const colourSel = /** @type {HTMLSelectElement} */ ($('colour-by'));
  const quizToggle = /** @type {HTMLInputElement} */ ($('quiz-toggle'));
  const gotoInput = /** @type {HTMLInputElement} */ ($('goto-slot'));
  const quizInput = /** @type {HTMLInputElement} */ ($('quiz-answer'));
  // The save menu: figures of the current step and the calls as CSV (figure.js).
  wireFigures(doc, () => ({ st, slots, sit, redraw: () => { dirty = true; } }));
  const glossary = loadGlossary(doc);
  const matcher = glossary.size ? new TermMatcher([...glossary.values()]) : null;
  new Popover(doc, glossary);

  // The view's options: the colouring, presenter mode and the quiz.
  let stored = null;
  try { stored = localStorage.getItem(COLOUR_KEY); } catch { /* private mode */ }
  const view = slots.opts;
  view.colour.by = colourBy(url.get('colour') || stored);
  view.present = url.get('present') === '1';
  view.quiz = url.get('quiz') === '1';
  colourSel.value = view.colour.by;
  quizToggle.checked = view.quiz;

  let status = 'connecting';
  let driving = true;
  let notice = '';
  let noticeTimer = 0;
  let dragging = false;
  let dirty = true;
  let markersDirty = true;
  /** The open tour stop, and whether the user chose it (n, p, an answer) rather than the step. */
  let tourOpen = -1;
  let tourSticky = false;
  /** Quiz: stops answered, the last verdict by stop, the score. */
  const answered = new Set();
  /** @type {Map<number, string>} */
  const verdicts = new Map();
  let score = { right: 0, asked: 0 };
  let waitingVerdict = -1;
  /** What the live region says of the last verdict: it and the right answer (quiz.js). */
  let lastVerdictSpeech = '';
  /** Why the last answer was not sent (quiz.js checkAnswer), until the next one. */
  let answerHint = '';
  /** @type {Array<(s: PresenterState) => void>} */
  const watchers = [];
  let changeQueued = false;
  const changed = () => {
    dirty = true;
    if (changeQueued || !watchers.length) return;
    changeQueued = true;
    requestAnimationFrame(() => {
      changeQueued = false;
      const s = presenterState();
      for (const fn of watchers) fn(s);
    });
  };

  const applyView = () => {
    doc.body.classList.toggle('present', view.present);
    doc.body.classList.toggle('quiz-on', view.quiz);
    $('btn-present').setAttribute('aria-pressed', String(view.present));
    $('quiz-score-line').hidden = !view.quiz;
    view.version++;
    markersDirty = true;
    legendColours(doc, view.colour.by);
    dirty = true;
  };

  const sock = new RunSocket(params, {
    hello(h) {
      const before = st.ready ? st.mode : null;
      st.hello(h);
      params.mode = st.mode;
      ({ open: tourOpen, sticky: tourSticky } = tourAfterHello(before, st.mode, st.stops, st.step, tourOpen, tourSticky));
      // Verdicts are kept by stop index, and another mode has other stops.
      if (before !== null && before !== st.mode) { verdicts.clear(); answered.clear(); waitingVerdict = -1; }
      if (modeSel) modeSel.value = st.mode;
      seek.max = String(st.totalSteps);
      $('step-total').textContent = int(st.totalSteps);
      view.colour.geometry = st.geometry;
      view.colour.segTypes = st.segTypes;
      view.colour.runs = st.runs;
      view.version++;
      slots.pin = null;
      score = h.score || score;
      if (runEnd) {
        runEnd = false;
        sock.send({ type: 'end' });
      }
      if (!st.initialComplete) sock.send({ type: 'initial', from: st.initialNext });
      helloDOM(doc, st);
      markersDirty = true;
      dirty = true;
      if (opts.onHello) opts.onHello(h);
    },
    other(m) {
      if (m.type === 'initial') {
        st.addInitial(m);
        if (!st.initialComplete) sock.send({ type: 'initial', from: st.initialNext });
        else if (view.colour.runs !== st.runs) { view.colour.runs = st.runs; view.version++; }
        dirty = true;
      } else if (m.type === 'quiz') {
        if (m.score) score = m.score;
        if (m.pending) {
          verdicts.set(m.stop, 'answer sent: the presenter reveals it');
        } else {
          answered.add(m.stop);
          verdicts.set(m.stop, verdictText(m));
          lastVerdictSpeech = verdictSpeech(m, doc.body.classList.contains('room-presenter'));
          if (waitingVerdict === m.stop) waitingVerdict = -1;
          tourOpen = m.stop;
          tourSticky = true;
        }
        changed();
        if (opts.onMessage) opts.onMessage(m);
      } else if (opts.onMessage) {
        opts.onMessage(m);
      }
    },
    frame(f) {
      const prev = st.step;
      st.frame(f, performance.now());
      // A quiz stops where a question is asked: playing past one comes back to it.
      if (view.quiz && st.playing) {
        const k = passedQuestion(st.stops, prev, st.step, answered);
        if (k >= 0) {
          const q = /** @type {import('./tour.js').Question} */ (st.stops[k].question);
          sock.send({ type: 'seek', step: q.ask });
          tourOpen = k;
          tourSticky = true;
        }
      }
      dirty = true;
      if (opts.onFrame) opts.onFrame(f);
    },
    error(e) {
      notice = e.error || 'error';
      clearTimeout(noticeTimer);
      if (!e.fatal) noticeTimer = window.setTimeout(() => { notice = ''; dirty = true; }, 4000);
      dirty = true;
      if (opts.onMessage) opts.onMessage({ ...e, type: 'error' });
    },
    status(s) { status = s; dirty = true; },
  }, () => st.step);
  sock.connect();
  // A closed tab ends its run on the server; a page restored from the
  // back-forward cache opens a new one at the step it showed.
  window.addEventListener('pagehide', () => sock.stop());
  window.addEventListener('pageshow', (e) => { if (e.persisted) sock.resume(); });

  // Controls. Moving the view by hand lets the tour follow the step again.
  const send = (/** @type {object} */ m) => { slots.rowScroll = null; sock.send(m); };
  const nav = (/** @type {object} */ m) => { tourSticky = false; send(m); changed(); };
  const playPause = () => nav({ type: st.playing ? 'pause' : 'play' });
  const setSpeed = (/** @type {number} */ i) => {
    const k = Math.max(0, Math.min(SPEEDS.length - 1, i));
    speed.value = String(k);
    speed.setAttribute('aria-valuetext', rate(SPEEDS[k]));
    sock.send({ type: 'speed', stepsPerSecond: SPEEDS[k] });
    changed();
  };
  const setPace = (/** @type {string} */ p) => {
    if (!isPace(p)) return;
    paceSel.value = p;
    params.pace = p;
    sock.send({ type: 'pace', pace: p });
    changed();
  };
  const stepPace = (/** @type {number} */ d) => {
    const i = PACE_ORDER.indexOf(st.pace);
    const j = i < 0 ? PACE_ORDER.indexOf(DEFAULT_PACE) : Math.max(0, Math.min(PACE_ORDER.length - 1, i + d));
    setPace(PACE_ORDER[j]);
  };
  const setMode = (/** @type {string} */ m) => {
    if (modeSel) modeSel.value = m;
    params.mode = m;
    sock.send({ type: 'mode', mode: m });
    changed();
  };
  const setColour = (/** @type {string} */ by) => {
    view.colour.by = colourBy(by);
    colourSel.value = view.colour.by;
    try { localStorage.setItem(COLOUR_KEY, view.colour.by); } catch { /* private mode */ }
    applyView();
    changed();
  };
  const setPresent = (/** @type {boolean} */ on) => {
    view.present = on;
    applyView();
    changed();
  };
  const setQuiz = (/** @type {boolean} */ on) => {
    view.quiz = on;
    quizToggle.checked = on;
    applyView();
    changed();
  };
  /** Opens tour stop k: the view goes to its step (in a quiz, where its question is asked). */
  const openStop = (/** @type {number} */ k) => {
    if (k < 0 || k >= st.stops.length) return;
    tourOpen = k;
    tourSticky = true;
    send({ type: 'seek', step: stopStep(st.stops[k], view.quiz && !answered.has(k)) });
    changed();
  };
  const tourNext = () => openStop(nextStop(st.stops, tourOpen));
  const tourPrev = () => openStop(prevStop(st.stops, tourOpen));
  const gotoSlot = () => {
    const v = gotoInput.value.trim().replace(/[,_\s]/g, '');
    if (!/^\d+$/.test(v)) { gotoInput.setCustomValidity('a file block index: digits'); gotoInput.reportValidity(); return; }
    const slot = Number(v);
    // A slot outside the range says so, rather than the view jumping to an end of it.
    if (st.ready && (slot < st.range.start || slot >= st.range.end)) {
      gotoInput.setCustomValidity(st.range.end > st.range.start
        ? `slot ${int(slot)} is outside this run: slots ${int(st.range.start)}…${int(st.range.end - 1)}`
        : 'this run has no slots');
      gotoInput.reportValidity();
      return;
    }
    gotoInput.setCustomValidity('');
    nav({ type: 'gotoSlot', slot });
  };
  const answer = (/** @type {string} */ a) => {
    const k = openQuestion(st.stops, st.step, answered);
    if (k < 0) return;
    // Only an answer the question can take counts: a slip leaves the question open (quiz.js).
    const c = checkAnswer(/** @type {import('./tour.js').Question} */ (st.stops[k].question), a, st.n);
    answerHint = c.ok ? '' : c.hint;
    dirty = true;
    if (!c.ok) return;
    waitingVerdict = k;
    sock.send({ type: 'answer', stop: k, answer: c.value });
  };

  $('btn-play').addEventListener('click', playPause);
  // The draw-time figure starts over here (benchmarks press it before they play).
  $('frame-reset').addEventListener('click', () => { meter.reset(); $('frame-p95').textContent = '0'; $('frame-samples').textContent = '0'; });
  $('btn-step').addEventListener('click', () => nav({ type: 'step', n: 1 }));
  $('btn-back').addEventListener('click', () => nav({ type: 'step', n: -1 }));
  $('btn-flush').addEventListener('click', () => nav({ type: 'nextCall' }));
  $('btn-end').addEventListener('click', () => nav({ type: 'end' }));
  $('btn-reset').addEventListener('click', () => nav({ type: 'reset' }));
  $('tour-next').addEventListener('click', tourNext);
  $('tour-prev').addEventListener('click', tourPrev);
  $('btn-present').addEventListener('click', () => setPresent(!view.present));
  quizToggle.addEventListener('change', () => setQuiz(quizToggle.checked));
  colourSel.addEventListener('change', () => setColour(colourSel.value));
  paceSel.addEventListener('change', () => setPace(paceSel.value));
  speed.addEventListener('input', () => setSpeed(Number(speed.value)));
  if (modeSel) modeSel.addEventListener('change', () => setMode(modeSel.value));
  $('goto-slot-form').addEventListener('submit', (e) => { e.preventDefault(); gotoSlot(); });
  gotoInput.addEventListener('input', () => gotoInput.setCustomValidity(''));
  $('quiz-form').addEventListener('submit', (e) => { e.preventDefault(); answer(quizInput.value); });
  $('quiz-choices').addEventListener('click', (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest('button[data-value]');
    if (!(b instanceof HTMLButtonElement)) return;
    quizInput.value = b.dataset.value || '';
    answer(quizInput.value);
  });
  const srcLink = $('cost-source-link');
  srcLink.addEventListener('click', (e) => {
    e.preventDefault();
    const box = $('cost-source');
    box.hidden = !box.hidden;
    srcLink.setAttribute('aria-expanded', String(!box.hidden));
  });
  let seekTimer = 0;
  seek.addEventListener('input', () => {
    dragging = true;
    $('step-now').textContent = int(Number(seek.value));
    if (!seekTimer) {
      seekTimer = window.setTimeout(() => { seekTimer = 0; nav({ type: 'seek', step: Number(seek.value) }); }, 80);
    }
  });
  seek.addEventListener('change', () => {
    dragging = false;
    // The drag's pending seek would read the slider after a frame has put the old step back in
    // it, and seek there: the change is the last word.
    clearTimeout(seekTimer);
    seekTimer = 0;
    nav({ type: 'seek', step: Number(seek.value) });
  });
  const preset = /** @type {HTMLSelectElement|null} */ (doc.getElementById('preset'));
  preset?.addEventListener('change', () => {
    if (!preset.value) return;
    const [o, l] = preset.value.split(':');
    /** @type {HTMLInputElement} */ ($('f-offset')).value = o;
    /** @type {HTMLInputElement} */ ($('f-length')).value = l;
    /** @type {HTMLFormElement} */ (preset.form).submit();
  });

  /** Reports whether a key on target t belongs to t (typing, a select's arrows, a checkbox's space). */
  const ownsKey = (/** @type {HTMLElement} */ t, /** @type {string} */ k) => {
    const tag = t && t.tagName;
    if (tag === 'SELECT' || tag === 'TEXTAREA') return true;
    if (tag !== 'INPUT') return false;
    const type = /** @type {HTMLInputElement} */ (t).type;
    if (type === 'checkbox') return k === ' ';
    return type !== 'range';
  };
  doc.addEventListener('keydown', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (ownsKey(t, e.key)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (!driving && DRIVE_KEYS.has(e.key)) return;
    // Enter on a focused button is the button's.
    if (e.key === 'Enter') return;
    const onSlots = t === slotsCanvas;
    const onSIT = t === sitCanvas;
    let handled = true;
    switch (e.key) {
      case ' ': playPause(); break;
      case 'ArrowRight': nav(e.shiftKey ? { type: 'nextCall' } : { type: 'step', n: 1 }); break;
      case 'ArrowLeft': nav({ type: 'step', n: -1 }); break;
      case 'ArrowUp': case 'ArrowDown': {
        const d = e.key === 'ArrowUp' ? -1 : 1;
        if (onSlots) { slots.rowScroll = Math.max(0, (slots.rowScroll ?? slots.layout.firstRow) + d); dirty = true; }
        else if (onSIT) { sit.scroll = Math.max(0, sit.scroll + d); dirty = true; }
        else handled = false;
        break;
      }
      case 'Home': nav({ type: 'reset' }); break;
      case 'End': nav({ type: 'end' }); break;
      case 'PageDown': case 'n': tourNext(); break;
      case 'PageUp': case 'p': tourPrev(); break;
      case 'P': setPresent(!view.present); break;
      case '[': stepPace(-1); break;
      case ']': stepPace(1); break;
      case 'b': case 'B': setMode(nextMode(params.mode)); break;
      case 'c': setColour(COLOUR_BY[(COLOUR_BY.indexOf(view.colour.by) + 1) % COLOUR_BY.length]); break;
      case 'q': setQuiz(!view.quiz); break;
      // g moves the focus on keyup: moved now, the key's character would land in the box.
      case 'g': break;
      case '+': case '=': slots.cell = Math.min(48, slots.cell + 4); dirty = true; break;
      case '-': slots.cell = Math.max(6, slots.cell - 4); dirty = true; break;
      default: handled = false;
    }
    if (handled) e.preventDefault();
  });
  // A focused button would also take the space bar as a click on keyup,
  // undoing the play/pause the keydown just did.
  doc.addEventListener('keyup', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (e.key === ' ' && t?.tagName === 'BUTTON') e.preventDefault();
    if (e.key === 'g' && !e.ctrlKey && !e.metaKey && !e.altKey && !ownsKey(t, 'g')) { gotoInput.focus(); gotoInput.select(); }
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
  // A panel that grows or shrinks inside a body of the same size (a mode switch hides a lane)
  // shows another number of rows: draw again, as a fresh load would.
  const redraw = new ResizeObserver(() => { dirty = true; });
  redraw.observe(slotsCanvas);
  redraw.observe(sitCanvas);

  $('cost-formula').textContent = formula(MODEL);
  $('cost-source').textContent = `t = a × blocks + b × calls, fitted exactly through two points: ${MEASURED.source}. `
    + `The difference, ${fmtTime(MEASURED.perBlock.ms - MEASURED.batched.ms)} for ${int(MEASURED.perBlock.calls - MEASURED.batched.calls)} fewer calls, gives b = ${(MODEL.b * 1000).toFixed(4)} µs a call; `
    + `a = ${(MODEL.a * 1000).toFixed(4)} µs a block is the rest. Other machines, kernels and layouts differ: compare the modes, not the absolute times.`;

  /** @returns {PresenterState} */
  const presenterState = () => ({
    step: st.step, playing: st.playing, pace: st.pace, mode: params.mode, stop: tourOpen, quiz: view.quiz,
    question: view.quiz ? openQuestion(st.stops, st.step, answered) : -1, colourBy: view.colour.by, present: view.present,
  });

  // The draw loop: only when something changed or a flash is fading.
  let lastURL = 0;
  let lastP95 = 0;
  /** @type {{step: number, playing: boolean, done: boolean, verdicts: number, verdict: string}} */
  const spoken = { step: -1, playing: false, done: false, verdicts: 0, verdict: '' };
  const loop = () => {
    const now = performance.now();
    if (st.ready && st.flash.size && st.ageFlash(now)) dirty = true;
    if (dirty) {
      dirty = false;
      const t0 = performance.now();
      // The tour follows the step unless the user opened a stop.
      const q = view.quiz ? openQuestion(st.stops, st.step, answered) : -1;
      if (q >= 0) tourOpen = q;
      else if (!tourSticky) tourOpen = stopAt(st.stops, st.step);
      slots.draw(st, fitSlots.get(), now);
      sit.draw(st, fitSIT.get());
      markers.draw(st, fitMarkers.get(), view.quiz);
      markersDirty = false;
      updateDOM(doc, st, { status, notice, dragging, seek, paceSel, matcher, view, tourOpen, q, answered, verdicts, score, waitingVerdict, slots, sit, driving, callLog: opts.callLog || null, answerHint });
      meter.add(performance.now() - t0);
      if (st.flash.size) dirty = true;
      speak(doc, st, spoken, verdicts, lastVerdictSpeech, view.quiz && q >= 0 ? q : -1);
    } else if (markersDirty) {
      markers.draw(st, fitMarkers.get(), view.quiz);
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
      updateURL(params, st, view);
    }
    requestAnimationFrame(loop);
  };
  speed.setAttribute('aria-valuetext', rate(SPEEDS[Number(speed.value)]));
  paceSel.value = params.pace || DEFAULT_PACE;
  applyView();
  requestAnimationFrame(loop);

  return {
    state: st,
    views: { slots, sit },
    presenterState,
    applyPresenterState(s, o = {}) {
      if (typeof s.colourBy === 'string' && s.colourBy !== view.colour.by) { view.colour.by = colourBy(s.colourBy); colourSel.value = view.colour.by; }
      if (typeof s.present === 'boolean') view.present = s.present;
      if (typeof s.quiz === 'boolean') { view.quiz = s.quiz; quizToggle.checked = s.quiz; }
      applyView();
      if (typeof s.stop === 'number') { tourOpen = s.stop; tourSticky = s.stop >= 0; }
      if (o.drive) {
        if (typeof s.mode === 'string' && s.mode !== params.mode) setMode(s.mode);
        if (typeof s.pace === 'string' && s.pace !== st.pace && isPace(s.pace)) setPace(s.pace);
        if (typeof s.step === 'number' && s.step !== st.step) sock.send({ type: 'seek', step: s.step });
        if (typeof s.playing === 'boolean' && s.playing !== st.playing) sock.send({ type: s.playing ? 'play' : 'pause' });
      }
      dirty = true;
    },
    onPresenterChange(fn) { watchers.push(fn); },
    send(msg) { sock.send(msg); },
    params(change = {}) { return Object.assign(params, change); },
    reconnect() {
      sock.stop();
      sock.resume();
    },
    setDriving(on) {
      driving = on;
      for (const id of DRIVE_CONTROLS) {
        const el = /** @type {HTMLButtonElement|null} */ (doc.getElementById(id));
        if (el) el.disabled = !on;
      }
      doc.querySelectorAll('#goto-slot-form button').forEach((b) => { /** @type {HTMLButtonElement} */ (b).disabled = !on; });
      dirty = true;
    },
    focusSlot() {
      if (!st.ready || st.n === 0) return null;
      const off = Math.min(st.n - 1, Math.max(0, slots.pin ?? (st.cursor() - st.range.start)));
      return { index: st.range.start + off, now: st.slots[off], before: st.initial[off], pinned: slots.pin !== null };
    },
  };
}

/**
 * Fills the legend's address colours for a colouring.
 * @param {Document} doc
 * @param {string} by
 */
function legendColours(doc, by) {
  const el = doc.getElementById('legend-colours');
  if (el) paintLegend(doc, el, by, (t, slug) => termButton(doc, t, slug));
  const brk = doc.getElementById('legend-brk');
  if (brk) brk.hidden = by !== 'run';
}

/**
 * Writes what the hello tells once: modes, the file's compression, the tour's size.
 * @param {Document} doc
 * @param {RunState} st
 */
function helloDOM(doc, st) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const both = st.modes.length > 1;
  $('slots-mode').textContent = both ? 'both modes: the slots end alike' : `${st.modes[0]} mode`;
  $('sit-mode').textContent = both ? 'columns: per-block │ batched' : `${st.modes[0]} mode`;
  $('calls-mode').textContent = both ? 'per-block and batched' : `${st.modes[0]} mode`;
  $('counters-mode').textContent = both ? 'before · per-block · batched' : `before · ${st.modes[0]}`;
  $('tour-count').textContent = String(st.stops.length);
  doc.body.classList.toggle('one-mode', !both);
  doc.body.dataset.modes = st.modes.join(' ');
  const c = $('file-compressed');
  if (st.info.compressed) {
    c.hidden = false;
    c.textContent = compressedText(st);
  } else {
    c.hidden = true;
  }
  const md = $('markers-desc');
  const flushes = st.markers.filter((m) => m.kind === 'flush').length;
  md.textContent = `${st.stops.length} tour stops, ${st.chunks.length} dnode chunks, ${st.markersThinned ? 'some of the' : ''} ${flushes} call markers`;
}

/**
 * Describes a slot for the tooltip and the canvas's text line.
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
    lines.push(`chunk ${ci + 1} of ${st.chunks.length}: ${c.path}, slot ${idx - c.start} of ${c.len}`);
    if (c.missing) lines.push(`(+ ${c.missing} node${c.missing > 1 ? 's' : ''} created by ALLOC_NODE)`);
  }
  lines.push(slotValueText(st, off, v));
  const b = st.initial[off];
  if (b !== v) lines.push(`before the run: ${slotValueText(st, off, b)}`);
  if (st.bad.has(off)) lines.push('✕ rejected by f2fs_is_valid_blkaddr');
  if (st.info.image) lines.push('click to pin it: links to its block and its place on the file page show above the map');
  return lines.join('\n');
}

/**
 * @param {RunState} st
 * @param {number} off
 * @param {number} v
 * @returns {string}
 */
function slotValueText(st, off, v) {
  if (v === NULL_ADDR) return 'NULL_ADDR: a hole';
  if (v === NEW_ADDR) return 'NEW_ADDR: reserved, reads as zeros';
  if (v === COMPRESS_ADDR) return 'COMPRESS_ADDR: a compressed-cluster marker';
  const g = st.geometry;
  const seg = st.segnoOf(v);
  if (seg < 0) return `address ${v}, outside the main area`;
  const run = st.runs ? st.runs.runAt(off) : -1;
  return `address ${v}, segment ${seg}, block offset ${(v - g.segment0Blkaddr) % g.blocksPerSeg}${run >= 0 ? `, physical run ${run + 1} of ${st.runs?.count}` : ''}`;
}

/**
 * @typedef {object} UI
 * @property {string} status
 * @property {string} notice
 * @property {boolean} dragging
 * @property {HTMLInputElement} seek
 * @property {HTMLSelectElement} paceSel
 * @property {TermMatcher|null} matcher
 * @property {import('./render.js').ViewOptions} view
 * @property {number} tourOpen
 * @property {number} q the open quiz question's stop, or -1
 * @property {Set<number>} answered
 * @property {Map<number, string>} verdicts
 * @property {{right: number, asked: number}} score
 * @property {number} waitingVerdict
 * @property {SlotsView} slots
 * @property {SITView} sit
 * @property {boolean} driving false while a follower mirrors its presenter
 * @property {import('./calllog.js').CallLog|null} callLog
 * @property {string} answerHint why the last answer was not sent, or ''
 */

/**
 * Writes the model's numbers into the page.
 * @param {Document} doc
 * @param {RunState} st
 * @param {UI} ui
 */
function updateDOM(doc, st, ui) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const text = (/** @type {string} */ id, /** @type {string} */ s) => { const el = $(id); if (el.textContent !== s) el.textContent = s; };
  if (!ui.dragging) {
    ui.seek.value = String(st.step);
    text('step-now', int(st.step));
  }
  ui.seek.setAttribute('aria-valuetext', `step ${int(st.step)} of ${int(st.totalSteps)}`);
  // The pace the server plays at, unless the user is choosing one.
  const pv = paceValue(st.pace);
  if (ui.paceSel.value !== pv && doc.activeElement !== ui.paceSel) ui.paceSel.value = pv;
  text('time-left', st.ready ? timeLeftText(st) : '');
  $('time-left').title = st.pace ? `time left at this pace (${rate(st.stepsPerSecond)})` : `time left at ${rate(st.stepsPerSecond)}`;
  const play = $('btn-play');
  text('btn-play', st.playing ? '❚❚ pause' : '▶ play');
  play.setAttribute('aria-pressed', String(st.playing));
  $('narration').setAttribute('aria-busy', String(st.playing));
  $('counters-big').setAttribute('aria-busy', String(st.playing));

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

  // The quiz hides the counters and calls while a question is open.
  const veiled = ui.view.quiz && ui.q >= 0;
  doc.body.classList.toggle('veiled', veiled);

  const pb = st.per['per-block'];
  const bt = st.per.batched;
  // Plain digits in the headline figures: scripts and tests read them.
  text('stat-calls-per-block', pb ? String(pb.counters.calls) : '–');
  text('stat-calls-batched', bt ? String(bt.counters.calls) : '–');
  const blocks = Math.max(pb ? pb.counters.blocksInvalidated : 0, bt ? bt.counters.blocksInvalidated : 0);
  text('stat-blocks-invalidated', pb || bt ? String(blocks) : '–');
  /** @type {Array<[string, string]>} */
  const rows = [['calls', 'calls'], ['locks', 'sitLockAcquisitions'], ['prefree', 'segmentsPrefree']];
  for (const [id, key] of rows) {
    text(`c-pb-${id}`, pb ? int(pb.counters[key]) : '–');
    text(`c-bt-${id}`, bt ? int(bt.counters[key]) : '–');
  }
  text('c-pb-time', pb ? fmtTime(modelMs(pb.counters.blocksInvalidated, pb.counters.calls)) : '–');
  text('c-bt-time', bt ? fmtTime(modelMs(bt.counters.blocksInvalidated, bt.counters.calls)) : '–');
  const first = st.modes[0];
  if (first) {
    const t0 = st.sitTotals(first);
    text('c-sit-before', int(t0.before));
    text('c-pb-sit', pb ? int(st.sitTotals('per-block').now) : '–');
    text('c-bt-sit', bt ? int(st.sitTotals('batched').now) : '–');
  }
  const ss = st.slotStates();
  const states = (/** @type {{addr: number, new: number, null: number, compress: number}} */ c) =>
    `${int(c.addr)} · ${int(c.new)} · ${int(c.null)}${c.compress ? ` · ${int(c.compress)} compressed` : ''}`;
  text('c-slots-before', ss ? states(ss.before) : '…');
  text('c-slots-now', ss ? states(ss.now) : '…');
  const final = st.done;
  text('counters-heading', final ? 'at the end: before and after' : 'counters');
  $('counters-panel').classList.toggle('final', final);
  $('counters-panel').dataset.final = String(final);

  // Narration: one line per mode in the run, its terms linked.
  const seen = new Set();
  const narr = (/** @type {string} */ id, /** @type {any} */ ms) => {
    const p = $(id);
    p.hidden = !ms;
    if (!ms) return;
    let t = ms.narration || (st.step === 0 ? 'Press play, or → to step: the kernel has not started yet.' : '');
    if (veiled) t = VEILED_NARRATION;
    if (ui.notice) t = `⚠ ${ui.notice}`;
    const el = $(`${id}-text`);
    if (el.dataset.text !== t) {
      el.dataset.text = t;
      writeTerms(el, t, ui.matcher, seen);
    }
  };
  narr('narr-pb', pb);
  narr('narr-bt', bt);
  outcomeDOM(doc, st, ui.matcher);

  // Call lanes.
  const lanes = $('lanes');
  const key = st.modes.map((m) => {
    const ms = st.per[m];
    const last = ms.calls[ms.calls.length - 1];
    return `${m}:${ms.counters.calls}:${last ? last.join(',') : ''}:${ms.pending ? `${ms.pending.start},${ms.pending.len}` : ''}`;
  }).join('|') + (ui.callLog ? `|${ui.callLog.key()}` : '');
  if (lanes.dataset.key !== key) {
    lanes.dataset.key = key;
    lanes.replaceChildren(...st.modes.map((m) => lane(doc, m, st.per[m], st.modes.length, ui.callLog)));
  }
  const pl = (/** @type {number} */ n, /** @type {string} */ w) => `${int(n)} ${w}${n === 1 ? '' : 's'}`;
  text('slots-aside', st.ready ? `${pl(st.n, 'slot')} in ${pl(st.chunks.length, 'chunk')}${st.runs ? ` · ${pl(st.runs.count, 'physical run')}` : ''}` : '');
  const [a, b] = ui.sit.shown;
  text('sit-aside', st.ready ? sitAside(st, a, b) : '');
  text('slots-desc', st.ready && st.n > 0 ? cursorLine(st, ui.slots) : '');
  text('sit-desc', st.ready && !veiled ? sitLine(st) : '');
  tourDOM(doc, st, ui);
}

/**
 * The SIT panel's heading aside: how many segments the run touches, how many are listed.
 * @param {RunState} st
 * @param {number} a first shown (1-based)
 * @param {number} b last shown
 * @returns {string}
 */
function sitAside(st, a, b) {
  const listed = st.segOrder.size;
  const all = st.modes.length ? st.sitTotals(st.modes[0]).segments : listed;
  const n = Math.max(all, listed);
  let t = `${int(n)} segment${n === 1 ? '' : 's'}`;
  if (n > listed) t += ` (the first ${int(listed)} listed; totals count all)`;
  if (b < listed && b > 0) t += ` (${a}–${b} shown: ↑ ↓)`;
  return t;
}

/**
 * The slot panel's text line: where the cursor is and what it holds.
 * @param {RunState} st
 * @param {SlotsView} sv
 * @returns {string}
 */
function cursorLine(st, sv) {
  const off = Math.min(st.n - 1, Math.max(0, sv.pin ?? (st.cursor() - st.range.start)));
  const idx = st.range.start + off;
  const ci = st.chunkOf(idx);
  const c = st.chunks[ci];
  const where = sv.pin !== null ? 'pinned at' : 'cursor at';
  const chunk = c ? ` in ${c.path} (chunk ${ci + 1} of ${st.chunks.length})` : '';
  let s = `${where} slot ${int(idx)}${chunk}: ${slotValueText(st, off, st.slots[off])}`;
  const b = st.initial[off];
  if (b !== st.slots[off]) s += `; before the run ${slotValueText(st, off, b)}`;
  const bt = st.per.batched;
  if (bt && bt.pending) s += ` · pending run (${bt.pending.start}, ${bt.pending.len})`;
  return s;
}

/**
 * The SIT panel's text line: the segments changed most recently.
 * @param {RunState} st
 * @returns {string}
 */
function sitLine(st) {
  const segs = st.segmentsByActivity().slice(0, 3);
  if (!segs.length) return 'no segment touched';
  return segs.map((n) => {
    const per = st.modes.map((m) => {
      const s = st.per[m].segments.get(n);
      return s ? `${st.modes.length > 1 ? `${m} ` : ''}${s.valid} (${s.status})` : '';
    }).filter(Boolean).join(', ');
    const s0 = st.per[st.modes[0]].segments.get(n);
    return `segment ${n}: valid ${s0 ? s0.validBefore : '?'} before, now ${per}`;
  }).join(' · ');
}

/**
 * Says how the run's file is compressed: "compressed (lz4, cluster 4 blocks)".
 * @param {RunState} st
 * @returns {string}
 */
function compressedText(st) {
  return `compressed (${st.info.algorithm || 'unknown algorithm'}, cluster ${st.info.clusterSize} blocks)`;
}

/**
 * Writes the outcome line: what the run returned and why.
 * @param {Document} doc
 * @param {RunState} st
 * @param {TermMatcher|null} m
 */
function outcomeDOM(doc, st, m) {
  const el = /** @type {HTMLElement} */ (doc.getElementById('outcome'));
  let t = '';
  if (st.info.compressed && !st.done) {
    t = `This file is ${compressedText(st)}: f2fs refuses FALLOC_FL_ZERO_RANGE on compressed and pinned files, so the first step is EOPNOTSUPP.`;
  } else if (st.done) {
    const o = st.outcome;
    if (o === 'EOPNOTSUPP') {
      t = 'EOPNOTSUPP: f2fs refuses FALLOC_FL_ZERO_RANGE on compressed and pinned files (f2fs_fallocate checks before anything changes)';
      if (st.info.compressed) t += `, and this file is ${compressedText(st)}: a cluster's first slot may hold COMPRESS_ADDR, the compressed-cluster marker, not an address.`;
      else t += '.';
    } else if (o && o !== 'done') {
      const msg = st.modes.map((md) => st.per[md].message).find(Boolean);
      // A request refused before f2fs (length 0, a directory) is the VFS's or open(2)'s answer.
      const by = st.modes.map((md) => st.per[md].returnedBy).find(Boolean) || 'f2fs_zero_range';
      t = `${by} returns -${o}${msg ? `: the kernel logs "${msg}"` : ''}.`;
    } else if (o === 'done') {
      const pb = st.per['per-block'];
      const bt = st.per.batched;
      if (pb && bt) {
        const a = pb.counters.sitLockAcquisitions;
        const b = bt.counters.sitLockAcquisitions;
        t = `f2fs_zero_range returns 0: ${int(pb.counters.calls)} per-block calls against ${int(bt.counters.calls)} batched${b > 0 && a > b ? `, ${(a / b).toFixed(a / b >= 10 ? 0 : 1)}× fewer SIT lock holds` : ''}, and the same slots and SIT at the end.`;
      } else {
        const ms = st.per[st.modes[0]];
        t = `f2fs_zero_range returns 0: ${int(ms.counters.calls)} calls, ${int(ms.counters.blocksInvalidated)} blocks released.`;
      }
    }
  }
  el.hidden = !t;
  if (el.dataset.text !== t) {
    el.dataset.text = t;
    writeTerms(el, t, m);
  }
}

/**
 * Writes the tour panel: the open stop, or the open quiz question.
 * @param {Document} doc
 * @param {RunState} st
 * @param {UI} ui
 */
function tourDOM(doc, st, ui) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const text = (/** @type {string} */ id, /** @type {string} */ s) => { const el = $(id); if (el.textContent !== s) el.textContent = s; };
  const stops = st.stops;
  const k = ui.tourOpen;
  text('tour-pos', tourPosition(k, stops.length));
  /** @type {HTMLButtonElement} */ ($('tour-prev')).disabled = k <= 0 || !ui.driving;
  /** @type {HTMLButtonElement} */ ($('tour-next')).disabled = k >= stops.length - 1 || !ui.driving;
  const s = stops[k];
  const quiz = $('quiz');
  const q = ui.view.quiz && s && s.question && (ui.q === k || ui.verdicts.has(k)) ? s.question : null;
  const asking = q && ui.q === k;
  const key = `${st.hellos}:${k}:${asking}:${ui.verdicts.get(k) || ''}:${ui.waitingVerdict}:${ui.view.quiz}`;
  const body = $('tour-body');
  if (body.dataset.key !== key) {
    body.dataset.key = key;
    const title = $('tour-title');
    const tx = $('tour-text');
    if (!s) {
      title.textContent = stops.length ? 'Press n for the first stop' : '';
      tx.textContent = stops.length ? `The tour has ${stops.length} stops in this run: what the kernel does at each, tied to its code.` : '';
    } else if (asking) {
      // The stop's title would say what happens: the panel names only the question's place.
      const qp = questionPlace(stops, k);
      title.textContent = veiledTitle(qp.nth, qp.count);
      tx.textContent = '';
    } else {
      title.textContent = s.title;
      writeTerms(tx, s.text, ui.matcher);
    }
    quiz.hidden = !q;
    if (q) {
      $('quiz-question').textContent = q.text;
      const choices = $('quiz-choices');
      const opts = choicesOf(q);
      choices.replaceChildren(...opts.map((c) => {
        const b = doc.createElement('button');
        b.type = 'button';
        b.dataset.value = c;
        b.dataset.testid = 'quiz-choice';
        b.textContent = c;
        b.disabled = !asking;
        return b;
      }));
      const inp = /** @type {HTMLInputElement} */ ($('quiz-answer'));
      inp.disabled = !asking;
      // A choice is pressed, not typed: the text box is for numbers only.
      inp.hidden = opts.length > 0;
      /** @type {HTMLButtonElement} */ ($('quiz-submit')).hidden = opts.length > 0;
      inp.inputMode = q.kind === 'number' ? 'numeric' : 'text';
      if (asking && ui.waitingVerdict !== k) inp.value = '';
      /** @type {HTMLButtonElement} */ ($('quiz-submit')).disabled = !asking || ui.waitingVerdict === k;
      text('quiz-result', ui.verdicts.get(k) || (ui.waitingVerdict === k ? 'checking…' : ''));
      $('quiz-result').className = `result ${(ui.verdicts.get(k) || '').startsWith('correct') ? 'ok' : ui.verdicts.has(k) ? 'bad' : ''}`;
      // The verdict comes into view with the answer: the panel scrolls back to the question.
      if (ui.verdicts.has(k)) body.scrollTop = 0;
    }
    // The stop's terms, as a line of glossary buttons.
    const terms = $('tour-terms');
    terms.replaceChildren();
    if (s && s.terms && s.terms.length && !asking) {
      terms.append('terms: ');
      s.terms.forEach((t, i) => {
        if (i) terms.append(' · ');
        const e = doc.createElement('button');
        e.type = 'button';
        e.className = 'term';
        e.dataset.term = t;
        e.textContent = t.replace(/-/g, ' ');
        terms.append(e);
      });
    }
  }
  text('quiz-score', scoreText(ui.score));
  text('quiz-hint', ui.q === k ? ui.answerHint : '');
}

/**
 * Tells screen readers what changed, without flooding them while playing: the step's narration
 * and the counters when the view stops somewhere, the outcome at the end, a verdict.
 * @param {Document} doc
 * @param {RunState} st
 * @param {{step: number, playing: boolean, done: boolean, verdicts: number, verdict: string}} spoken
 *   (verdict: a verdict just said, which the next step's words repeat first, so the move to the
 *   step that reveals the answer does not cut it off)
 * @param {Map<number, string>} verdicts
 * @param {string} verdictSaid the last verdict as spoken, with the right answer
 * @param {number} asking the open quiz question's stop, or -1: the step's narration stays unsaid
 */
function speak(doc, st, spoken, verdicts, verdictSaid, asking) {
  if (!st.ready) return;
  const el = /** @type {HTMLElement} */ (doc.getElementById('sr-live'));
  let say = '';
  if (verdicts.size !== spoken.verdicts) {
    spoken.verdicts = verdicts.size;
    say = `Quiz: ${verdictSaid || [...verdicts.values()].pop()}`;
    spoken.verdict = say;
  } else if (st.done && !spoken.done) {
    say = /** @type {HTMLElement} */ (doc.getElementById('outcome')).textContent || 'done';
  } else if (st.playing !== spoken.playing) {
    say = st.playing ? 'Playing.' : `Paused at step ${int(st.step)}.`;
  } else if (!st.playing && st.step !== spoken.step) {
    const ms = st.per.batched || st.per[st.modes[0]];
    const counts = st.modes.map((m) => `${m} ${int(st.per[m].counters.calls)} calls`).join(', ');
    const q = asking >= 0 ? st.stops[asking].question : null;
    say = q ? `Step ${int(st.step)}. Question: ${q.text}` : `Step ${int(st.step)}. ${ms ? ms.narration : ''} ${counts}.`;
    if (spoken.verdict) say = `${spoken.verdict} ${say}`;
    spoken.verdict = '';
  }
  spoken.done = st.done;
  spoken.playing = st.playing;
  if (!st.playing) spoken.step = st.step;
  if (say && el.textContent !== say) el.textContent = say;
}

/**
 * Builds one mode's call lane: the pending run and the latest calls.
 * @param {Document} doc
 * @param {string} mode
 * @param {import('./state.js').ModeState} ms
 * @param {number} lanes how many lanes the panel shows
 * @param {import('./calllog.js').CallLog|null} log
 * @returns {HTMLElement}
 */
function lane(doc, mode, ms, lanes, log) {
  const el = doc.createElement('div');
  el.className = 'lane';
  el.dataset.mode = mode;
  const h = doc.createElement('h3');
  const name = doc.createElement('span');
  name.className = 'modename';
  name.textContent = mode;
  h.append(name, ` · ${int(ms.counters.calls)} call${ms.counters.calls === 1 ? '' : 's'}`);
  const p = doc.createElement('span');
  p.className = 'pending';
  if (mode === 'batched') {
    if (ms.pending) {
      const b = doc.createElement('b');
      b.textContent = `(blkstart ${ms.pending.start}, blklen ${ms.pending.len})`;
      p.append(' · pending run ', b);
    } else {
      p.textContent = ' · no pending run';
    }
  } else {
    p.textContent = ' · one call per block';
  }
  h.append(p);
  const ol = doc.createElement('ol');
  // The history's calls are numbered from the first call the mode made (0).
  const first = (ms.counters.calls || 0) - ms.calls.length;
  for (let i = ms.calls.length - 1; i >= Math.max(0, ms.calls.length - (lanes > 1 ? 3 : 6)); i--) {
    ol.append(callItem(doc, mode, first + i, ms.calls[i], log));
  }
  el.append(h, ol);
  return el;
}

/**
 * Keeps the address bar a permalink of the view.
 * @param {{image: string, path: string, offset: string, length: string, mode: string, keepSize: boolean, before: string[], sandbox: string}} params
 * @param {RunState} st
 * @param {import('./render.js').ViewOptions} view
 */
function updateURL(params, st, view) {
  const q = new URLSearchParams(location.search);
  q.set('mode', params.mode);
  q.set('step', String(st.step));
  if (!params.sandbox) {
    q.set('path', params.path);
    q.set('offset', st.info.offset || String(params.offset));
    q.set('length', st.info.length || String(params.length));
    q.delete('run');
    q.delete('before');
    for (const op of params.before) q.append('before', op);
    if (params.keepSize) q.set('keepSize', 'true');
  }
  if (isPace(st.pace) && st.pace !== DEFAULT_PACE) q.set('pace', st.pace); else q.delete('pace');
  if (view.colour.by !== 'run') q.set('colour', view.colour.by); else q.delete('colour');
  if (view.present) q.set('present', '1'); else q.delete('present');
  if (view.quiz) q.set('quiz', '1'); else q.delete('quiz');
  const url = `${location.pathname}?${q}`;
  if (url !== location.pathname + location.search) history.replaceState(null, '', url);
}

