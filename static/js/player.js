// The player page's entry module: builds the model (state.js), the canvases (render.js), the
// socket (connection.js), the tour and quiz (tourquiz.js) and the panels (panels.js), and wires
// them to the controls and keys (controls.js, keys.js, pointer.js), the live region (speech.js)
// and the URL (permalink.js). run.js starts it; a page that mirrors a presenter (rooms) uses the
// controller initRun returns (presenterState, applyPresenterState, onPresenterChange, send,
// onMessage). Each piece has one job and its own node tests; this module only wires them and
// runs the draw loop.
import { RunSocket } from './ws.js';
import { RunState } from './state.js';
import { SlotsView, SITView, MarkersView } from './render.js';
import { CanvasFit, Tooltip } from './canvas.js';
import { int, rate } from './fmt.js';
import { isPace, paceAfter, pacesFromMenu } from './pace.js';
import { MODEL, MEASURED, fmtTime, formula } from './cost.js';
import { nextMode } from './modeswitch.js';
import { COLOUR_BY, COLOUR_KEY, colourBy } from './colour.js';
import { loadGlossary, TermMatcher, Popover } from './glossary.js';
import { wireFigures } from './figure.js';
import { FrameMeter } from './frames.js';
import { TourQuiz } from './tourquiz.js';
import { veilOf, canvasView, NO_VEIL } from './quiz.js';
import { playerHandlers } from './connection.js';
import { keyAction, ownsKey } from './keys.js';
import { SPEEDS, speedIndex, parseGotoSlot, setDrivingControls, wireControls, guardLinks } from './controls.js';
import { wirePointer, CELL_MIN, CELL_MAX } from './pointer.js';
import { drawnBy } from './slotsview.js';
import { legendColours, helloDOM, updateDOM } from './panels.js';
import { speak, newSpoken } from './speech.js';
import { updateURL } from './permalink.js';
import { contract } from './contract.js';
import { quizKey, loadQuiz, saveQuiz } from './quizstore.js';
import { stopSlot } from './tour.js';

export { FrameMeter };

