// The player's panels as text: the step counter and status, the headline figures and counters,
// the narration, the outcome, the call lanes, the slot and SIT text lines, the tour and the quiz.
// DOM writes only, from the model (state.js), the tour and quiz session (tourquiz.js) and the view's
// options; the sentences come from describe.js. Tested in static/jstest/panels.test.js on a fake
// document.
import { int, rate, showCount } from './fmt.js';
import { timeLeftText, paceValue } from './pace.js';
import { modelMs, fmtTime } from './cost.js';
import { tourPosition, scoreText } from './tour.js';
import { writeTerms, termButton } from './glossary.js';
import { legendColours as paintLegend } from './palette.js';
import { callItem } from './calllog.js';
import { VEILED_NARRATION, veiledTitle, questionPlace, choicesOf, withholds, veilOf, WITHHOLD, NO_VEIL } from './quiz.js';
import {
  plural, cursorLine, sitLine, sitAside, slotsAside, statesText, outcomeText, markersText,
} from './describe.js';
import { contract, playedOf } from './contract.js';
import { blockWord } from './state.js';

const { perBlock: PER_BLOCK, batched: BATCHED } = contract().modes;

/** @typedef {import('./state.js').RunState} RunState */

/**
 * What the panels show beyond the model.
 * @typedef {object} UI
 * @property {string} status the socket's status
 * @property {string} notice a transient error, or ''
 * @property {boolean} dragging the seek slider is being dragged (the step counter follows it)
 * @property {HTMLInputElement} seek
 * @property {HTMLSelectElement} paceSel
 * @property {import('./glossary.js').TermMatcher|null} matcher
 * @property {import('./render.js').ViewOptions} view
 * @property {import('./tourquiz.js').TourQuiz} tq the open stop, the answers and verdicts
 * @property {number} q the open quiz question's stop, or -1
 * @property {{pin: number|null}} slots the slot view (its pinned slot)
 * @property {{shown: number[]}} sit the SIT view (the segments it shows)
 * @property {boolean} driving false while a follower mirrors its presenter
 * @property {import('./calllog.js').CallLog|null} callLog
 */

/**
 * Sets an element's text when it differs (a write would restart a screen reader's reading).
 * @param {Document} doc
 * @param {string} id
 * @param {string} s
 */
function setText(doc, id, s) {
  const el = /** @type {HTMLElement} */ (doc.getElementById(id));
  if (el.textContent !== s) el.textContent = s;
}

/**
 * Fills the legend's address colours for a colouring.
 * @param {Document} doc
 * @param {string} by
 */
export function legendColours(doc, by) {
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
export function helloDOM(doc, st) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const both = st.modes.length > 1;
  $('slots-mode').textContent = both ? 'both modes: the slots end alike' : `${st.modes[0]} mode`;
  $('sit-mode').textContent = both ? `columns: ${st.modes.join(' │ ')}` : `${st.modes[0]} mode`;
  $('calls-mode').textContent = both ? st.modes.join(' and ') : `${st.modes[0]} mode`;
  $('counters-mode').textContent = `before · ${st.modes.join(' · ')}`;
  $('tour-count').textContent = int(st.stops.length);
  doc.body.classList.toggle('one-mode', !both);
  doc.body.dataset.modes = st.modes.join(' ');
  const c = $('file-compressed');
  if (st.info.compressed) {
    c.hidden = false;
    c.textContent = st.info.compression; // the server's words: "compressed (lz4, cluster 4 blocks)"
  } else {
    c.hidden = true;
  }
}

/**
 * Writes the model's numbers into the page.
 * @param {Document} doc
 * @param {RunState} st
 * @param {UI} ui
 */
