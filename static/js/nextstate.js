// The "what happens next" panel's state (issue 22): which frame of the timeline after the run it
// shows, for which policy and clock, and how the panel's controls change it. The state lives in
// the player's URL (next, policy, now), so a copied address is a permalink of the frame; the
// server (GET /api/images/{id}/next) computes every frame. Pure functions, tested in
// static/jstest/nextstate.test.js; nextpanel.js applies them.

import { apiImage, setRunQuery } from './links.js';
import { int } from './fmt.js';
import { contract } from './contract.js';

/** The policies, as the URL and the API spell them. */
export const POLICIES = ['greedy', 'cost-benefit'];

/** The largest clock the panel sends: the server takes any 64-bit count, the input a safe one. */
export const MAX_NOW = Number.MAX_SAFE_INTEGER;

/**
 * @typedef {object} NextState
 * @property {boolean} open the panel is shown
 * @property {number} at the frame, from 0
 * @property {string} policy "greedy" or "cost-benefit"
 * @property {number} now the seconds since mount
 */

/**
 * Reads the panel's state from a query: next=FRAME opens it, policy and now choose the timeline.
 * Anything malformed falls back to the default (closed, frame 0, greedy, 0 s).
 * @param {URLSearchParams} q
 * @returns {NextState}
 */
export function readState(q) {
  const at = q.get('next');
  const now = q.get('now') || '0';
  const policy = q.get('policy') || 'greedy';
  return {
    open: at !== null && /^\d+$/.test(at),
    at: at !== null && /^\d+$/.test(at) ? Number(at) : 0,
    policy: POLICIES.includes(policy) ? policy : 'greedy',
    now: /^\d+$/.test(now) && Number(now) <= MAX_NOW ? Number(now) : 0,
  };
}

/**
 * Writes the state into a query, leaving the player's own parameters alone: a closed panel takes
 * its parameters out; defaults (greedy, 0 s) are left out.
 * @param {URLSearchParams} q
 * @param {NextState} s
 * @returns {URLSearchParams} q
 */
export function writeState(q, s) {
  if (!s.open) {
    q.delete('next');
  } else {
    q.set('next', String(s.at));
  }
  if (s.open && s.policy !== 'greedy') q.set('policy', s.policy); else q.delete('policy');
  if (s.open && s.now !== 0) q.set('now', String(s.now)); else q.delete('now');
  return q;
}

/**
 * @typedef {{type: 'step', n: number} | {type: 'home'} | {type: 'end'} | {type: 'seek', at: number}
 *   | {type: 'policy', policy: string} | {type: 'now', now: number} | {type: 'open'} | {type: 'close'}} NextAction
 */

/**
 * Applies one of the panel's controls. frames is how many frames the current timeline has (0 when
 * not known yet): moves stay inside it. A new policy or clock is another timeline; the frame stays
 * where it was, and the server sends the new timeline's last frame if it is past its end.
 * @param {NextState} s
 * @param {NextAction} a
 * @param {number} frames
 * @returns {NextState}
 */
export function apply(s, a, frames) {
  const last = Math.max(0, frames - 1);
  const clamp = (/** @type {number} */ k) => Math.max(0, Math.min(frames > 0 ? last : k, Math.trunc(k)));
  switch (a.type) {
    case 'step': return { ...s, at: clamp(s.at + a.n) };
    case 'home': return { ...s, at: 0 };
    case 'end': return { ...s, at: last };
    case 'seek': return { ...s, at: clamp(Number.isFinite(a.at) ? a.at : 0) };
    case 'policy': return POLICIES.includes(a.policy) ? { ...s, policy: a.policy } : s;
    case 'now': return Number.isSafeInteger(a.now) && a.now >= 0 ? { ...s, now: a.now } : s;
    case 'open': return { ...s, open: true };
    case 'close': return { ...s, open: false };
  }
  return s;
}

/**
 * Reads the clock the user typed: whole seconds, thousands separators allowed.
 * @param {string} raw
 * @returns {number|null} null when it is not a count of seconds
 */
export function parseNow(raw) {
  const d = String(raw ?? '').trim().replace(/[,_\s]/g, '');
  if (!/^\d+$/.test(d)) return null;
  const n = Number(d);
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * The API address of a frame: the run's parameters (from the player's data attributes), the state
 * and the quiz.
 * @param {{image: string, path: string, op?: string, offset: string, length: string, keepSize: boolean, before: string[]}} run
 * @param {NextState} s
 * @param {boolean} quiz
 * @returns {string}
 */
export function frameURL(run, s, quiz) {
  const q = setRunQuery(new URLSearchParams(), run);
  q.set('policy', s.policy);
  q.set('now', String(s.now));
  q.set('at', String(s.at));
  if (quiz) q.set('quiz', '1');
  return `${apiImage(run.image, 'next')}?${q}`;
}

/** A segment's class letter, as the API sends it, and what the map calls it: the contract's classes. */
export const CLASS_NAMES = contract().classLetters;

/** The class of a segment the timeline has no letter for. */
const FREE = contract().segmentClasses.free;

/**
 * The candidates table's columns and each candidate's cells. While a question is open the table
 * lists the sections in segment order with every term the policy weighs and no cost or rank (the
 * answer): greedy weighs the valid blocks; cost-benefit the valid blocks (as u) and the age of
 * the mean mtime (issue 30).
 * @param {boolean} veiled a question is open
 * @param {string} policy "greedy" or "cost-benefit"
 * @returns {{cols: string[], cells: (c: any, chosen: boolean) => string[]}}
 */
