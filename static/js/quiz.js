// The quiz's rules for what the page may show and accept while a question is open (issue 20): a
// question hides everything that would answer it — the narration, the live region, the call log,
// the SIT panel and the stop's title — and an answer counts only when it is one the question can
// take. Pure functions, tested in static/jstest/quiz.test.js; player.js applies them.

import { int as group } from './fmt.js';

/** The narration's text while a question is open: what the kernel does next stays hidden. */
export const VEILED_NARRATION = 'Hidden until you answer: predict what the kernel does next, then the step plays.';

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
 * @param {{correct: boolean, answer: string}} v
 * @param {boolean} [presenter] the page presents a room
 * @returns {string}
 */
export function verdictSpeech(v, presenter = false) {
  if (presenter) return `The answer is ${v.answer}.`;
  return v.correct ? `Correct: the answer is ${v.answer}.` : `Wrong: the answer is ${v.answer}.`;
}
