// The player's controls beyond the keys: the speeds the custom-speed slider steps through, "go to
// slot"'s check, and the controls a follower's page disables ([ and ] step through the paces with
// pace.js's paceAfter).
// The pure parts are tested in static/jstest/controls.test.js.
import { int } from './fmt.js';

/** Play speeds the custom-speed slider steps through (steps per second). */
export const SPEEDS = Object.freeze([0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000,
  20000, 50000, 100000, 200000, 500000, 1000000]);

/** The controls that drive the run, disabled while a follower's page mirrors a presenter. */
export const DRIVE_CONTROLS = Object.freeze(['btn-reset', 'btn-back', 'btn-play', 'btn-step', 'btn-flush', 'btn-end', 'pace',
  'speed', 'seek', 'goto-slot', 'f-mode', 'quiz-toggle']);

/**
 * Clamps a slider position to the speeds.
 * @param {number} i
 * @returns {number}
 */
export function speedIndex(i) {
  return Math.max(0, Math.min(SPEEDS.length - 1, i));
}

/**
 * Checks "go to slot"'s input: a file block index inside the run's range (separators allowed).
 * @param {string} raw
 * @param {{ready: boolean, range: {start: number, end: number}}} st
 * @returns {{slot: number}|{error: string}}
 */
export function parseGotoSlot(raw, st) {
  const v = raw.trim().replace(/[,_\s]/g, '');
  if (!/^\d+$/.test(v)) return { error: 'a file block index: digits' };
  const slot = Number(v);
  // A slot outside the range says so, rather than the view jumping to an end of it.
  if (st.ready && (slot < st.range.start || slot >= st.range.end)) {
    return {
      error: st.range.end > st.range.start
        ? `slot ${int(slot)} is outside this run: slots ${int(st.range.start)}…${int(st.range.end - 1)}`
        : 'this run has no slots',
    };
  }
  return { slot };
}

/**
 * Enables or disables the controls that drive the run.
 * @param {Document} doc
 * @param {boolean} on
 */
export function setDrivingControls(doc, on) {
  for (const id of DRIVE_CONTROLS) {
    const el = /** @type {HTMLButtonElement|null} */ (doc.getElementById(id));
    if (el) el.disabled = !on;
  }
  doc.querySelectorAll('#goto-slot-form button').forEach((b) => { /** @type {HTMLButtonElement} */ (b).disabled = !on; });
  // The header's run form would leave the room: a follower's page offers only what keeps it in
  // (detach first, which says so).
  doc.querySelectorAll('[data-testid="run-form"]').forEach((f) => {
    f.toggleAttribute('inert', !on);
    if (on) f.removeAttribute('title');
    else f.setAttribute('title', 'you follow a room: detach (f) to run something else');
  });
}

/**
 * Makes the links that leave the run's view (compare with punch) unusable, or usable again: while
 * a quiz question is open they would show its answer, and on a follower's page they leave the room.
 * @param {Document} doc
 * @param {string} why why they are off, "" for on
 */
export function guardLinks(doc, why) {
  doc.querySelectorAll('[data-testid="compare-link"]').forEach((el) => {
    const a = /** @type {HTMLAnchorElement} */ (el);
    if (why) {
      if (a.hasAttribute('href')) a.dataset.href = a.getAttribute('href') || '';
      a.removeAttribute('href');
      a.setAttribute('aria-disabled', 'true');
      a.title = why;
    } else if (a.dataset.href !== undefined) {
      a.setAttribute('href', a.dataset.href);
      delete a.dataset.href;
      a.removeAttribute('aria-disabled');
      a.title = 'this range zeroed and punched side by side, both batched';
    }
  });
}

/** The buttons that do what a key does (keys.js), by id. */
export const BUTTON_ACTIONS = Object.freeze({
  'btn-play': 'play', 'btn-step': 'step', 'btn-back': 'back', 'btn-flush': 'flush', 'btn-end': 'end',
  'btn-reset': 'reset', 'tour-next': 'next-stop', 'tour-prev': 'prev-stop', 'btn-present': 'present',
});