export function updateDOM(doc, st, ui) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const text = (/** @type {string} */ id, /** @type {string} */ s) => setText(doc, id, s);
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

  // What an open quiz question withholds (player.Withholds): every write below consults it.
  const veil = ui.view.quiz ? veilOf(st.stops, ui.q, st.step) : NO_VEIL;
  const hide = (/** @type {string} */ what) => withholds(veil, what);
  const statusEl = $('run-status');
  let s;
  let cls = 'status';
  if (!st.ready) s = ui.status === 'open' ? 'starting' : ui.status;
  // Past an open question (its seek back on the way) "done" or the errno would be the end's outcome.
  else if (veil.beyond) s = st.playing ? 'playing' : 'paused';
  else if (st.done) { s = st.outcome; cls += s === 'done' ? ' done' : ' err'; }
  else if (ui.status !== 'open') s = ui.status;
  else s = st.playing ? 'playing' : 'paused';
  text('run-status', s);
  if (statusEl.className !== cls) statusEl.className = cls;
  statusEl.title = ui.notice;

  // The quiz hides the counters and calls while a question is open.
  const veiled = veil.stop >= 0;
  doc.body.classList.toggle('veiled', veiled);

  const shownCounters = !hide(WITHHOLD.counters);
  const pb = shownCounters ? st.per[PER_BLOCK] : undefined;
  const bt = shownCounters ? st.per[BATCHED] : undefined;
  // The headline figures, grouped as every count on the page; data-count holds the plain number
  // for scripts and tests.
  const blocks = Math.max(pb ? pb.counters.blocksInvalidated : 0, bt ? bt.counters.blocksInvalidated : 0);
  showCount($('stat-calls-per-block'), pb ? pb.counters.calls : null);
  showCount($('stat-calls-batched'), bt ? bt.counters.calls : null);
  showCount($('stat-blocks-invalidated'), pb || bt ? blocks : null);
  /** @type {Array<[string, string]>} */
  const rows = [['calls', 'calls'], ['locks', 'sitLockAcquisitions'], ['prefree', 'segmentsPrefree']];
  for (const [id, key] of rows) {
    text(`c-pb-${id}`, pb ? int(pb.counters[key]) : '–');
    text(`c-bt-${id}`, bt ? int(bt.counters[key]) : '–');
  }
  // The rows of a call that frees nodes or skips addresses (a truncate, a punch: their
  // declarations in contract().played): nodes freed, and addresses skipped · bits found clear.
  const played = playedOf(st.info.op);
  const trunc = !!played && (played.skips || played.freesNodes);
  const nodesRow = doc.getElementById('c-row-nodes');
  const skipRow = doc.getElementById('c-row-skipped');
  // Node blocks are freed by a call that frees them (a truncate); addresses are skipped or freed twice only where the
  // tour stops at it (player.StopValidatedFirst, StopFreedTwice): the rows the run has, the same at
  // every step.
  if (nodesRow) nodesRow.hidden = !played || !played.freesNodes;
  if (skipRow) skipRow.hidden = !trunc || !st.stops.some((s) => s.kind === 'validated-first' || s.kind === 'freed-twice');
  if (trunc) {
    text('c-pb-nodes', pb ? int(pb.counters.nodesFreed || 0) : '–');
    text('c-bt-nodes', bt ? int(bt.counters.nodesFreed || 0) : '–');
    const skipped = (/** @type {any} */ ms) => `${int(ms.counters.slotsSkipped || 0)} · ${int(ms.counters.wronglyCleared || 0)}`;
    text('c-pb-skipped', pb ? skipped(pb) : '–');
    text('c-bt-skipped', bt ? skipped(bt) : '–');
  }
  text('c-pb-time', pb ? fmtTime(modelMs(pb.counters.blocksInvalidated, pb.counters.calls)) : '–');
  text('c-bt-time', bt ? fmtTime(modelMs(bt.counters.blocksInvalidated, bt.counters.calls)) : '–');
  const first = st.modes[0];
  if (first) {
    const t0 = st.sitTotals(first);
    // The run's SIT totals count what it touches, the segments a question may be about.
    text('c-sit-before', shownCounters ? int(t0.before) : '–');
    text('c-pb-sit', pb ? int(st.sitTotals(PER_BLOCK).now) : '–');
    text('c-bt-sit', bt ? int(st.sitTotals(BATCHED).now) : '–');
  }
  const ss = st.slotStates();
  text('c-slots-before', ss ? statesText(ss.before) : '…');
  text('c-slots-now', !ss ? '…' : shownCounters ? statesText(ss.now) : '–');
  const final = st.done && shownCounters;
  text('counters-heading', final ? 'at the end: before and after' : 'counters');
  $('counters-panel').classList.toggle('final', final);
  $('counters-panel').dataset.final = String(final);

  // Narration: one line per mode in the run, its terms linked.
  const seen = new Set();
  const narr = (/** @type {string} */ id, /** @type {any} */ ms) => {
    const p = $(id);
    p.hidden = !ms;
    // A mode the run no longer has keeps no words of an earlier step.
    let t = !ms ? '' : ms.narration || (st.step === 0 ? 'Press play, or → to step: the kernel has not started yet.' : '');
    if (ms && hide(WITHHOLD.narration)) t = VEILED_NARRATION;
    if (ms && ui.notice) t = `⚠ ${ui.notice}`;
    const el = $(`${id}-text`);
    if (el.dataset.text !== t) {
      el.dataset.text = t;
      writeTerms(el, t, ui.matcher, seen);
    }
  };
  narr('narr-pb', st.per[PER_BLOCK]);
  narr('narr-bt', st.per[BATCHED]);
  outcomeDOM(doc, st, ui.matcher, veil);

  // Call lanes.
  const lanes = $('lanes');
  const key = hide(WITHHOLD.calls) ? 'withheld' : st.modes.map((m) => {
    const ms = st.per[m];
    const last = ms.calls[ms.calls.length - 1];
    return `${m}:${ms.counters.calls}:${last ? last.join(',') : ''}:${ms.pending ? `${ms.pending.start},${ms.pending.len}` : ''}`;
  }).join('|') + (ui.callLog ? `|${ui.callLog.key()}` : '');
  if (lanes.dataset.key !== key) {
    lanes.dataset.key = key;
    lanes.replaceChildren(...(key === 'withheld' ? [] : st.modes.map((m) => lane(doc, m, st.per[m], st.modes.length, ui.callLog))));
  }
  text('markers-desc', st.ready ? markersText(st, ui.view.quiz) : '');
  text('slots-aside', slotsAside(st, veil));
  const [a, b] = ui.sit.shown;
  const sitShown = st.ready && !hide(WITHHOLD.sit);
  text('sit-aside', sitShown ? sitAside(st, a, b) : '');
  text('slots-desc', st.ready && st.n > 0 && !veil.beyond ? cursorLine(st, ui.slots.pin, veil, ui.view.present) : '');
  text('sit-desc', sitShown ? sitLine(st, ui.view.present ? 1 : 3) : '');
  tourDOM(doc, st, ui);
}

