// The cost panel's model: calls and blocks turned into time. It is a model, fitted to one
// measurement, and the page says so. Pure functions, tested in static/jstest/cost.test.js.

/**
 * The measurement the model is fitted to: zeroing the seed's 64 MiB file (16,384 blocks), as the
 * patch's author timed it on real hardware (mean of 20 runs, a fresh fsynced file on a loop device),
 * with the calls /seed/bench64.bin makes in each mode.
 */
export const MEASURED = Object.freeze({
  blocks: 16384,
  perBlock: Object.freeze({ calls: 16384, ms: 16.436 }),
  batched: Object.freeze({ calls: 19, ms: 10.011 }),
  source: 'the patch author\'s mean of 20 runs on real hardware: a fresh, fsynced 64 MiB file (16,384 blocks) on a loop device, 16.436 ms upstream, 10.011 ms batched; calls as /seed/bench64.bin makes them (16,384 and 19)',
});

/**
 * @typedef {object} Model t = a·blocks + b·calls, in milliseconds
 * @property {number} a ms per block released (the work every block costs, whatever the calls)
 * @property {number} b ms per f2fs_invalidate_blocks call (lock, segment bookkeeping)
 */

/**
 * Fits t = a·blocks + b·calls through two measurements of the same number of blocks: the difference
 * in time is all calls, so b = Δt / Δcalls, and a takes the rest.
 * @param {number} blocks
 * @param {{calls: number, ms: number}} p one measurement
 * @param {{calls: number, ms: number}} q another, with a different number of calls
 * @returns {Model}
 */
export function fit(blocks, p, q) {
  const b = (p.ms - q.ms) / (p.calls - q.calls);
  const a = (q.ms - b * q.calls) / blocks;
  return { a, b };
}

/** The model of the measurement above. */
export const MODEL = Object.freeze(fit(MEASURED.blocks, MEASURED.perBlock, MEASURED.batched));

/**
 * Returns the modelled time in milliseconds of releasing blocks with calls calls.
 * @param {number} blocks
 * @param {number} calls
 * @param {Model} [m]
 * @returns {number}
 */
export function modelMs(blocks, calls, m = MODEL) {
  return m.a * blocks + m.b * calls;
}

/**
 * Formats a time in milliseconds with three significant digits and a unit that fits: "16.4 ms",
 * "312 µs", "0 ms", "1.25 s".
 * @param {number} ms
 * @returns {string}
 */
export function fmtTime(ms) {
  if (!Number.isFinite(ms) || ms <= 0) return '0 ms';
  if (ms < 1) return `${sig3(ms * 1000)} µs`;
  if (ms < 1000) return `${sig3(ms)} ms`;
  return `${sig3(ms / 1000)} s`;
}

/**
 * @param {number} v
 * @returns {string}
 */
function sig3(v) {
  if (v >= 100) return String(Math.round(v));
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

/**
 * The model's formula as the page prints it: "t = 0.611 µs × blocks + 0.393 µs × calls".
 * @param {Model} [m]
 * @returns {string}
 */
export function formula(m = MODEL) {
  return `t = ${(m.a * 1000).toFixed(3)} µs × blocks + ${(m.b * 1000).toFixed(3)} µs × calls`;
}
