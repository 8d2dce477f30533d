// What the player's live region says, without flooding a screen reader while playing: a verdict
// (with the right answer), the outcome at the end, play and pause, and the step's narration and
// counters when the view stops somewhere — but not the narration while a quiz question is open.
// speechFor is pure (static/jstest/speech.test.js); speak writes it.
import { int } from './fmt.js';
import { contract } from './contract.js';

const BATCHED = contract().modes.batched;

/**
 * What has been said, so that the next call says only what changed.
 * @typedef {object} Spoken
 * @property {number} step
 * @property {boolean} playing
 * @property {boolean} done
 * @property {number} verdicts the verdicts counted when the last was said
 * @property {string} verdict a verdict just said, which the next step's words repeat first, so the
 *   move to the step that reveals the answer does not cut it off
 */

/** @returns {Spoken} nothing said yet */
export function newSpoken() {
  return { step: -1, playing: false, done: false, verdicts: 0, verdict: '' };
}

/**
 * Returns what to say now ('' for nothing) and records it in spoken.
 * @param {import('./state.js').RunState} st
 * @param {Spoken} spoken
 * @param {Map<number, string>} verdicts
 * @param {string} verdictSaid the last verdict as spoken, with the right answer
 * @param {number} asking the open quiz question's stop, or -1: the step's narration stays unsaid
 * @param {string} outcome the outcome line's text
 * @returns {string}
 */
export function speechFor(st, spoken, verdicts, verdictSaid, asking, outcome) {
  if (!st.ready) return '';
  let say = '';
  if (verdicts.size !== spoken.verdicts) {
    spoken.verdicts = verdicts.size;
    say = `Quiz: ${verdictSaid || [...verdicts.values()].pop()}`;
    spoken.verdict = say;
  } else if (st.done && !spoken.done && asking < 0) {
    // An open question withholds the outcome: it counts the calls.
    say = outcome || 'done';
  } else if (st.playing !== spoken.playing) {
    say = st.playing ? 'Playing.' : `Paused at step ${int(st.step)}.`;
  } else if (!st.playing && st.step !== spoken.step) {
    const ms = st.per[BATCHED] || st.per[st.modes[0]];
    const counts = st.modes.map((m) => `${m} ${int(st.per[m].counters.calls)} calls`).join(', ');
    const q = asking >= 0 ? st.stops[asking].question : null;
    say = q ? `Step ${int(st.step)}. Question: ${q.text}` : `Step ${int(st.step)}. ${ms ? ms.narration : ''} ${counts}.`;
    if (spoken.verdict) say = `${spoken.verdict} ${say}`;
    spoken.verdict = '';
  }
  spoken.done = st.done;
  spoken.playing = st.playing;
  if (!st.playing) spoken.step = st.step;
  return say;
}

/**
 * Says what changed in the page's live region (#sr-live).
 * @param {Document} doc
 * @param {import('./state.js').RunState} st
 * @param {Spoken} spoken
 * @param {Map<number, string>} verdicts
 * @param {string} verdictSaid
 * @param {number} asking
 */
export function speak(doc, st, spoken, verdicts, verdictSaid, asking) {
  if (!st.ready) return;
  const out = /** @type {HTMLElement} */ (doc.getElementById('outcome'));
  const say = speechFor(st, spoken, verdicts, verdictSaid, asking, out.textContent || '');
  const el = /** @type {HTMLElement} */ (doc.getElementById('sr-live'));
  if (say && el.textContent !== say) el.textContent = say;
}
