// Colouring of block addresses: by physical run (the default: what batching depends on), by
// segment, or by log type. Pure functions and data, no drawing: render.js and file.js paint with
// them, static/jstest/colour.test.js tests them.
import { contract, segnoOf } from './contract.js';

/** The colourings a page offers, as the colour-by select names them. */
export const COLOUR_BY = Object.freeze(['run', 'segment', 'log']);

/** What each colouring is called in the legend. */
export const COLOUR_BY_LABEL = Object.freeze({ run: 'physical run', segment: 'segment', log: 'log type' });

/** The localStorage key that carries the choice from page to page (player and file page). */
export const COLOUR_KEY = 'zrviz.colourBy';

/**
 * Returns a valid colouring: s if it is one, else "run".
 * @param {string|null|undefined} s
 * @returns {string}
 */
export function colourBy(s) {
  return COLOUR_BY.includes(/** @type {string} */ (s)) ? /** @type {string} */ (s) : 'run';
}

/**
 * The physical runs of a slot map: maximal sets of address slots, in file order, whose addresses
 * follow each other (a, a+1, …). NEW_ADDR and NULL_ADDR slots between two addresses do not break a
 * run, as they do not end the batched mode's pending run; dnode chunk boundaries do not either (they
 * split the calls, not the physical run).
 */
export class RunMap {
  /**
   * @param {Int32Array} starts slot offsets where each run begins, ascending
   */
  constructor(starts) {
    this.starts = starts;
  }

  /** @returns {number} how many runs */
  get count() { return this.starts.length; }

  /**
   * Builds the runs of extents (core's extents, sorted by index) laid over the slot offsets
   * [0, n) of a range starting at file block index base. This is the one definition of a physical
   * run, core.RunStarts's (both are tested against static/jstest/testdata/runs.json): in file
   * order, the slots holding a block address; a run is a longest stretch whose every address is
   * the previous plus 1; NULL and NEW slots between do not break it, nor does a dnode chunk's end.
   * Only slots inside spans count (a player's dnode chunks: fill_zero's partial pages are in no
   * run); without spans, the whole range.
   * @param {Array<{index: number, count: number, state: string, addr?: number}>} extents
   * @param {number} base
   * @param {number} n
   * @param {Array<[number, number]>} [spans] sorted, disjoint [start, end) file block indices
   * @returns {RunMap}
   */
  static fromExtents(extents, base, n, spans) {
    const sp = (spans || [[base, base + n]])
      .map(([a, b]) => [Math.max(a, base), Math.min(b, base + n)])
      .filter(([a, b]) => b > a);
    /** @type {number[]} */
    const starts = [];
    let next = -1; // the address that would continue the current run
    let k = 0;
    for (const e of extents) {
      if (e.state !== 'addr') continue;
      let lo = e.index;
      const hi = e.index + e.count;
      while (lo < hi) {
        while (k < sp.length && sp[k][1] <= lo) k++;
        if (k === sp.length) return new RunMap(Int32Array.from(starts));
        const from = Math.max(lo, sp[k][0]);
        const to = Math.min(hi, sp[k][1]);
        if (from >= hi) break;
        const a = (e.addr || 0) + (from - e.index);
        if (a !== next) starts.push(from - base);
        next = a + (to - from);
        lo = to;
      }
    }
    return new RunMap(Int32Array.from(starts));
  }

  /**
   * Builds the runs of a slot array (values: addresses, or the special values given).
   * @param {Uint32Array} slots
   * @param {(v: number) => boolean} isAddr
   * @returns {RunMap}
   */
  static fromSlots(slots, isAddr) {
    /** @type {number[]} */
    const starts = [];
    let next = -1;
    for (let i = 0; i < slots.length; i++) {
      const v = slots[i];
      if (!isAddr(v)) continue;
      if (v !== next) starts.push(i);
      next = v + 1;
    }
    return new RunMap(Int32Array.from(starts));
  }

  /**
   * Returns the number of the run slot offset off belongs to (the last run starting at or before
   * it), or -1 before the first.
   * @param {number} off
   * @returns {number}
   */
  runAt(off) {
    const s = this.starts;
    let lo = 0;
    let hi = s.length - 1;
    let k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (s[mid] <= off) { k = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return k;
  }

  /**
   * Reports whether a run other than the first begins in the slot offsets [a, b): a break
   * between two runs falls there.
   * @param {number} a
   * @param {number} b
   * @returns {boolean}
   */
  breakIn(a, b) {
    const k = this.runAt(b - 1);
    return k >= 1 && this.starts[k] >= a;
  }
}

/**
 * What a colouring needs to know about the run besides the slot.
 * @typedef {object} ColourContext
 * @property {string} by "run", "segment" or "log"
 * @property {RunMap|null} runs the range's runs (by run), null while unknown
 * @property {{mainBlkaddr: number, maxBlkaddr: number, blocksPerSeg: number}} geometry
 * @property {Map<number, number>} segTypes log type by segno (by log)
 * @property {boolean} [plain] an open quiz question withholds what the colouring shows (runs, or
 *   segments): every address gets one colour, whatever by says (quiz.js canvasView)
 * @property {boolean} [bounds] false while a question withholds segments: an address outside the
 *   main area is drawn as any other, not marked invalid (undefined: marked)
 */

/** The palette index by log of a segment whose log type is unknown. */
export const UNKNOWN_LOG = contract().logTypes.length;

/**
 * Returns the palette index of the address addr at slot offset off, for [palette]'s colours.
 * @param {ColourContext} c
 * @param {number} off
 * @param {number} addr
 * @param {number} paletteSize how many colours the colouring cycles through (run, segment)
 * @returns {number}
 */
export function colourIndex(c, off, addr, paletteSize) {
  if (c.plain) return 0;
  const g = c.geometry;
  switch (c.by) {
    case 'segment':
      return segnoOf(g, addr) % paletteSize;
    case 'log': {
      const t = c.segTypes.get(segnoOf(g, addr));
      return t === undefined || t < 0 || t >= UNKNOWN_LOG ? UNKNOWN_LOG : t;
    }
    default: {
      const k = c.runs ? c.runs.runAt(off) : 0;
      return Math.max(0, k) % paletteSize;
    }
  }
}

/**
 * Returns the relative luminance of a #rrggbb colour (WCAG 2).
 * @param {string} hex
 * @returns {number}
 */
export function luminance(hex) {
  const v = parseInt(hex.slice(1), 16);
  const ch = (/** @type {number} */ x) => {
    const c = x / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * ch((v >> 16) & 255) + 0.7152 * ch((v >> 8) & 255) + 0.0722 * ch(v & 255);
}

/**
 * Returns the contrast ratio of two #rrggbb colours (WCAG 2: 1 to 21).
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function contrast(a, b) {
  const x = luminance(a);
  const y = luminance(b);
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

/**
 * Returns the text colour (dark ink or white) with the better contrast on a fill.
 * @param {string} fill #rrggbb
 * @param {string} ink #rrggbb
 * @returns {string}
 */
export function textOn(fill, ink) {
  return contrast(fill, ink) >= contrast(fill, '#ffffff') ? ink : '#ffffff';
}
