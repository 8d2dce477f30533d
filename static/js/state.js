// The player's model: the slots of the range, each mode's SIT and counters, built from the
// websocket's hello, initial pages and frames (docs/protocol.md, version 2). No drawing and no I/O
// here; the server says what every slot holds, the model only lays what changed over the initial map.
import { RunMap } from './colour.js';
import { groupDigits } from './fmt.js';
import { contract, segnoOf } from './contract.js';

/** Slot values with a meaning of their own (f2fs.h), as the page's contract sends them. */
export const { null: NULL_ADDR, new: NEW_ADDR, compress: COMPRESS_ADDR } = contract().addr;

/**
 * Slot actions that release the slot's block (core.Action names): a zero's invalidations and runs,
 * a punch's or truncate's clears (per-block, starting or extending a batched run). They flash.
 */
export const RELEASES = new Set(['invalidate', 'start-run', 'extend-run', 'clear', 'clear-start-run', 'clear-extend-run']);

/**
 * Events whose slot held an address f2fs_is_valid_blkaddr_raw refused, as "kind:action": a zero's
 * errors, a punch's or truncate's skips (the slot is cleared, the block not freed). Marked from
 * their step on.
 */
export const REJECTS = new Set(['error:bounds', 'error:sit-bit', 'slot:skip-bounds', 'slot:skip-sit-bit']);

/**
 * A run's first block in words: NEW_ADDR by name (a punch's preallocated slot is a run of its own,
 * NEW_ADDR + 1 wrapping), an address as its number.
 * @param {number} v
 * @returns {string}
 */
export function blockWord(v) {
  return (v >>> 0) === NEW_ADDR ? 'NEW_ADDR' : String(v);
}

/** How long an invalidated slot flashes, in milliseconds. */
export const FLASH_MS = 450;

/** The two engines, per-block first as the protocol orders them (the contract's). */
export const MODES = contract().modes.order;

/** The name of both modes at once, as the query and the hello name it. */
const BOTH = contract().modes.both;

/**
 * @typedef {object} Extent core's extent: a stretch of slots in one state
 * @property {number} index file block index of the first slot
 * @property {number} count
 * @property {string} state "addr", "null", "new" or "compress"
 * @property {number} [addr] the first slot's address when state is "addr" (then addr, addr+1, …)
 */

/**
 * @typedef {object} Segment
 * @property {number} segno
 * @property {number} valid
 * @property {number} validBefore
 * @property {number} type log type 0..5, -1 unknown
 * @property {boolean} current an active log
 * @property {string} status the server's class: "free", "full", "dirty", "prefree", "current"
 * @property {string} statusBefore
 * @property {Uint8Array} map the 64-byte cur_valid_map (bit k: byte k>>3, mask 0x80>>(k&7))
 * @property {Uint8Array} mapBefore
 */

/**
 * @typedef {object} ModeState
 * @property {number} step
 * @property {boolean} done
 * @property {string} errno
 * @property {string} message
 * @property {string} [returnedBy] the function whose errno ends the run (open, vfs_fallocate, f2fs_fallocate, f2fs_zero_range)
 * @property {number} cursor
 * @property {number} chunk
 * @property {{start: number, len: number, slot: number}|null} pending
 * @property {Record<string, number>} counters
 * @property {Map<number, Segment>} segments
 * @property {Array<[number, number, string]>} calls the server's latest calls, newest last: [start, len, reason]
 * @property {string} narration
 * @property {number} iSize
 * @property {{before: number, valid: number, touched: number, segments: number}|null} sit the server's SIT totals
 */

/**
 * Decodes 128 hex digits into the 64-byte map.
 * @param {string} hex
 * @returns {Uint8Array}
 */
export function hexMap(hex) {
  const out = new Uint8Array(64);
  if (!hex) return out;
  for (let i = 0; i < 64 && 2 * i + 1 < hex.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16) || 0;
  return out;
}

/**
 * Reports whether bit k of an f2fs (MSB-first) bitmap is set.
 * @param {Uint8Array} map
 * @param {number} k
 * @returns {boolean}
 */
export function testBit(map, k) {
  return (map[k >> 3] & (0x80 >> (k & 7))) !== 0;
}

/**
 * Returns the slot value an extent gives file block index i.
 * @param {Extent} e
 * @param {number} i
 * @returns {number}
 */
export function slotValue(e, i) {
  switch (e.state) {
    case 'new': return NEW_ADDR;
    case 'compress': return COMPRESS_ADDR;
    case 'addr': return ((e.addr || 0) + (i - e.index)) >>> 0;
    default: return NULL_ADDR;
  }
}

