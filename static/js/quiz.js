// The quiz's rules for what the page may show and accept while a question is open (issues 20, 30): a
// question carries what it withholds (question.withholds, made by player.Withholds per stop kind),
// veilOf turns it into the page's veil, and every text, colour and mark the page draws consults it
// (panels.js, describe.js, slotsview.js, sitview.js, speech.js, permalink.js); an answer counts only
// when it is one the question can take. Pure functions, tested in static/jstest/quiz.test.js and,
// as a property of the whole page's state, static/jstest/veil.test.js; player.js applies them.

import { int as group } from './fmt.js';

/** The narration's text while a question is open: what the kernel does next stays hidden. */
export const VEILED_NARRATION = 'Hidden until you answer: predict what the kernel does next, then the step plays.';

/** What a page withholds: the names of player.Withholds. */
export const WITHHOLD = Object.freeze({
  later: 'later', narration: 'narration', calls: 'calls', counters: 'counters', sit: 'sit', stop: 'stop',
  runs: 'runs', segments: 'segments',
});

/** Everything: what a question without its list (an older server) and a view past the question withhold. */
const ALL = Object.freeze(Object.values(WITHHOLD));

/**
 * What the page withholds now.
 * @typedef {object} Veil
 * @property {number} stop the open question's stop, -1 for none
 * @property {boolean} beyond the view shows a step past the question's ask step (a seek back to it
 *   is on its way): nothing of that step may show, so everything is withheld
 * @property {ReadonlySet<string>} withholds the question's list
 */

/** @type {Veil} */
export const NO_VEIL = Object.freeze({ stop: -1, beyond: false, withholds: new Set() });

/**
 * Returns the veil of the question open at stop k (-1: none) while the view shows step.
 * @param {Array<{question?: {ask: number, withholds?: string[]}}>} stops
 * @param {number} k the open question's stop, or -1
 * @param {number} step the step the model shows
 * @returns {Veil}
 */
export function veilOf(stops, k, step) {
  const q = k >= 0 ? stops[k]?.question : undefined;
  if (!q) return NO_VEIL;
  const w = new Set(q.withholds && q.withholds.length ? q.withholds : ALL);
  return { stop: k, beyond: w.has(WITHHOLD.later) && step > q.ask, withholds: w };
}

/**
 * Reports whether the veil withholds what: the question's list says so, or the view is past it.
 * @param {Veil|null|undefined} v
 * @param {string} what one of WITHHOLD
 * @returns {boolean}
 */
export function withholds(v, what) {
  return !!v && v.stop >= 0 && (v.beyond || v.withholds.has(what));
}

/**
 * How the canvases draw under a veil.
 * @typedef {object} CanvasView
 * @property {boolean} freeze draw nothing of this step: the view is past the question (a seek back
 *   to it is on its way), so the canvases keep what they showed
 * @property {boolean} plain every address in one colour: the colouring chosen shows what the
 *   question withholds (by run: the runs; by segment or log type: the segments)
 * @property {boolean} bounds an address outside the main area is marked invalid
 * @property {boolean} sit the SIT panel is drawn
 */

/**
 * Returns how the canvases draw under veil v with the colouring by.
 * @param {Veil} v
 * @param {string} by "run", "segment" or "log"
 * @returns {CanvasView}
 */
export function canvasView(v, by) {
  const runs = withholds(v, WITHHOLD.runs);
  const segs = withholds(v, WITHHOLD.segments);
  return {
    freeze: v.stop >= 0 && v.beyond,
    plain: (runs && by === 'run') || (segs && (by === 'segment' || by === 'log')),
    bounds: !segs,
    sit: !withholds(v, WITHHOLD.sit),
  };
}

/**
 * The tour panel's title while a question is open. The stop's own title names what happens (for
 * example "NEW_ADDR does not end a run"), so the panel says only which question this is.
 * @param {number} nth the question's place among the tour's questions, from 0
 * @param {number} count the tour's questions
 * @returns {string}
 */
export function veiledTitle(nth, count) {
  return count > 0 ? `Predict: question ${nth + 1} of ${count}` : 'Predict';
}

/**
 * Counts the stops with a question and says where stop k is among them.
 * @param {Array<{question?: object}>} stops
 * @param {number} k
 * @returns {{nth: number, count: number}}
 */
export function questionPlace(stops, k) {
  let nth = -1;
  let count = 0;
  stops.forEach((s, i) => {
    if (!s.question) return;
    if (i === k) nth = count;
    count++;
  });
  return { nth, count };
}

/**
 * The choices a question offers as buttons: yes and no, its choices, or none (a number is typed).
 * @param {{kind: string, choices?: string[]}} q
 * @returns {string[]}
 */
export function choicesOf(q) {
  if (q.kind === 'yesno') return ['yes', 'no'];
  if (q.kind === 'choice') return q.choices || [];
  return [];
}

/**
 * Checks an answer before it is sent, so that a slip ("abc" for a segment number, a number larger
 * than the range has slots) does not use the question up: a yes/no or a choice must be one of the
 * offered choices; a number must be a whole number from 0 to max (thousands separators, spaces
 * and underscores are allowed). It takes, refuses and rewrites answers as the server's
 * player.Question.Normalise and web's checkAnswer do: static/jstest/quiz.test.js holds it to the
 * server's own answers (testdata/answers.json), so it is a courtesy, never a second rule.
 * @param {{kind: string, choices?: string[]}} q
 * @param {string} raw what the student typed or pressed
 * @param {number} max the largest number the question can have as its answer (the range's slots)
 * @returns {{ok: true, value: string} | {ok: false, hint: string}}
 */
export function checkAnswer(q, raw, max) {
  const a = String(raw ?? '').trim();
  if (q.kind === 'number') {
    const digits = a.replace(/[,_\s]/g, '');
    if (!/^\d+$/.test(digits)) {
      return { ok: false, hint: `type a whole number from 0 to ${group(max)}` };
    }
    const n = Number(digits);
    if (!Number.isSafeInteger(n) || n > max) {
      return { ok: false, hint: `${group(Number.isSafeInteger(n) ? n : max + 1)} is more than this range has slots: type a number from 0 to ${group(max)}` };
    }
    return { ok: true, value: String(n) };
  }
  const opts = choicesOf(q);
  const lower = a.toLowerCase();
  const alias = q.kind === 'yesno' ? ({ y: 'yes', n: 'no' })[lower] : undefined;
  const hit = opts.find((c) => c.toLowerCase() === lower) || alias;
  if (!hit) return { ok: false, hint: `choose one of: ${opts.join(', ')}` };
  return { ok: true, value: hit };
}

/**
 * What the live region says when a verdict arrives: the verdict and the right answer together. A
 * room's presenter did not answer: they hear the answer alone, not a verdict of their own.
 * @param {{correct: boolean, answer: string, unanswered?: boolean}} v
 * @param {boolean} [presenter] the page presents a room
 * @returns {string}
 */
export function verdictSpeech(v, presenter = false) {
  if (presenter) return `The answer is ${v.answer}.`;
  if (v.unanswered) return `Not answered: the answer is ${v.answer}.`;
  return v.correct ? `Correct: the answer is ${v.answer}.` : `Wrong: the answer is ${v.answer}.`;
}
