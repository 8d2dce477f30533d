// Pace: how long a run takes to play, whatever its length (docs/protocol.md, the "pace" control).
// Pure functions, tested with node --test (static/jstest/pace.test.js).

/** The paces the server takes, in menu order: seconds from start to end, or one step a second. */
export const PACES = Object.freeze([
  { value: '10', label: '10 s' },
  { value: '30', label: '30 s' },
  { value: '60', label: '1 min' },
  { value: '180', label: '3 min' },
  { value: 'step', label: 'one step per second' },
]);

/** The pace a run plays at unless the page asks for another. */
export const DEFAULT_PACE = '30';

/**
 * Reports whether s is a pace the server takes.
 * @param {string} s
 * @returns {boolean}
 */
export function isPace(s) {
  return PACES.some((p) => p.value === s);
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
 * The pace select's value for a server's pace ("" for an explicit speed: "custom").
 * @param {string} pace
 * @returns {string}
 */
export function paceValue(pace) {
  return isPace(pace) ? pace : 'custom';
}