/**
 * Writes extents into slots (slots[0] is file block index base), clipped to the array; marks each
 * written slot in mark when given.
 * @param {Uint32Array} slots
 * @param {number} base
 * @param {Extent[]} ext
 * @param {Uint8Array} [mark]
 */
export function writeExtents(slots, base, ext, mark) {
  const n = slots.length;
  for (const e of ext) {
    const from = Math.max(0, e.index - base);
    const to = Math.min(n, e.index - base + e.count);
    if (to <= from) continue;
    switch (e.state) {
      case 'new': slots.fill(NEW_ADDR, from, to); break;
      case 'compress': slots.fill(COMPRESS_ADDR, from, to); break;
      case 'addr': {
        const a0 = (e.addr || 0) + (from - (e.index - base));
        for (let i = from; i < to; i++) slots[i] = (a0 + (i - from)) >>> 0;
        break;
      }
      default: slots.fill(NULL_ADDR, from, to);
    }
    if (mark) mark.fill(1, from, to);
  }
}

/**
 * Lays the sorted extents changes over the sorted extents base: where a change covers a slot, it
 * wins. Both lists must be sorted by index and not overlap within themselves. The result is sorted
 * and has at most len(base) + 2·len(changes) extents.
 * @param {Extent[]} base
 * @param {Extent[]} changes
 * @returns {Extent[]}
 */
export function overlayExtents(base, changes) {
  /** @type {Extent[]} */
  const out = [];
  const cut = (/** @type {Extent} */ e, /** @type {number} */ a, /** @type {number} */ b) => {
    if (b <= a) return;
    /** @type {Extent} */
    const x = { index: a, count: b - a, state: e.state };
    if (e.state === 'addr') x.addr = (e.addr || 0) + (a - e.index);
    out.push(x);
  };
  let i = 0;
  let cursor = -Infinity; // everything before it is in out
  const baseUpTo = (/** @type {number} */ upTo) => {
    for (; i < base.length; i++) {
      const e = base[i];
      const end = e.index + e.count;
      if (end <= cursor) continue;
      if (e.index >= upTo) return;
      cut(e, Math.max(e.index, cursor), Math.min(end, upTo));
      if (end > upTo) return;
    }
  };
  for (const c of changes) {
    baseUpTo(c.index);
    cut(c, Math.max(c.index, cursor), c.index + c.count);
    cursor = Math.max(cursor, c.index + c.count);
  }
  baseUpTo(Infinity);
  return out;
}

/**
 * Converts a wire segment (core.SegmentState) to the model's.
 * @param {any} s
 * @param {number} type
 * @returns {Segment}
 */
export function segment(s, type) {
  const { free, current } = contract().segmentClasses;
  const cls = s.class || free;
  return {
    segno: s.segno, valid: Math.max(0, s.valid), validBefore: s.validBefore ?? s.valid, type,
    current: cls === current, status: cls, statusBefore: s.classBefore || cls,
    map: hexMap(s.map), mapBefore: hexMap(s.mapBefore),
  };
}

// groupDigits is fmt.js's, re-exported for the modules that import it from here.
export { groupDigits };

/**
 * Counts the slots of [lo, hi) by state from sorted extents; slots no extent covers are holes.
 * @param {Extent[]} ext
 * @param {number} lo file block index
 * @param {number} hi
 * @returns {{addr: number, new: number, null: number, compress: number}}
 */
export function countStates(ext, lo, hi) {
  const c = { addr: 0, new: 0, null: 0, compress: 0 };
  let covered = 0;
  for (const e of ext) {
    const k = Math.min(hi, e.index + e.count) - Math.max(lo, e.index);
    if (k <= 0) continue;
    covered += k;
    if (e.state === 'addr') c.addr += k;
    else if (e.state === 'new') c.new += k;
    else if (e.state === 'compress') c.compress += k;
    else c.null += k;
  }
  c.null += Math.max(0, hi - lo - covered);
  return c;
}

/**
 * The whole client-side state of one run.
 */
