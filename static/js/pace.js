// Pace: how long a run takes to play, whatever its length (docs/protocol.md, the "pace" control).
// Pure functions, tested with node --test (static/jstest/pace.test.js).

/** The pace menu's value while the run plays at a speed set in steps per second. */
export const CUSTOM = 'custom';

/**
 * @typedef {object} Paces the paces the server takes. The server renders them as the pace menu's
 *   options (web/protocol.go pacePresets, templates/run.templ); the page reads them from there
 *   ({@link pacesFromMenu}) and writes none of its own.
 * @property {readonly string[]} values in the menu's order: fastest first
 * @property {string} def the pace a run plays at unless the page asks for another
 */

/**
 * Reads the paces from the pace menu the server rendered: its options but "custom"; the one
 * rendered selected is the default.
 * @param {{options: ArrayLike<{value: string, defaultSelected: boolean}>}} menu the pace select
 * @returns {Paces}
 */
export function pacesFromMenu(menu) {
  const opts = Array.from(menu.options).filter((o) => o.value !== CUSTOM);
  const def = opts.find((o) => o.defaultSelected) || opts[0];
  return Object.freeze({ values: Object.freeze(opts.map((o) => o.value)), def: def ? def.value : '' });
}

/**
 * Reports whether s is a pace the server takes.
 * @param {Paces} paces
 * @param {string} s
 * @returns {boolean}
 */
export function isPace(paces, s) {
  return paces.values.includes(s);
}

/**
 * Returns the pace d places slower (−1) or faster (+1) than pace, for [ and ], stopping at the
 * ends; from a custom speed, the default.
 * @param {Paces} paces
 * @param {string} pace
 * @param {number} d
 * @returns {string}
 */
export function paceAfter(paces, pace, d) {
  const i = paces.values.indexOf(pace);
  if (i < 0) return paces.def;
  // The menu lists the fastest first: faster is up the list.
  return paces.values[Math.max(0, Math.min(paces.values.length - 1, i - d))];
}

/**
 * Formats a duration in seconds as the page shows the time left: "0:27", "2:05", "1:02:09";
 * fractions are rounded up, so the last second still reads "0:01" until the end.
 * @param {number} sec
 * @returns {string}
 */
export function clock(sec) {
  if (!Number.isFinite(sec) || sec <= 0) return '0:00';
  const t = Math.ceil(sec - 1e-9);
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const s = t % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/**
 * Says how long the rest of the run plays, for the page: "0:27 left", "done", or, at one step a
 * second, the steps left as time.
 * @param {{timeLeft: number, step: number, totalSteps: number, playing: boolean}} st
 * @returns {string}
 */
export function timeLeftText(st) {
  if (st.totalSteps > 0 && st.step >= st.totalSteps) return 'at the end';
  return `${clock(st.timeLeft)} left`;
}

/**
 * The pace select's value for the server's pace: the server sends one of its paces, or "" for an
 * explicit speed ("custom").
 * @param {string} pace
 * @returns {string}
 */
export function paceValue(pace) {
  return pace || CUSTOM;
}
