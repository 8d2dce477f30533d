// A solo quiz's progress kept across reloads of the same run, in the page's sessionStorage (issue
// 38): the questions answered, their verdicts and the score. The server's quiz starts each
// connection afresh; the page names the questions it has answered (answered= on the socket, see
// ws.js), which the server then does not ask again, and adds the score it kept to the new
// connection's. No DOM besides the storage given: tested in static/jstest/quizstore.test.js.

/**
 * The key of a run's quiz: what identifies the run (not the step, pace or view).
 * @param {{image?: string, path?: string, op?: string, offset?: string, length?: string, keepSize?: boolean, before?: string[], sandbox?: string, mode?: string}} p
 * @returns {string}
 */
export function quizKey(p) {
  return 'zrviz.quiz:' + JSON.stringify([p.sandbox || '', p.image || '', p.path || '', p.op || '', p.offset || '',
    p.length || '', !!p.keepSize, p.before || [], p.mode || '']);
}

/**
 * @typedef {object} Saved
 * @property {number[]} answered stops whose questions have verdicts
 * @property {Array<[number, string]>} verdicts stop → the verdict as shown
 * @property {{right: number, asked: number}} score
 */

/**
 * Reads a run's saved quiz, or null (none, unreadable, or no storage).
 * @param {Storage|null|undefined} store
 * @param {string} key
 * @returns {Saved|null}
 */
export function loadQuiz(store, key) {
  let raw = null;
  try { raw = store ? store.getItem(key) : null; } catch { return null; }
  if (!raw) return null;
  try {
    const v = JSON.parse(raw);
    const ok = (/** @type {any} */ n) => Number.isSafeInteger(n) && n >= 0;
    if (!v || !Array.isArray(v.answered) || !Array.isArray(v.verdicts) || !v.score) return null;
    const answered = v.answered.filter(ok);
    const verdicts = v.verdicts.filter((/** @type {any} */ e) => Array.isArray(e) && ok(e[0]) && typeof e[1] === 'string');
    const right = ok(v.score.right) ? v.score.right : 0;
    const asked = ok(v.score.asked) ? Math.max(v.score.asked, right) : right;
    return { answered, verdicts, score: { right, asked } };
  } catch {
    return null;
  }
}

/**
 * Saves a run's quiz (nothing when there is no storage, or it is full).
 * @param {Storage|null|undefined} store
 * @param {string} key
 * @param {Saved} v
 */
export function saveQuiz(store, key, v) {
  try { if (store) store.setItem(key, JSON.stringify(v)); } catch { /* private mode, full */ }
}

/**
 * The score a page shows: what earlier connections kept (base) and this connection's.
 * @param {{right: number, asked: number}} base
 * @param {{right: number, asked: number}|undefined} conn
 * @returns {{right: number, asked: number}}
 */
export function addScore(base, conn) {
  return { right: base.right + (conn ? conn.right : 0), asked: base.asked + (conn ? conn.asked : 0) };
}
