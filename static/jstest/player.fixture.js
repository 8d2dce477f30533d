// A small run as the server sends it, shared by the player's module tests: a hello for 10 slots in
// one chunk, both modes, a tour of three stops (the second with a yes/no question asked at step 3
// and revealed at 4), and frames that move the model on.
import { RunState } from '../js/state.js';

/** @param {object} [extra] fields that replace the hello's */
export function hello(extra = {}) {
  return {
    v: 2, type: 'hello',
    run: { image: 'demo', path: '/a', ino: 5, size: '40960', offset: '0', length: '40960', keepSize: false, mode: 'both', modes: ['per-block', 'batched'], before: [] },
    totalSteps: 40, step: 0, playing: false, pace: '30', stepsPerSecond: 1.33, timeLeft: 30,
    geometry: { blockSize: 4096, blocksPerSeg: 512, segment0Blkaddr: 512, mainBlkaddr: 4096, maxBlkaddr: 65536, segsPerSec: 1 },
    range: { start: 0, end: 10 },
    chunks: [{ start: 0, len: 10, node: 'inode', path: 'inode', kind: 'inode', nid: 5, missing: 0, step: 2, calls: [8, 1] }],
    markers: [{ step: 5, kind: 'flush' }, { step: 9, kind: 'flush' }],
    stops: [
      { step: 0, kind: 'start', slot: 0, title: 'Start', text: 'the start', terms: [] },
      { step: 4, kind: 'flush-discontiguous', slot: 3, title: 'Slot 3 ends the run', text: 'flushed', terms: ['pending-run'],
        question: { kind: 'yesno', text: 'Does slot 3 end the pending run?', ask: 3, reveal: 4 } },
      { step: 40, kind: 'end', slot: 10, title: 'End', text: 'the end', terms: [] },
    ],
    outcome: { returns: 'f2fs_zero_range returns 0', line: 'f2fs_zero_range returns 0: 8 per-block calls against 1 batched, 8.0× fewer SIT lock holds, and the same slots and SIT at the end.' },
    segments: [{ segno: 1, validBefore: 10, valid: 10, mapBefore: 'ff', map: 'ff', classBefore: 'dirty', class: 'dirty' }],
    segTypes: { 1: 2 },
    initial: { from: 0, next: 10, extents: [{ index: 0, count: 8, state: 'addr', addr: 4608 }, { index: 8, count: 2, state: 'null' }] },
    changed: [],
    state: [
      { mode: 'per-block', step: 0, done: false, errno: '', cursor: 0, chunk: -1, pending: null, counters: { calls: 0 }, segments: [], calls: [], narration: '' },
      { mode: 'batched', step: 0, done: false, errno: '', cursor: 0, chunk: -1, pending: null, counters: { calls: 0 }, segments: [], calls: [], narration: '' },
    ],
    score: { right: 0, asked: 0 },
    ...extra,
  };
}

/**
 * A frame at step with the modes' counters and narration.
 * @param {number} step
 * @param {{calls?: number, blocks?: number, narration?: string, done?: boolean, pending?: object|null, playing?: boolean}} [o]
 */
export function frame(step, o = {}) {
  const calls = o.calls ?? 0;
  const blocks = o.blocks ?? calls;
  const ms = (mode, n) => ({
    mode, step, done: !!o.done, errno: '', cursor: Math.min(step, 10), chunk: 0, pending: mode === 'batched' ? (o.pending ?? null) : null,
    counters: { calls: n, blocksInvalidated: blocks, sitLockAcquisitions: n, segmentsPrefree: 0 },
    segments: [], calls: Array.from({ length: Math.min(n, 3) }, (_, i) => [4608 + i, 1, 'per-block']),
    narration: o.narration ?? `step ${step}`,
  });
  return {
    type: 'frame', step, full: false, playing: !!o.playing, events: [], changed: [],
    state: [ms('per-block', calls), ms('batched', Math.min(calls, 1))],
  };
}

/** @returns {RunState} a model that took the hello */
export function model(extra = {}) {
  const st = new RunState();
  st.hello(hello(extra));
  return st;
}