/**
 * What a presenter's page shows beyond the run itself: the state a room mirrors on its
 * followers' pages.
 * @typedef {object} PresenterState
 * @property {number} step
 * @property {boolean} playing
 * @property {string} pace one of the paces the server takes (pace.js) or "" (a custom speed)
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
  const paceSel = /** @type {HTMLSelectElement} */ ($('pace'));
  // The paces the server takes: its pace menu lists them.
  const paces = pacesFromMenu(paceSel);
  // Offsets and lengths stay decimal strings: Number() would round 2^63−1.
  const params = {
    image: ds.image || '', path: ds.path || '', op: ds.op || contract().ops.zero, offset: ds.offset || '0', length: ds.length || '',
    mode: ds.mode || contract().modes.both, keepSize: ds.keepSize === 'true', step: Number(ds.step || 0),
    before: /** @type {string[]} */ (JSON.parse(ds.before || '[]')),
    pace: isPace(paces, url.get('pace') || '') ? /** @type {string} */ (url.get('pace')) : '',
    sandbox: ds.sandbox || '',
    // A follower's page (rooms): the room code. ws.js may connect such a page to /ws/follow.
    follow: ds.follow || '',
  };
  Object.assign(params, opts.params || {});
  let runEnd = ds.runEnd === 'true';
  const st = new RunState();
  const tq = new TourQuiz();
  // A follower mirrors its presenter: its page cannot hold the view at a question.
  tq.held = !params.follow;
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
  const modeSel = /** @type {HTMLSelectElement|null} */ (doc.getElementById('f-mode'));
  const colourSel = /** @type {HTMLSelectElement} */ ($('colour-by'));
  const quizToggle = /** @type {HTMLInputElement} */ ($('quiz-toggle'));
  const gotoInput = /** @type {HTMLInputElement} */ ($('goto-slot'));
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
  // The socket knows the quiz: the server holds the view and withholds the answers (ws.js).
  params.quiz = view.quiz && !params.follow;
  // A solo quiz's progress for this run survives a reload (quizstore.js).
  let store = null;
  try { store = window.sessionStorage; } catch { /* no storage */ }
  const saveProgress = () => {
    if (params.follow || !view.quiz) return;
    saveQuiz(store, quizKey(params), { answered: [...tq.answered], verdicts: [...tq.verdicts], score: tq.score });
  };
  const restoreProgress = () => {
    const saved = params.follow ? null : loadQuiz(store, quizKey(params));
    if (!saved) return;
    for (const k of saved.answered) tq.answered.add(k);
    for (const [k, v] of saved.verdicts) tq.verdicts.set(k, v);
    tq.score = saved.score;
    tq.base = { ...saved.score };
  };
  if (params.quiz) {
    restoreProgress();
    params.answered = [...tq.answered].join(',');
  }

  let status = 'connecting';
  let driving = true;
  let notice = '';
  let noticeTimer = 0;
  let dirty = true;
  let markersDirty = true;
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

  // Presenter mode on a small screen drops the secondary panels; "all panels" brings them back.
  let allPanels = false;
  const applyView = () => {
    doc.body.classList.toggle('present', view.present);
    doc.body.classList.toggle('all-panels', allPanels);
    $('btn-panels').setAttribute('aria-pressed', String(allPanels));
    doc.body.classList.toggle('quiz-on', view.quiz);
    $('btn-present').setAttribute('aria-pressed', String(view.present));
    $('quiz-score-line').hidden = !view.quiz;
    view.version++;
    markersDirty = true;
    legendColours(doc, drawnBy(view));
    dirty = true;
  };
  // The quiz holds the view at an unanswered question (tourquiz.js hold).
  const hold = () => {
    const s = tq.hold(st.stops, st.step, view.quiz, st.playing);
    if (s >= 0) sock.send({ type: 'seek', step: s });
  };

  const sock = new RunSocket(params, playerHandlers({
    st, tq, view, params,
    send: (m) => sock.send(m),
    takeRunEnd: () => { const e = runEnd; runEnd = false; return e; },
    presenter: () => doc.body.classList.contains('room-presenter'),
    shown: () => {
      if (modeSel) modeSel.value = st.mode;
      seek.max = String(st.totalSteps);
      $('step-total').textContent = int(st.totalSteps);
      slots.pin = null;
      helloDOM(doc, st);
    },
    redraw: () => { dirty = true; markersDirty = true; },
    changed,
    notify: (text, fatal) => {
      notice = text;
      clearTimeout(noticeTimer);
      if (!fatal) noticeTimer = window.setTimeout(() => { notice = ''; dirty = true; }, 4000);
      dirty = true;
    },
    status: (s) => { status = s; dirty = true; },
    hooks: { ...opts, onMessage: (m) => { if (m.type === 'quiz') saveProgress(); if (opts.onMessage) opts.onMessage(m); } },
  }), () => {
    // A new connection: the server's quiz counts from 0 and asks again what it is not told of.
    tq.newConnection();
    params.answered = [...tq.answered].join(',');
    return st.step;
  });
  sock.connect();
  // A closed tab ends its run on the server; a page restored from the
  // back-forward cache opens a new one at the step it showed.
  window.addEventListener('pagehide', () => sock.stop());
  window.addEventListener('pageshow', (e) => { if (e.persisted) sock.resume(); });

  // Controls. Moving the view by hand lets the tour follow the step again.
  const send = (/** @type {object} */ m) => { slots.rowScroll = null; sock.send(m); };
  const nav = (/** @type {object} */ m) => { tq.unstick(); send(m); changed(); };
  const playPause = () => nav({ type: st.playing ? 'pause' : 'play' });
  const setSpeed = (/** @type {number} */ i) => {
    const k = speedIndex(i);
    speed.value = String(k);
    speed.setAttribute('aria-valuetext', rate(SPEEDS[k]));
    sock.send({ type: 'speed', stepsPerSecond: SPEEDS[k] });
    changed();
  };
  const setPace = (/** @type {string} */ p) => {
    if (!isPace(paces, p)) return;
    paceSel.value = p;
    params.pace = p;
    sock.send({ type: 'pace', pace: p });
    changed();
  };
  /** Shows a notice for a few seconds. */
  const tell = (/** @type {string} */ text) => {
    notice = text;
    clearTimeout(noticeTimer);
    noticeTimer = window.setTimeout(() => { notice = ''; dirty = true; }, 4000);
    dirty = true;
  };
  const setMode = (/** @type {string} */ m) => {
    // The server refuses a mode change while its quiz holds the view (web/quizhold.go): say why here.
    if (view.quiz && st.hold && !params.follow) {
      if (modeSel) modeSel.value = st.mode;
      tell('The quiz is on: the other mode would show this run\'s answers. Answer its questions, or turn the quiz off, to change the mode.');
      return;
    }
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
    // A follower's quiz is its presenter's (room.js mirrors it): the page cannot leave it.
    if (params.follow && driving === false) {
      quizToggle.checked = view.quiz;
      tell('The presenter runs the quiz in this room.');
      return;
    }
    view.quiz = on;
    quizToggle.checked = on;
    applyView();
    // The socket's quiz: a presenter's room hears it as the "ui" control (room.js); a solo page
    // opens a new connection with quiz=1, or without it.
    const presenting = doc.body.classList.contains('room-presenter');
    if (params.quiz !== on) {
      params.quiz = on;
      if (on) restoreProgress();
      if (!presenting && !params.follow && st.ready) { sock.stop(); sock.resume(); }
    }
    if (st.ready) hold();
    changed();
  };
  /** Opens tour stop k: the view goes to its step (in a quiz, where its question is asked). */
  const openStop = (/** @type {number} */ k) => {
    const step = tq.openStop(st.stops, k, view.quiz);
    if (step < 0) return;
    send({ type: 'seek', step });
    changed();
  };
  const tourNext = () => openStop(tq.nextStop(st.stops, st.step, view.quiz));
  const tourPrev = () => openStop(tq.prevStop(st.stops));
  const gotoSlot = (/** @type {string} */ raw) => {
    const r = parseGotoSlot(raw, st);
    if ('error' in r) { gotoInput.setCustomValidity(r.error); gotoInput.reportValidity(); return; }
    gotoInput.setCustomValidity('');
    nav({ type: 'gotoSlot', slot: r.slot });
  };
  const answer = (/** @type {string} */ a) => {
    // Only an answer the question can take counts: a slip leaves the question open (quiz.js).
    const m = tq.answer(st.stops, st.step, a, st.n);
    dirty = true;
    if (m) sock.send(m);
  };

  /** What each key's action does (keys.js says which key asks for which). */
  /** @type {Record<import('./keys.js').Action, () => void>} */
  const actions = {
    play: playPause,
    step: () => nav({ type: 'step', n: 1 }),
    flush: () => nav({ type: 'nextCall' }),
    back: () => nav({ type: 'step', n: -1 }),
    'slots-up': () => { slots.rowScroll = Math.max(0, (slots.rowScroll ?? slots.layout.firstRow) - 1); dirty = true; },
    'slots-down': () => { slots.rowScroll = Math.max(0, (slots.rowScroll ?? slots.layout.firstRow) + 1); dirty = true; },
    'sit-up': () => { sit.scroll = Math.max(0, sit.scroll - 1); dirty = true; },
    'sit-down': () => { sit.scroll = Math.max(0, sit.scroll + 1); dirty = true; },
    reset: () => nav({ type: 'reset' }),
    end: () => nav({ type: 'end' }),
    'next-stop': tourNext,
    'prev-stop': tourPrev,
    present: () => setPresent(!view.present),
    slower: () => setPace(paceAfter(paces, st.pace, -1)),
    faster: () => setPace(paceAfter(paces, st.pace, 1)),
    mode: () => setMode(nextMode(params.mode)),
    colour: () => setColour(COLOUR_BY[(COLOUR_BY.indexOf(view.colour.by) + 1) % COLOUR_BY.length]),
    quiz: () => setQuiz(!view.quiz),
    goto: () => {},
    'zoom-in': () => { slots.cell = Math.min(CELL_MAX, slots.cell + 4); dirty = true; },
    'zoom-out': () => { slots.cell = Math.max(CELL_MIN, slots.cell - 4); dirty = true; },
  };
  $('btn-panels').addEventListener('click', () => { allPanels = !allPanels; applyView(); });
  const drag = wireControls(doc, {
    actions, nav, setQuiz, setColour, setPace, setSpeed, setMode, gotoSlot, answer,
    resetMeter: () => { meter.reset(); $('frame-p95').textContent = '0'; $('frame-samples').textContent = '0'; },
  });
  doc.addEventListener('keydown', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    const a = keyAction(e, { target: t, driving, onSlots: t === slotsCanvas, onSIT: t === sitCanvas });
    if (!a) return;
    actions[a]();
    e.preventDefault();
  });
  // A focused button would also take the space bar as a click on keyup,
  // undoing the play/pause the keydown just did.
  doc.addEventListener('keyup', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (e.key === ' ' && t?.tagName === 'BUTTON') e.preventDefault();
    if (e.key === 'g' && !e.ctrlKey && !e.metaKey && !e.altKey && !ownsKey(t, 'g')) { gotoInput.focus(); gotoInput.select(); }
  });

  wirePointer({ slotsCanvas, sitCanvas, st, slots, sit, tip, redraw: () => { dirty = true; } });
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
    step: st.step, playing: st.playing, pace: st.pace, mode: params.mode, stop: tq.open, quiz: view.quiz,
    question: tq.question(st.stops, st.step, view.quiz), colourBy: view.colour.by, present: view.present,
  });

  // The draw loop: only when something changed or a flash is fading.
  let lastURL = 0;
  let lastP95 = 0;
  let canvasKey = '';
  let linksWhy = '';
  const spoken = newSpoken();
  const loop = () => {
    const now = performance.now();
    if (st.ready && st.flash.size && st.ageFlash(now)) dirty = true;
    if (dirty) {
      dirty = false;
      const t0 = performance.now();
      // The tour follows the step unless the user opened a stop.
      const q = tq.follow(st.stops, st.step, view.quiz);
      // At a stop, the view points at the slot its text is about (tour.js stopSlot).
      st.at = st.ready ? stopSlot(st.stops, tq.open, st.step, st.range) : null;
      // What the open question withholds (player.Withholds), for every view below.
      const veil = view.quiz ? veilOf(st.stops, q, st.step) : NO_VEIL;
      view.veil = veil;
      const linksOff = veil.stop >= 0 ? 'answer the open question first: the comparison shows the calls'
        : !driving ? 'you follow a room: detach (f) to leave it' : '';
      if (linksOff !== linksWhy) { linksWhy = linksOff; guardLinks(doc, linksOff); }
      const cv = canvasView(veil, view.colour.by);
      const ck = `${cv.plain}:${cv.bounds}:${cv.sit}`;
      if (ck !== canvasKey) {
        canvasKey = ck;
        view.colour.plain = cv.plain;
        view.colour.bounds = cv.bounds;
        view.version++;
        legendColours(doc, drawnBy(view));
      }
      if (!cv.freeze) slots.draw(st, fitSlots.get(), now);
      if (!cv.sit) { const f = fitSIT.get(); f.ctx.clearRect(0, 0, f.w, f.h); } else if (!cv.freeze) sit.draw(st, fitSIT.get());
      markers.draw(st, fitMarkers.get(), view.quiz);
      markersDirty = false;
      updateDOM(doc, st, { status, notice, dragging: drag.dragging, seek, paceSel, matcher, view, tq, q, slots, sit, driving, callLog: opts.callLog || null });
      meter.add(performance.now() - t0);
      if (st.flash.size) dirty = true;
      speak(doc, st, spoken, tq.verdicts, tq.speech, q);
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
    // A view past an open question is on its way back to it: its step is no permalink.
    if (st.ready && !view.veil?.beyond && now - lastURL > (st.playing ? 1000 : 150)) {
      lastURL = now;
      updateURL(params, st, view, paces);
    }
    requestAnimationFrame(loop);
  };
  speed.setAttribute('aria-valuetext', rate(SPEEDS[Number(speed.value)]));
  paceSel.value = params.pace || paces.def;
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
      if (typeof s.stop === 'number') { tq.open = s.stop; tq.sticky = s.stop >= 0; }
      // The presenter's open question: a follower's page keeps it open over whatever step the
      // presenter's frames show on their way back to it.
      if (typeof s.question === 'number') tq.asked = s.question;
      if (o.drive) {
        if (typeof s.mode === 'string' && s.mode !== params.mode) setMode(s.mode);
        if (typeof s.pace === 'string' && s.pace !== st.pace) setPace(s.pace);
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
      tq.held = on;
      setDrivingControls(doc, on);
      dirty = true;
    },
    focusSlot() {
      if (!st.ready || st.n === 0) return null;
      const off = Math.min(st.n - 1, Math.max(0, slots.pin ?? (st.pointer() - st.range.start)));
      return { index: st.range.start + off, now: st.slots[off], before: st.initial[off], pinned: slots.pin !== null };
    },
  };
}