/**
 * What the controls call.
 * @typedef {object} ControlHandlers
 * @property {Record<string, () => void>} actions the keys' actions (keys.js), which the buttons share
 * @property {(m: object) => void} nav sends a move the user made
 * @property {(on: boolean) => void} setQuiz
 * @property {(by: string) => void} setColour
 * @property {(p: string) => void} setPace
 * @property {(i: number) => void} setSpeed the custom-speed slider's position
 * @property {(m: string) => void} setMode
 * @property {(raw: string) => void} gotoSlot
 * @property {(raw: string) => void} answer a quiz answer, typed or pressed
 * @property {() => void} resetMeter starts the draw-time figure over
 */

/**
 * Ties the player's buttons, menus and forms to what they do. Returns the seek slider's drag, whose
 * state the step counter follows.
 * @param {Document} doc
 * @param {ControlHandlers} h
 * @returns {SeekDrag}
 */
export function wireControls(doc, h) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  for (const [id, a] of Object.entries(BUTTON_ACTIONS)) $(id).addEventListener('click', () => h.actions[a]());
  // The draw-time figure starts over here (benchmarks press it before they play).
  $('frame-reset').addEventListener('click', h.resetMeter);
  const quizToggle = /** @type {HTMLInputElement} */ ($('quiz-toggle'));
  quizToggle.addEventListener('change', () => h.setQuiz(quizToggle.checked));
  const colourSel = /** @type {HTMLSelectElement} */ ($('colour-by'));
  colourSel.addEventListener('change', () => h.setColour(colourSel.value));
  const paceSel = /** @type {HTMLSelectElement} */ ($('pace'));
  paceSel.addEventListener('change', () => h.setPace(paceSel.value));
  const speed = /** @type {HTMLInputElement} */ ($('speed'));
  speed.addEventListener('input', () => h.setSpeed(Number(speed.value)));
  const modeSel = /** @type {HTMLSelectElement|null} */ (doc.getElementById('f-mode'));
  if (modeSel) modeSel.addEventListener('change', () => h.setMode(modeSel.value));
  const gotoInput = /** @type {HTMLInputElement} */ ($('goto-slot'));
  $('goto-slot-form').addEventListener('submit', (e) => { e.preventDefault(); h.gotoSlot(gotoInput.value); });
  gotoInput.addEventListener('input', () => gotoInput.setCustomValidity(''));
  const quizInput = /** @type {HTMLInputElement} */ ($('quiz-answer'));
  $('quiz-form').addEventListener('submit', (e) => { e.preventDefault(); h.answer(quizInput.value); });
  $('quiz-choices').addEventListener('click', (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest('button[data-value]');
    if (!(b instanceof HTMLButtonElement)) return;
    quizInput.value = b.dataset.value || '';
    h.answer(quizInput.value);
  });
  const srcLink = $('cost-source-link');
  srcLink.addEventListener('click', (e) => {
    e.preventDefault();
    const box = $('cost-source');
    box.hidden = !box.hidden;
    srcLink.setAttribute('aria-expanded', String(!box.hidden));
  });
  const preset = /** @type {HTMLSelectElement|null} */ (doc.getElementById('preset'));
  preset?.addEventListener('change', () => {
    if (!preset.value) return;
    const [o, l] = preset.value.split(':');
    /** @type {HTMLInputElement} */ ($('f-offset')).value = o;
    /** @type {HTMLInputElement} */ ($('f-length')).value = l;
    /** @type {HTMLFormElement} */ (preset.form).submit();
  });
  return new SeekDrag(/** @type {HTMLInputElement} */ ($('seek')), $('step-now'), h.nav);
}

/**
 * The seek slider while it is dragged: the step counter shows the slider's step, a seek goes out
 * at most every 80 ms, and the release seeks to where it ends.
 */
export class SeekDrag {
  /**
   * @param {HTMLInputElement} seek
   * @param {HTMLElement} stepNow
   * @param {(m: object) => void} nav
   */
  constructor(seek, stepNow, nav) {
    this.dragging = false;
    let timer = 0;
    seek.addEventListener('input', () => {
      this.dragging = true;
      stepNow.textContent = int(Number(seek.value));
      if (!timer) timer = window.setTimeout(() => { timer = 0; nav({ type: 'seek', step: Number(seek.value) }); }, 80);
    });
    seek.addEventListener('change', () => {
      this.dragging = false;
      // The drag's pending seek would read the slider after a frame has put the old step back in
      // it, and seek there: the change is the last word.
      clearTimeout(timer);
      timer = 0;
      nav({ type: 'seek', step: Number(seek.value) });
    });
  }
}