export class RunState {
  constructor() {
    this.ready = false;
    this.totalSteps = 0;
    this.step = 0;
    this.playing = false;
    this.pace = '30';
    this.stepsPerSecond = 0;
    this.timeLeft = 0;
    this.mode = BOTH;
    /** @type {string[]} */
    this.modes = [];
    this.geometry = { blockSize: 4096, blocksPerSeg: 512, segment0Blkaddr: 0, mainBlkaddr: 0, maxBlkaddr: 0, segsPerSec: 1 };
    this.range = { start: 0, end: 0 };
    /** @type {Array<{start: number, len: number, node: string, path: string, kind: string, nid: number, missing: number, step: number, calls: number[]}>} */
    this.chunks = [];
    /** @type {Array<{step: number, kind: string, mode?: string}>} */
    this.markers = [];
    /** @type {any[]} tour stops, in step order */
    this.stops = [];
    /** the slots now, and before the run (from the initial pages) */
    this.slots = new Uint32Array(0);
    this.initial = new Uint32Array(0);
    /** slots written by changes since the last full frame (an initial page must not overwrite them) */
    this.touched = new Uint8Array(0);
    /** the initial map is known over [range.start, initialNext) */
    this.initialNext = 0;
    /** @type {Extent[]} the initial pages received, in order */
    this.initialExtents = [];
    /** @type {Extent[]} the changes of the last full frame and every frame since */
    this.changedExtents = [];
    /** slot offsets (index - range.start) flagged invalid by an error event */
    this.bad = new Set();
    /** slot offset → the step of the error that rejected its address */
    this.badAt = new Map();
    /** slot offset → time (performance.now) it was invalidated, for the flash */
    this.flash = new Map();
    /** slot offsets changed since the renderer last looked; null = everything */
    /** @type {number[]|null} */
    this.changed = null;
    /** @type {Record<string, ModeState>} */
    this.per = {};
    /** @type {Extent[]} the slots as extents (flash and invalid marks aside) once the initial map is complete; extentsClean: and no mark either */
    this.extents = [];
    this.extentsClean = false;
    /** segno → first-touch order, from hello */
    this.segOrder = new Map();
    /** @type {Map<number, Segment>} segno → the hello's segment, as it was before the run */
    this.segBase = new Map();
    /** @type {Map<number, number>} segno → log type */
    this.segTypes = new Map();
    /** bumped on every SIT change, so the SIT panel redraws only then */
    this.sitVersion = 0;
    this.info = { op: contract().ops.zero, image: '', path: '', ino: 0, size: '0', offset: '0', length: '0', keepSize: false, before: /** @type {string[]} */ ([]), compressed: false, compression: '' };
    /**
     * What the run returns, in the server's words (player.Outcome): the outcome line at the end,
     * and before it when the end is known from the start. The page composes none of its own.
     * @type {{returns: string, line: string, ahead: string}}
     */
    this.said = { returns: '', line: '', ahead: '' };
    /** @type {{stop: number, ask: number, questions: number}|null} the quiz's hold (web/quizhold.go) */
    this.hold = null;
    /** @type {number|null} the slot a tour stop at this step is about (player.js sets it), or null */
    this.at = null;
    this.score = { right: 0, asked: 0 };
    /** hellos taken: a new one may bring another run's stops and chunks */
    this.hellos = 0;
    this.error = '';
    /** @type {RunMap|null} the physical runs of the initial map, once it is complete */
    this.runs = null;
  }

  /** @returns {number} slots in the range */
  get n() { return this.slots.length; }

  /** @returns {boolean} every mode has finished */
  get done() { return this.modes.length > 0 && this.modes.every((m) => this.per[m]?.done); }

  /** @returns {string} "" while running, "done", or the first errno */
  get outcome() {
    if (!this.done) return '';
    for (const m of this.modes) if (this.per[m].errno) return this.per[m].errno;
    return 'done';
  }

  /** @returns {boolean} every page of the initial map has arrived */
  get initialComplete() { return this.initialNext >= this.range.end; }

