// The player's controls beyond the keys: the speeds the custom-speed slider steps through, the
// paces [ and ] step through, "go to slot"'s check, and the controls a follower's page disables.
// The pure parts are tested in static/jstest/controls.test.js.
import { int } from './fmt.js';
import { DEFAULT_PACE } from './pace.js';

/** Play speeds the custom-speed slider steps through (steps per second). */
export const SPEEDS = Object.freeze([0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000,
  20000, 50000, 100000, 200000, 500000, 1000000]);

/** Paces from slowest to fastest, for [ and ]. */
export const PACE_ORDER = Object.freeze(['step', '180', '60', '30', '10']);

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
 * Returns the pace d places slower (−1) or faster (+1) than pace; from a custom speed, the default.
 * @param {string} pace
 * @param {number} d
 * @returns {string}
 */
export function paceAfter(pace, d) {
  const i = PACE_ORDER.indexOf(pace);
  const j = i < 0 ? PACE_ORDER.indexOf(DEFAULT_PACE) : Math.max(0, Math.min(PACE_ORDER.length - 1, i + d));
  return PACE_ORDER[j];
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
}
