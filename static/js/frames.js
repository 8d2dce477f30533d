// The player's draw-time figure: the 95th percentile of the latest draws, shown on the page
// (benchmarks read it). Tested in static/jstest/frames.test.js.

/** Draw times kept for the p95: the latest draws, up to this many. */
export const FRAME_SAMPLES = 20000;

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
