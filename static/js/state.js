// The player's model: the slots of the range, each mode's SIT and
// counters, built from the websocket's hello and frames
// (docs/protocol.md). No drawing and no I/O here.

/** Slot values with a meaning of their own (f2fs.h). */
export const NULL_ADDR = 0;
export const NEW_ADDR = 0xffffffff;
export const COMPRESS_ADDR = 0xfffffffe;

/** How long an invalidated slot flashes, in milliseconds. */
export const FLASH_MS = 450;

/** The two engines, per-block first as the protocol orders them. */
export const MODES = Object.freeze(['per-block', 'batched']);

/**
 * @typedef {object} Segment
 * @property {number} segno
 * @property {number} valid
 * @property {number} type
 * @property {boolean} current
 * @property {string} status "free", "full", "dirty", "prefree", "current"
 * @property {Uint8Array} map the 64-byte cur_valid_map (bit k: byte k>>3, mask 0x80>>(k&7))
 */

/**
 * @typedef {object} ModeState
 * @property {number} step
 * @property {boolean} done
 * @property {string} errno
 * @property {number} cursor
 * @property {number} chunk
 * @property {{start: number, len: number}|null} pending
 * @property {{calls: number, sitLockAcquisitions: number, blocksInvalidated: number, slotsVisited: number, dnodeChunks: number}} counters
 * @property {Map<number, Segment>} segments
 * @property {Array<[number, number, string]>} calls newest last, at most MAX_CALLS
 * @property {string} narration
 * @property {number|null} runStart slot that started the pending run, when seen
 */

const MAX_CALLS = 64;

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
 * Converts a wire segment to the model's.
 * @param {any} s
 * @returns {Segment}
 */