  /**
   * Replaces everything with a hello message.
   * @param {any} h
   */
  hello(h) {
    this.ready = true;
    this.hellos++;
    this.error = '';
    const r = h.run || {};
    this.info = {
      op: r.op || contract().ops.zero, image: r.image, path: r.path, ino: r.ino, size: String(r.size ?? '0'), offset: String(r.offset ?? '0'),
      length: String(r.length ?? '0'), keepSize: !!r.keepSize, before: r.before || [],
      compressed: !!r.compressed, compression: r.compression || (r.compressed ? 'compressed' : ''),
    };
    this.totalSteps = h.totalSteps || 0;
    const o = h.outcome || {};
    this.said = { returns: o.returns || '', line: o.line || '', ahead: o.ahead || '' };
    this.mode = r.mode || BOTH;
    this.modes = (r.modes && r.modes.length) ? r.modes : (this.mode === BOTH ? [...MODES] : [this.mode]);
    this.geometry = { ...this.geometry, ...(h.geometry || {}) };
    this.range = h.range || { start: 0, end: 0 };
    this.chunks = (h.chunks || []).map((/** @type {any} */ c) => ({ ...c, path: c.node }));
    this.markers = h.markers || [];
    this.markersThinned = !!h.markersThinned;
    this.stops = h.stops || [];
    /** where the server's quiz holds the view (web/quizhold.go), null when nothing is withheld */
    this.hold = h.hold || null;
    this.score = h.score || { right: 0, asked: 0 };
    const n = Math.max(0, this.range.end - this.range.start);
    this.slots = new Uint32Array(n);
    this.initial = new Uint32Array(n);
    this.touched = new Uint8Array(n);
    this.initialExtents = [];
    this.initialNext = this.range.start;
    this.runs = null;
    this.badAt = new Map();
    this.bad.clear();
    this.flash.clear();
    this.segTypes = new Map(Object.entries(h.segTypes || {}).map(([k, v]) => [Number(k), Number(v)]));
    this.segOrder = new Map();
    /** @type {any[]} */
    const before = h.segments || [];
    before.forEach((s, i) => this.segOrder.set(s.segno, i));
    // The hello's segments are as they were before the run: the base a full state starts from.
    this.segBase = new Map(before.map((s) => [s.segno, this.seg({ ...s, valid: s.validBefore, map: s.mapBefore, class: s.classBefore })]));
    this.sitVersion++;
    this.per = {};
    for (const m of this.modes) {
      this.per[m] = {
        step: 0, done: false, errno: '', message: '', cursor: this.range.start, chunk: -1, pending: null,
        counters: {}, segments: new Map(this.segBase), calls: [], narration: '', iSize: 0, sit: null,
      };
    }
    this.applyCommon(h);
    if (h.initial) this.addInitial(h.initial);
    this.changedExtents = [];
    this.applyChanged(h.changed || [], true);
    if (h.state) this.applyState(h.state, true, h.step || 0);
  }

  /**
   * Takes a hold message: the quiz's hold moved (an answer, a reveal, the quiz turned on or off), and
   * with it what the server lets the page see of the stops, chunks, markers and outcome.
   * @param {any} m
   */
  applyHold(m) {
    this.hold = m.hold || null;
    this.stops = m.stops || [];
    this.chunks = (m.chunks || []).map((/** @type {any} */ c) => ({ ...c, path: c.node }));
    this.markers = m.markers || [];
    this.markersThinned = !!m.markersThinned;
    const o = m.outcome || {};
    this.said = { returns: o.returns || '', line: o.line || '', ahead: o.ahead || '' };
  }

  /**
   * A segment of the wire with its log type.
   * @param {any} s
   * @returns {Segment}
   */
  seg(s) {
    return segment(s, this.segTypes.get(s.segno) ?? -1);
  }

  /**
   * Adds a page of the initial map ({from, next, extents}).
   * @param {{from: number, next: number, extents: Extent[]}} page
   */
  addInitial(page) {
    if (!this.ready || page.from !== this.initialNext) return; // a stale or repeated page
    const base = this.range.start;
    writeExtents(this.initial, base, page.extents);
    // Where no change covers a slot, it holds its initial value.
    const from = Math.max(0, page.from - base);
    const to = Math.min(this.slots.length, page.next - base);
    for (let i = from; i < to; i++) if (!this.touched[i]) this.slots[i] = this.initial[i];
    this.initialExtents = this.initialExtents.concat(page.extents);
    this.initialNext = page.next;
    this.changed = null;
    // The physical runs over the chunks the loop walks (core.RunStarts's rule).
    if (this.initialComplete) this.runs = RunMap.fromExtents(this.initialExtents, base, this.slots.length, this.chunks.map((c) => /** @type {[number, number]} */ ([c.start, c.start + c.len])));
    this.refreshExtents();
  }

  /**
   * Lays changes over the slots; with full, first goes back to the initial map.
   * @param {Extent[]} changes
   * @param {boolean} full
   */
  applyChanged(changes, full) {
    const base = this.range.start;
    if (full) {
      this.slots.set(this.initial);
      this.touched.fill(0);
      this.changedExtents = changes.slice();
      this.changed = null;
    } else if (changes.length) {
      this.changedExtents = overlayExtents(this.changedExtents, changes);
      if (this.changed) {
        for (const e of changes) {
          const from = Math.max(0, e.index - base);
          const to = Math.min(this.slots.length, e.index - base + e.count);
          for (let i = from; i < to && this.changed; i++) {
            if (this.slots[i] !== slotValue(e, i + base)) this.touch(i);
          }
        }
      }
    }
    writeExtents(this.slots, base, changes, this.touched);
    this.refreshExtents();
  }