/**
 * Writes the outcome line: what the run returned and why (nothing while a quiz question withholds
 * the counters: the outcome counts the calls).
 * @param {Document} doc
 * @param {RunState} st
 * @param {import('./glossary.js').TermMatcher|null} m
 * @param {import('./quiz.js').Veil} [veil]
 */
export function outcomeDOM(doc, st, m, veil) {
  const el = /** @type {HTMLElement} */ (doc.getElementById('outcome'));
  const t = withholds(veil, WITHHOLD.counters) ? '' : outcomeText(st);
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
export function tourDOM(doc, st, ui) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const text = (/** @type {string} */ id, /** @type {string} */ s) => setText(doc, id, s);
  const tq = ui.tq;
  const stops = st.stops;
  const k = tq.open;
  text('tour-pos', tourPosition(k, stops.length, !!st.hold));
  /** @type {HTMLButtonElement} */ ($('tour-prev')).disabled = k <= 0 || !ui.driving;
  /** @type {HTMLButtonElement} */ ($('tour-next')).disabled = k >= stops.length - 1 || !ui.driving;
  const s = stops[k];
  const quiz = $('quiz');
  const q = ui.view.quiz && s && s.question && (ui.q === k || tq.verdicts.has(k)) ? s.question : null;
  const asking = q && ui.q === k;
  // A stop's words name what happens there: withheld with the question (its title and text are
  // replaced while it is asked), and the stop shown over a question's view past its step too.
  const stopHidden = !asking && ui.view.quiz && withholds(veilOf(stops, ui.q, st.step), WITHHOLD.stop);
  const key = `${st.hellos}:${stops.length}:${st.hold ? st.hold.stop : -1}:${k}:${asking}:${stopHidden}:${tq.verdicts.get(k) || ''}:${tq.waiting}:${ui.view.quiz}`;
  const body = $('tour-body');
  if (body.dataset.key !== key) {
    body.dataset.key = key;
    const title = $('tour-title');
    const tx = $('tour-text');
    if (!s) {
      title.textContent = stops.length ? 'Press n for the first stop' : '';
      tx.textContent = stops.length ? `The tour has ${plural(stops.length, 'stop')} in this run: what the kernel does at each, tied to its code.` : '';
    } else if (asking || stopHidden) {
      // The stop's title would say what happens: the panel names only the question's place.
      const qp = questionPlace(stops, asking ? k : ui.q);
      // The server sends no stop past the open question: its hold counts the tour's questions.
      title.textContent = veiledTitle(qp.nth, Math.max(qp.count, st.hold ? st.hold.questions : 0));
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
      if (asking && tq.waiting !== k) inp.value = '';
      /** @type {HTMLButtonElement} */ ($('quiz-submit')).disabled = !asking || tq.waiting === k;
      text('quiz-result', tq.verdicts.get(k) || (tq.waiting === k ? 'checking…' : ''));
      // Not answering is neither right nor wrong: no tick, no cross.
      const vt = tq.verdicts.get(k) || '';
      $('quiz-result').className = `result ${vt.startsWith('correct') ? 'ok' : vt.startsWith('wrong') ? 'bad' : ''}`;
      // The verdict comes into view with the answer: the panel scrolls back to the question.
      if (tq.verdicts.has(k)) body.scrollTop = 0;
    }
    // The stop's terms, as a line of glossary buttons.
    const terms = $('tour-terms');
    terms.replaceChildren();
    if (s && s.terms && s.terms.length && !asking && !stopHidden) {
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
  text('quiz-score', scoreText(tq.score));
  text('quiz-hint', ui.q === k ? tq.hint : '');
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
export function lane(doc, mode, ms, lanes, log) {
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
  if (mode === BATCHED) {
    if (ms.pending) {
      const b = doc.createElement('b');
      b.textContent = `(blkstart ${blockWord(ms.pending.start)}, blklen ${ms.pending.len})`;
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
