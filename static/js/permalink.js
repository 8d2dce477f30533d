// Keeps the address bar a permalink of the view: the run, the mode, the step, the pace, the
// colouring, presenter mode and the quiz. permalinkSearch is pure (static/jstest/permalink.test.js).
import { isPace } from './pace.js';
import { setRunQuery } from './links.js';
import { contract } from './contract.js';

/**
 * @typedef {object} PermalinkParams
 * @property {string} path
 * @property {string} [op] the played call (contract().played): absent or "zero", "punch", "truncate"
 * @property {string} offset a truncate's new size
 * @property {string} length
 * @property {string} mode
 * @property {boolean} keepSize
 * @property {string[]} before
 * @property {string} sandbox a sandbox run's id: its URL names the list, not the file
 */

/**
 * Returns the query string of the view's permalink, from the page's own (other keys stay).
 * @param {string} search location.search
 * @param {PermalinkParams} params
 * @param {import('./state.js').RunState} st
 * @param {import('./render.js').ViewOptions} view
 * @param {import('./pace.js').Paces} paces the paces the server takes (its default is left out)
 * @returns {string} without the "?"
 */
export function permalinkSearch(search, params, st, view, paces) {
  const q = new URLSearchParams(search);
  q.set(contract().query.mode, params.mode);
  q.set('step', String(st.step));
  if (!params.sandbox) {
    q.delete('run');
    setRunQuery(q, {
      path: params.path, op: st.info.op || params.op, offset: st.info.offset || String(params.offset), length: st.info.length || String(params.length),
      keepSize: params.keepSize, before: params.before,
    });
  }
  if (isPace(paces, st.pace) && st.pace !== paces.def) q.set('pace', st.pace); else q.delete('pace');
  if (view.colour.by !== 'run') q.set('colour', view.colour.by); else q.delete('colour');
  if (view.present) q.set('present', '1'); else q.delete('present');
  if (view.quiz) q.set('quiz', '1'); else q.delete('quiz');
  return String(q);
}

/**
 * Replaces the address bar's URL with the view's permalink when it differs.
 * @param {PermalinkParams} params
 * @param {import('./state.js').RunState} st
 * @param {import('./render.js').ViewOptions} view
 * @param {import('./pace.js').Paces} paces
 */
export function updateURL(params, st, view, paces) {
  const url = `${location.pathname}?${permalinkSearch(location.search, params, st, view, paces)}`;
  if (url !== location.pathname + location.search) history.replaceState(null, '', url);
}