  /** Rebuilds the extents view of the slots (a renderer's fast path) when the map is complete. */
  refreshExtents() {
    if (!this.initialComplete) { this.extentsClean = false; return; }
    this.extents = overlayExtents(this.initialExtents, this.changedExtents);
    this.extentsClean = this.bad.size === 0;
  }

  /** @param {any} m a hello or frame */
  applyCommon(m) {
    if (typeof m.step === 'number') this.step = m.step;
    if (typeof m.playing === 'boolean') this.playing = m.playing;
    if (typeof m.pace === 'string') this.pace = m.pace;
    if (typeof m.stepsPerSecond === 'number') this.stepsPerSecond = m.stepsPerSecond;
    if (typeof m.timeLeft === 'number') this.timeLeft = m.timeLeft;
  }

  /**
   * Applies a frame.
   * @param {any} f
   * @param {number} now performance.now(), for the flash
   */
  frame(f, now) {
    if (!this.ready) return;
    this.applyCommon(f);
    for (const ev of f.events || []) this.event(ev, now, !!f.full);
    this.applyChanged(f.changed || [], !!f.full);
    // A rejected address stays marked from its error's step on, also after a seek.
    for (const [i, s] of this.badAt) {
      const on = s <= this.step;
      if (on !== this.bad.has(i)) {
        if (on) this.bad.add(i); else this.bad.delete(i);
        this.touch(i);
      }
    }
    if (this.bad.size) this.extentsClean = false;
    if (f.state) this.applyState(f.state, !!f.full, f.step);
  }

  /** @param {number} i slot offset that changed */
  touch(i) {
    this.extentsClean = false;
    if (this.changed && this.changed.length < 65536) this.changed.push(i);
    else if (this.changed) this.changed = null;
  }

  /**
   * Takes what an event shows beyond the slots: the flash of a released slot and a rejected
   * address's mark. The slots themselves come from the frame's changes.
   * @param {any} ev
   * @param {number} now
   * @param {boolean} full the frame replaces the state (its events are history)
   */
  event(ev, now, full) {
    const i = ev.slot - this.range.start;
    const inRange = i >= 0 && i < this.slots.length;
    if (inRange && REJECTS.has(`${ev.kind}:${ev.action}`)) this.badAt.set(i, ev.step);
    if (full) return;
    if (ev.kind === 'slot' && inRange && RELEASES.has(ev.action)) {
      this.flash.set(i, now);
      this.touch(i);
    }
  }

  /**
   * Applies the per-mode states of a hello or frame.
   * @param {any[]} states
   * @param {boolean} full every recently touched segment is present
   * @param {number} step
   */
  applyState(states, full, step) {
    for (const s of states) {
      const m = s.mode;
      const ms = this.per[m];
      if (!ms) continue;
      ms.step = s.step ?? ms.step;
      ms.done = !!s.done;
      ms.errno = s.errno || '';
      ms.message = s.message || '';
      ms.returnedBy = s.returnedBy || '';
      ms.cursor = s.cursor ?? ms.cursor;
      ms.chunk = s.chunk ?? ms.chunk;
      ms.pending = s.pending && s.pending.len > 0 ? s.pending : null;
      ms.iSize = s.iSize ?? ms.iSize;
      if (s.counters) ms.counters = s.counters;
      if (s.sit) ms.sit = s.sit;
      if (typeof s.narration === 'string') ms.narration = s.narration;
      // The server's latest calls are the call log: the same after any path to this step.
      if (Array.isArray(s.calls)) ms.calls = s.calls.map((/** @type {any} */ c) => /** @type {[number, number, string]} */ ([c.start, c.len, c.reason]));
      // A full state lists the segments that differ from the hello's, others those that changed
      // since the previous state (player.ModeState): a full one starts again from the hello's.
      if (full) ms.segments = new Map(this.segBase);
      if (Array.isArray(s.segments)) {
        for (const w of s.segments) {
          const seg = this.seg(w);
          // What a segment was before the run is the hello's (states leave the map out).
          const base = this.segBase.get(w.segno);
          if (base) Object.assign(seg, { validBefore: base.validBefore, mapBefore: base.mapBefore, statusBefore: base.statusBefore });
          ms.segments.set(w.segno, seg);
          if (!this.segOrder.has(w.segno)) this.segOrder.set(w.segno, this.segOrder.size);
        }
      }
      this.sitVersion++;
    }
  }