function segment(s) {
  return {
    segno: s.segno, valid: s.valid, type: s.type, current: !!s.current,
    status: s.status || (s.current ? 'current' : s.valid === 0 ? 'free' : 'clean'), map: hexMap(s.map),
  };
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
    this.stepsPerSecond = 20;
    this.mode = 'both';
    /** @type {string[]} */
    this.modes = [];
    this.geometry = { blockSize: 4096, blocksPerSeg: 512, segment0Blkaddr: 0, mainBlkaddr: 0, maxBlkaddr: 0 };
    this.range = { start: 0, end: 0 };
    /** @type {Array<{start: number, len: number, kind: string, path: string, nid: number, missing: number}>} */
    this.chunks = [];
    /** @type {Array<{step: number, kind: string, mode?: string}>} */
    this.markers = [];
    this.slots = new Uint32Array(0);
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
    /** @type {Array<{index: number, count: number, state: string, addr?: number}>} */
    this.extents = [];
    this.extentsClean = false;
    /** segno → first-touch order, from hello */
    this.segOrder = new Map();
    /** segno → the player step of its latest change, for "newest on top" */
    this.segActivity = new Map();
    /** bumped on every SIT change, so the SIT panel redraws only then */
    this.sitVersion = 0;
    this.info = { image: '', path: '', ino: 0, size: 0, offset: 0, length: 0, keepSize: false };
    this.error = '';
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

  /**
   * Replaces everything with a hello message.
   * @param {any} h
   */
  hello(h) {
    this.ready = true;
    this.error = '';
    this.info = { image: h.image, path: h.path, ino: h.ino, size: h.size, offset: h.offset, length: h.length, keepSize: !!h.keepSize };
    this.totalSteps = h.totalSteps || 0;
    this.mode = h.mode;
    this.modes = (h.modes && h.modes.length) ? h.modes : (h.mode === 'both' ? [...MODES] : [h.mode]);
    this.geometry = { ...this.geometry, ...(h.geometry || {}) };
    this.range = h.range || { start: 0, end: 0 };
    this.chunks = h.chunks || [];
    this.markers = h.markers || [];
    this.markersThinned = !!h.markersThinned;
    this.slots = new Uint32Array(Math.max(0, this.range.end - this.range.start));
    this.badAt = new Map();
    this.setExtents(h.slots || []);
    /** the slots before the run, to find where a pending run began; hello
     * carries the slots at its step, so this is exact only at step 0 until
     * setInitial gives the file's on-disk map */
    this.initial = this.slots.slice();
    this.segOrder = new Map();
    /** @type {any[]} */
    const initial = h.segments || [];
    initial.forEach((s, i) => this.segOrder.set(s.segno, i));
    this.segActivity = new Map();
    this.sitVersion++;
    this.per = {};
    for (const m of this.modes) {
      const segs = new Map();
      for (const s of initial) segs.set(s.segno, segment(s));
      this.per[m] = {
        step: 0, done: false, errno: '', cursor: this.range.start, chunk: 0, pending: null,
        counters: { calls: 0, sitLockAcquisitions: 0, blocksInvalidated: 0, slotsVisited: 0, dnodeChunks: 0 },
        segments: segs, calls: [], narration: '', runStart: null,
      };
    }
    this.applyCommon(h);
    if (h.state) this.applyState(h.state, true, h.step || 0);
  }

  /**
   * Sets the slots from extents ({index, count, state, addr}).
   * @param {Array<{index: number, count: number, state: string, addr?: number}>} ext
   */
  setExtents(ext) {
    const base = this.range.start;
    const n = this.slots.length;
    this.slots.fill(NULL_ADDR);
    for (const e of ext) {
      const from = Math.max(0, e.index - base);
      const to = Math.min(n, e.index - base + e.count);
      if (to <= from) continue;
      switch (e.state) {
        case 'new': this.slots.fill(NEW_ADDR, from, to); break;
        case 'compress': this.slots.fill(COMPRESS_ADDR, from, to); break;
        case 'addr': {
          const a0 = (e.addr || 0) + (from - (e.index - base));
          for (let i = from; i < to; i++) this.slots[i] = a0 + (i - from);
          break;
        }
        default: break;
      }
    }
    this.bad.clear();
    this.flash.clear();
    this.changed = null;
    /** the extents the slots were last set from, while no slot changed since */
    this.extents = ext;
    this.extentsClean = true;
  }

  /**
   * Sets the slots as they were before the run, from the file's on-disk
   * extents (GET /api/images/{id}/map).
   * @param {Array<{index: number, count: number, state: string, addr?: number}>} ext
   */
  setInitial(ext) {
    const cur = this.slots;
    const bad = this.bad;
    const flash = this.flash;
    const changed = this.changed;
    const extents = this.extents;
    const clean = this.extentsClean;
    this.slots = new Uint32Array(cur.length);
    this.setExtents(ext);
    this.extents = extents;
    this.extentsClean = clean;
    this.initial = this.slots;
    this.slots = cur;
    this.bad = bad;
    this.flash = flash;
    this.changed = changed;
    for (const m of this.modes) this.per[m].runStart = null;
  }

  /** @param {any} m a hello or frame */
  applyCommon(m) {
    if (typeof m.step === 'number') this.step = m.step;
    if (typeof m.playing === 'boolean') this.playing = m.playing;
    if (typeof m.stepsPerSecond === 'number') this.stepsPerSecond = m.stepsPerSecond;
  }

  /**
   * Applies a frame.
   * @param {any} f
   * @param {number} now performance.now(), for the flash
   */
  frame(f, now) {
    if (!this.ready) return;
    this.applyCommon(f);
    if (f.full) {
      if (f.slots) this.setExtents(f.slots);
      for (const m of this.modes) this.per[m].runStart = null;
    } else {
      for (const ev of f.events || []) this.event(ev, now);
    }
    for (const ev of f.events || []) {
      if (ev.kind === 'error' && (ev.action === 'bounds' || ev.action === 'sit-bit')) {
        const i = ev.slot - this.range.start;
        if (i >= 0 && i < this.slots.length) this.badAt.set(i, ev.step);
      }
    }
    // A rejected address stays marked from its error's step on, also
    // after a seek (full frames carry no events).
    for (const [i, s] of this.badAt) {
      const on = s <= this.step;
      if (on !== this.bad.has(i)) {
        if (on) this.bad.add(i); else this.bad.delete(i);
        this.touch(i);
      }
    }
    if (f.state) this.applyState(f.state, !!f.full, f.step);
  }

  /** @param {number} i slot offset that changed */
  touch(i) {
    this.extentsClean = false;
    if (this.changed && this.changed.length < 65536) this.changed.push(i);
    else if (this.changed) this.changed = null;
  }

  /**
   * Applies one event's slot change and call (docs/protocol.md, "Slot
   * changes a client applies from events").
   * @param {any} ev
   * @param {number} now
   */
  event(ev, now) {
    const base = this.range.start;
    const n = this.slots.length;
    switch (ev.kind) {
      case 'slot':
        if (ev.action === 'invalidate' || ev.action === 'start-run' || ev.action === 'extend-run') {
          const i = ev.slot - base;
          const ms = this.per[ev.mode];
          if (ms && ev.action === 'start-run') ms.runStart = ev.slot;
          if (i >= 0 && i < n) {
            this.slots[i] = NEW_ADDR;
            this.flash.set(i, now);
            this.touch(i);
          }
        }
        break;
      case 'reserve': {
        const c = this.chunks[ev.chunk];
        if (!c) break;
        let left = ev.len || 0;
        const from = Math.max(0, c.start - base);
        const to = Math.min(n, c.start - base + c.len);
        for (let i = from; i < to && left > 0; i++) {
          if (this.slots[i] === NULL_ADDR) { this.slots[i] = NEW_ADDR; this.touch(i); left--; }
        }
        break;
      }
      case 'fill-zero':
      case 'inline-convert': {
        const i = ev.kind === 'inline-convert' ? -base : ev.slot - base;
        if (i < 0 || i >= n) break;
        if (ev.kind === 'fill-zero' && ev.state === 'null') { this.slots[i] = NEW_ADDR; this.touch(i); }
        if (ev.kind === 'inline-convert' && ev.addr) { this.slots[i] = ev.addr; this.touch(i); }
        break;
      }
      case 'invalidate': {
        const ms = this.per[ev.mode];
        if (ms) {
          ms.runStart = null;
          ms.calls.push([ev.addr, ev.len, ev.action || '']);
          if (ms.calls.length > MAX_CALLS) ms.calls.splice(0, ms.calls.length - MAX_CALLS);
        }
        break;
      }
      default: break;
    }
  }

  /**
   * Applies the per-mode state of a hello or frame.
   * @param {Record<string, any>} st
   * @param {boolean} full every touched segment is present
   * @param {number} step
   */
  applyState(st, full, step) {
    for (const m of Object.keys(st)) {
      const ms = this.per[m];
      const s = st[m];
      if (!ms || !s) continue;
      ms.step = s.step ?? ms.step;
      ms.done = !!s.done;
      ms.errno = s.errno || '';
      ms.cursor = s.cursor ?? ms.cursor;
      ms.chunk = s.chunk ?? ms.chunk;
      ms.pending = s.pending && s.pending.len > 0 ? s.pending : null;
      if (s.counters) ms.counters = s.counters;
      if (typeof s.narration === 'string') ms.narration = s.narration;
      if (Array.isArray(s.calls)) ms.calls = s.calls.slice(-MAX_CALLS);
      if (Array.isArray(s.segments)) {
        for (const w of s.segments) {
          const old = ms.segments.get(w.segno);
          const seg = segment(w);
          if (!full || (old && (old.valid !== seg.valid || old.status !== seg.status))) {
            this.segActivity.set(w.segno, step);
          }
          ms.segments.set(w.segno, seg);
          this.sitVersion++;
          if (!this.segOrder.has(w.segno)) this.segOrder.set(w.segno, this.segOrder.size);
        }
      }
    }
  }

  /**
   * Returns the touched segnos, most recent activity first, then in
   * first-touch order.
   * @returns {number[]}
   */
  segmentsByActivity() {
    const segs = [...this.segOrder.keys()];
    return segs.sort((a, b) => {
      const da = this.segActivity.get(a) ?? -1;
      const db = this.segActivity.get(b) ?? -1;
      if (da !== db) return db - da;
      return (this.segOrder.get(a) ?? 0) - (this.segOrder.get(b) ?? 0);
    });
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
    return Math.floor((addr - g.mainBlkaddr) / g.blocksPerSeg);
  }

  /**
   * The cursor to draw: the furthest engine's, since both walk the same
   * slots in lockstep.
   * @returns {number}
   */
  cursor() {
    let c = this.range.start;
    for (const m of this.modes) c = Math.max(c, this.per[m]?.cursor ?? c);
    return c;
  }

  /**
   * Returns the slot that began mode's pending run: the slot in the
   * cursor's chunk that held blkstart before the run. The run is
   * contiguous by construction, so that slot is unique in a consistent
   * file.
   * @param {string} mode
   * @returns {number|null} file block index, or null without a pending run
   */
  runStart(mode) {
    const ms = this.per[mode];
    if (!ms || !ms.pending) return null;
    if (ms.runStart !== null && ms.runStart !== undefined) return ms.runStart;
    const base = this.range.start;
    const c = this.chunks[this.chunkOf(ms.cursor - 1)];
    const lo = c ? Math.max(0, c.start - base) : 0;
    for (let i = Math.min(this.slots.length, ms.cursor - base) - 1; i >= lo; i--) {
      if (this.initial[i] === ms.pending.start) {
        ms.runStart = base + i;
        return ms.runStart;
      }
    }
    return null;
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
