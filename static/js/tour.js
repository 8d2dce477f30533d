// The guided tour and the quiz: which stop the view is at, where n and p go, which question is
// open. The stops come from the server (hello.stops, package player); these are pure functions of
// them, tested in static/jstest/tour.test.js.

/**
 * @typedef {object} Question
 * @property {string} kind "number", "yesno" or "choice"
 * @property {string} text
 * @property {string[]} [choices]
 * @property {number} ask the step the question is asked at
 * @property {number} reveal the step that shows the answer
 * @property {string[]} [withholds] what the page must not show while it is open (player.Withholds)
 */

/**
 * @typedef {object} Stop
 * @property {number} step
 * @property {string} kind
 * @property {string} [mode]
 * @property {number} slot
 * @property {string} title
 * @property {string} text
 * @property {string[]} terms glossary slugs
 * @property {Question} [question] no answer: the server checks it
 */

/**
 * The step a stop takes the view to: its own, or in a quiz the step its question is asked at.
 * @param {Stop} s
 * @param {boolean} quiz
 * @returns {number}
 */
export function stopStep(s, quiz) {
  return quiz && s.question ? s.question.ask : s.step;
}

/**
 * Returns the index of the stop the view is at: the last one whose step is at or before step, or
 * -1 before the first.
 * @param {Stop[]} stops sorted by step
 * @param {number} step
 * @returns {number}
 */
export function stopAt(stops, step) {
  let lo = 0;
  let hi = stops.length - 1;
  let k = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (stops[mid].step <= step) { k = mid; lo = mid + 1; } else hi = mid - 1;
  }
  // Several stops may share a step (a call's flush and its SIT update): the first of them.
  while (k > 0 && stops[k - 1].step === stops[k].step) k--;
  return k;
}

/**
 * Returns the stop n goes to: the one after the open one, or -1 after the last.
 * @param {Stop[]} stops
 * @param {number} open the open stop's index (-1: none yet)
 * @returns {number}
 */
export function nextStop(stops, open) {
  return open + 1 < stops.length ? Math.max(0, open + 1) : -1;
}

/**
 * Returns the stop p goes to: the one before the open one, or -1.
 * @param {Stop[]} stops
 * @param {number} open
 * @returns {number}
 */
export function prevStop(stops, open) {
  return open > 0 ? Math.min(open - 1, stops.length - 1) : -1;
}

/**
 * Says where the view is in the tour: "stop 3 of 9", or "before stop 1 of 9".
 * @param {number} open
 * @param {number} count
 * @param {boolean} [more] the server withholds the stops after these (a quiz's hold)
 * @returns {string}
 */
export function tourPosition(open, count, more = false) {
  // A quiz's hold withholds the stops past its question (web/quizhold.go): their count too.
  const of = more ? `${count}+` : String(count);
  if (count === 0) return more ? 'stops after your answer' : 'no stops';
  if (open < 0) return `before stop 1 of ${of}`;
  return `stop ${open + 1} of ${of}`;
}

/**
 * Returns the question a quiz should ask now, -1 when none. Held (the page drives its own run): the
 * first unanswered question asked at or before step, however far past it the view went — a quiz
 * holds the view at the question until it is answered (player.WithholdLater), and while a seek
 * back is on its way the question stays open over whatever step is shown. Not held (a follower
 * mirroring its presenter, whose page cannot seek): the unanswered question asked at or before
 * step and revealed after it.
 * @param {Stop[]} stops
 * @param {number} step
 * @param {Set<number>} answered stop indices answered already
 * @param {boolean} [held]
 * @returns {number}
 */
export function openQuestion(stops, step, answered, held = false) {
  for (let k = 0; k < stops.length; k++) {
    const q = stops[k].question;
    if (!q || answered.has(k)) continue;
    if (held && q.ask <= step) return k;
    if (q.ask <= step && step < q.reveal) return k;
    if (q.ask === step && q.reveal === step) return k;
  }
  return -1;
}

/**
 * The verdict as the page shows it: "correct", or "wrong: " and the right answer; in a room, a
 * follower who gave no answer is told so ("not answered: " and the answer), not that it was wrong.
 * @param {{correct: boolean, answer: string, unanswered?: boolean}} v
 * @returns {string}
 */
export function verdictText(v) {
  if (v.unanswered) return `not answered: ${v.answer}`;
  return v.correct ? 'correct' : `wrong: ${v.answer}`;
}

/**
 * The score as the page shows it: right answers over questions answered, "k/n".
 * @param {{right: number, asked: number}} s
 * @returns {string}
 */
export function scoreText(s) {
  return `${s ? s.right : 0}/${s ? s.asked : 0}`;
}

/**
 * The slot the open stop's text is about, while the view is at that stop's step: the view points
 * at it (the engine's cursor is already on the next slot), so that the text describes the slot
 * under the cursor. Null for none: no open stop, another step, a stop withheld by the quiz, or a
 * slot outside the range.
 * @param {Stop[]} stops
 * @param {number} k the open stop, -1 for none
 * @param {number} step the step shown
 * @param {{start: number, end: number}} range
 * @returns {number|null}
 */
export function stopSlot(stops, k, step, range) {
  const s = k >= 0 ? stops[k] : undefined;
  if (!s || /** @type {any} */ (s).withheld || s.step !== step) return null;
  return s.slot >= range.start && s.slot < range.end ? s.slot : null;
}