  /**
   * Returns the listed segnos, those of the latest calls first (newest first; modes in order),
   * then in first-touch order: a function of the state at the step alone.
   * @returns {number[]}
   */
  segmentsByActivity() {
    const g = this.geometry;
    /** @type {number[]} */
    const out = [];
    const seen = new Set();
    for (const m of this.modes) {
      const calls = this.per[m]?.calls || [];
      for (let j = calls.length - 1; j >= 0; j--) {
        const [start, len] = calls[j];
        const a = this.segnoOf(start);
        const b = this.segnoOf(start + Math.max(len, 1) - 1);
        if (a < 0 || b < 0) continue;
        for (let n = a; n <= b && n < a + g.blocksPerSeg; n++) {
          if (!seen.has(n) && this.segOrder.has(n)) { seen.add(n); out.push(n); }
        }
      }
    }
    const rest = [...this.segOrder.keys()].filter((n) => !seen.has(n));
    rest.sort((a, b) => (this.segOrder.get(a) ?? 0) - (this.segOrder.get(b) ?? 0));
    return out.concat(rest);
  }

  /**
   * The SIT valid blocks of the segments the run touches, before the run and now, for mode: the
   * server's totals (exact for any number of segments), else the listed segments' sum.
   * @param {string} mode
   * @returns {{before: number, now: number, segments: number}}
   */
  sitTotals(mode) {
    const ms = this.per[mode];
    let before = 0;
    let now = 0;
    if (!ms) return { before, now, segments: 0 };
    if (ms.sit) return { before: ms.sit.before, now: ms.sit.valid, segments: ms.sit.segments };
    for (const s of ms.segments.values()) { before += s.validBefore; now += s.valid; }
    return { before, now, segments: ms.segments.size };
  }

  /**
   * Counts the slots of the range by state, before the run and now (null while the initial map
   * is still arriving).
   * @returns {{before: ReturnType<typeof countStates>, now: ReturnType<typeof countStates>}|null}
   */
  slotStates() {
    if (!this.initialComplete) return null;
    const lo = this.range.start;
    const hi = this.range.end;
    return { before: countStates(this.initialExtents, lo, hi), now: countStates(this.extents, lo, hi) };
  }

  /**
   * Returns the index in chunks of the chunk holding file block index.
   * @param {number} index
   * @returns {number} -1 when outside every chunk
   */
  chunkOf(index) {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = this.chunks[mid];
      if (index < c.start) hi = mid - 1;
      else if (index >= c.start + c.len) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /**
   * The segment number of a block address, or -1 outside the main area.
   * @param {number} addr
   * @returns {number}
   */
  segnoOf(addr) {
    const g = this.geometry;
    if (addr < g.mainBlkaddr || addr >= g.maxBlkaddr) return -1;
    return segnoOf(g, addr);
  }

  /**
   * The slot the view points at: a tour stop's own slot when the view is at that stop's step (the
   * stop's text is about it: at, set by the page), else the engine's cursor.
   * @returns {number}
   */
  pointer() {
    return this.at ?? this.cursor();
  }

  /**
   * The engine's cursor: the file block index of its next event (the furthest of the modes').
   * @returns {number}
   */
  cursor() {
    let c = this.range.start;
    for (const m of this.modes) c = Math.max(c, this.per[m]?.cursor ?? c);
    return c;
  }

  /**
   * Returns the slot that began mode's pending run (the server says it).
   * @param {string} mode
   * @returns {number|null} file block index, or null without a pending run
   */
  runStart(mode) {
    const ms = this.per[mode];
    if (!ms || !ms.pending) return null;
    return ms.pending.slot;
  }

  /**
   * Returns the index of the tour stop at or before step, or -1.
   * @param {number} step
   * @returns {number}
   */
  stopAt(step) {
    let k = -1;
    for (let i = 0; i < this.stops.length && this.stops[i].step <= step; i++) k = i;
    return k;
  }

  /**
   * Drops finished flashes.
   * @param {number} now
   * @returns {boolean} some flash is still running
   */
  ageFlash(now) {
    for (const [i, t] of this.flash) {
      if (now - t > FLASH_MS) { this.flash.delete(i); this.touch(i); }
    }
    return this.flash.size > 0;
  }
}