export function candidateTable(veiled, policy) {
  if (!veiled) {
    return {
      cols: ['#', 'section', 'valid', 'mean mtime', 'u %', 'age', 'cost'],
      cells: (c, chosen) => [String(c.rank), `segment ${c.segno}${chosen ? ' ◂ victim' : ''}`, int(c.valid), int(c.mtime), String(c.u), String(c.age), String(c.cost)],
    };
  }
  if (policy === 'cost-benefit') {
    return {
      cols: ['section', 'valid', 'u %', 'mean mtime', 'age'],
      cells: (c) => [`segment ${c.segno}`, int(c.valid), String(c.u ?? '?'), int(c.mtime), String(c.age ?? '?')],
    };
  }
  return { cols: ['section', 'valid', 'mean mtime'], cells: (c) => [`segment ${c.segno}`, int(c.valid), int(c.mtime)] };
}

/**
 * A map cell's hover: its class and valid blocks, and for a candidate of a cost-benefit search
 * the mean mtime and age it is weighed by, a question open or not.
 * @param {number} segno
 * @param {string} letter its class letter
 * @param {number} valid
 * @param {any} cand the candidate starting at segno, or undefined
 * @param {string} policy
 * @returns {string}
 */
export function cellTitle(segno, letter, valid, cand, policy) {
  let t = `segment ${segno}: ${CLASS_NAMES[letter]}, ${valid} valid`;
  if (cand && policy === 'cost-benefit' && cand.age !== undefined) t += `, mean mtime ${int(cand.mtime)}, age ${cand.age}`;
  return t;
}


/**
 * The classes of one segment's cell on the map: its state, and what the frame does to it — the
 * victim's section, where the victim's blocks go, a section a background call marked.
 * @param {string} letter the class letter
 * @param {{victim: boolean, dest: boolean, marked: boolean}} f
 * @returns {string}
 */
export function cellClass(letter, f) {
  let c = `gc-cell gc-${CLASS_NAMES[letter] || FREE}`;
  if (f.victim) c += ' gc-victim';
  else if (f.marked) c += ' gc-marked';
  if (f.dest) c += ' gc-dest';
  return c;
}

/**
 * What a frame marks on the map: the victim's section (victim, move and sync frames), the
 * segments its blocks went to, the marked sections.
 * @param {{victim: number|null, moves: Array<{from: number, to: number}>, marked: number[]}} frame
 * @param {number} segsPerSec
 * @returns {{victim: Set<number>, dest: Set<number>, marked: Set<number>}}
 */
export function marks(frame, segsPerSec) {
  const victim = new Set();
  if (frame.victim !== null && frame.victim !== undefined) {
    for (let i = 0; i < segsPerSec; i++) victim.add(frame.victim + i);
  }
  const dest = new Set(frame.moves.map((m) => m.to));
  const marked = new Set();
  for (const m of frame.marked) for (let i = 0; i < segsPerSec; i++) marked.add(m + i);
  return { victim, dest, marked };
}

/**
 * The question asked at frame at, if the quiz is on and it is not answered yet.
 * @param {Array<{at: number, question?: {text: string, choices: string[], reveal: number}}>} stops
 * @param {number} at
 * @param {boolean} quiz
 * @param {Map<number, string>} answers guesses by the frame they were asked at
 * @returns {{text: string, choices: string[], reveal: number}|null}
 */
export function openQuestion(stops, at, quiz, answers) {
  if (!quiz) return null;
  const s = stops.find((x) => x.at === at && x.question);
  return s && s.question && !answers.has(at) ? s.question : null;
}

/**
 * The verdict shown at a reveal frame for a guess made at the question before it.
 * @param {Array<{at: number, question?: {reveal: number}}>} stops
 * @param {number} at the frame shown
 * @param {number|null} victim the frame's victim
 * @param {Map<number, string>} answers
 * @returns {string}
 */
export function verdictAt(stops, at, victim, answers) {
  const s = stops.find((x) => x.question && x.question.reveal === at);
  if (!s || victim === null || !answers.has(s.at)) return '';
  const g = answers.get(s.at);
  const want = `segment ${victim}`;
  return g === want ? `Right: the cleaner picks ${want}.` : `Not this time: you chose ${g}; the cleaner picks ${want}.`;
}

/**
 * The tour stop open at frame at: the last one at or before it, or -1.
 * @param {Array<{at: number}>} stops sorted by frame
 * @param {number} at
 * @returns {number}
 */
export function stopIndex(stops, at) {
  let k = -1;
  stops.forEach((s, i) => { if (s.at <= at) k = i; });
  return k;
}

/**
 * One line of a frame's moves: "464 blocks: segment 38 → segment 29 (cold data log)".
 * @param {{count: number, from: number, to: number, logName: string}} m
 * @returns {string}
 */
export function moveLine(m) {
  return `${int(m.count)} block${m.count === 1 ? '' : 's'}: segment ${m.from} → segment ${m.to} (${m.logName} log)`;
}

/**
 * The map's words for screen readers (and the tests): the counts and what this frame marks.
 * @param {{counts: Array<{class: string, n: number}>, victim: number|null, moves: Array<{from: number, to: number}>, marked: number[]}} f
 * @param {number} segsPerSec
 * @returns {string}
 */
export function mapText(f, segsPerSec) {
  const m = marks(f, segsPerSec);
  const parts = [f.counts.map((c) => `${c.n} ${c.class}`).join(', ')];
  if (m.victim.size) parts.push(`victim: the section at segment ${f.victim}`);
  if (m.dest.size) parts.push(`blocks went to segment ${[...m.dest].join(', ')}`);
  if (f.marked.length) parts.push(`marked: ${f.marked.join(', ')}`);
  return `${parts.join('; ')}.`;
}
