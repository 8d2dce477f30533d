// The player's "what happens next" panel (issue 22): after the run, a checkpoint and then the
// garbage collector call by call — the ranked candidates with their cost terms, the victim on the
// segment map, where its blocks go — with the player's kind of controls, a tour, glossary terms
// and the quiz's "which section does the cleaner pick next?". The server computes every frame
// (web/next.go); this module asks for the frame the state names and draws it. The state is in
// the URL (nextstate.js), so any path of the controls to a frame shows what a fresh load shows.
import {
  readState, writeState, apply, parseNow, frameURL, cellClass, marks, openQuestion, verdictAt, stopIndex,
  mapText, moveLine, candidateTable, cellTitle,
} from './nextstate.js';
import { loadGlossary, TermMatcher, writeTerms, termButton } from './glossary.js';
import { int } from './fmt.js';

/**
 * Starts the panel on a player page (nothing on a page without one: a sandbox run).
 * @param {Document} doc
 * @returns {{state: () => import('./nextstate.js').NextState} | null}
 */
export function initNext(doc) {
  const panel = /** @type {HTMLElement|null} */ (doc.getElementById('next-panel'));
  const player = /** @type {HTMLElement|null} */ (doc.getElementById('player'));
  if (!panel || !player) return null;
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const ds = player.dataset;
  const run = {
    image: ds.image || '', path: ds.path || '', op: ds.op || '', offset: ds.offset || '0', length: ds.length || '',
    keepSize: ds.keepSize === 'true', before: /** @type {string[]} */ (JSON.parse(ds.before || '[]')),
  };
  const glossary = loadGlossary(doc);
  const matcher = glossary.size ? new TermMatcher([...glossary.values()]) : null;
  const openBtn = $('next-open');
  const seek = /** @type {HTMLInputElement} */ ($('next-seek'));
  const policySel = /** @type {HTMLSelectElement} */ ($('next-policy'));
  const nowInput = /** @type {HTMLInputElement} */ ($('next-now'));
  const quizToggle = /** @type {HTMLInputElement|null} */ (doc.getElementById('quiz-toggle'));
  const ownQuiz = /** @type {HTMLInputElement} */ ($('next-quiz-toggle'));

  let state = readState(new URLSearchParams(location.search));
  /** @type {any} the last frame the server sent */
  let body = null;
  let frames = 0;
  let seq = 0;
  /** Guesses by the frame their question was asked at (this page's session, as the player's). */
  const answers = new Map();
  const quiz = () => !!(quizToggle && quizToggle.checked);

  const writeURL = () => {
    const q = writeState(new URLSearchParams(location.search), state);
    const url = `${location.pathname}${q.toString() ? `?${q}` : ''}${location.hash}`;
    if (url !== location.pathname + location.search + location.hash) history.replaceState(null, '', url);
  };

  /** Asks for the state's frame and draws it when it is still the one wanted. */
  const load = async () => {
    const mine = ++seq;
    panel.dataset.loading = 'true';
    const want = { ...state };
    let res;
    let data;
    try {
      res = await fetch(frameURL(run, want, quiz()));
      data = await res.json();
    } catch (e) {
      if (mine !== seq) return;
      status(`could not load the frame: ${e}`);
      panel.dataset.loading = 'false';
      return;
    }
    if (mine !== seq) return;
    if (!res.ok) {
      status(data.error || `error ${res.status}`);
      body = null;
      draw();
      panel.dataset.loading = 'false';
      return;
    }
    body = data;
    frames = data.frames.length;
    // A frame past the end of this timeline is its last (the server says which it sent).
    if (data.at !== state.at) { state = { ...state, at: data.at }; writeURL(); }
    status('');
    draw();
    panel.dataset.at = String(state.at);
    panel.dataset.key = `${state.policy}:${state.now}:${state.at}:${quiz()}`;
    panel.dataset.loading = 'false';
  };

  const status = (/** @type {string} */ s) => { $('next-status').textContent = s; };

  /** Moves the state and asks for its frame. */
  const act = (/** @type {import('./nextstate.js').NextAction} */ a) => {
    const next = apply(state, a, (a.type === 'policy' || a.type === 'now') ? 0 : frames);
    const timeline = next.policy !== state.policy || next.now !== state.now;
    const changed = timeline || next.at !== state.at || next.open !== state.open;
    state = next;
    if (timeline) frames = 0;
    writeURL();
    showOpen();
    if (changed && state.open) load();
  };

  const showOpen = () => {
    panel.hidden = !state.open;
    // The run's panels stay under the open panel, out of reach (the keyboard's and a screen
    // reader's too) until it closes.
    for (const el of panel.parentElement ? [...panel.parentElement.children] : []) {
      if (el !== panel) /** @type {HTMLElement} */ (el).inert = state.open;
    }
    doc.body.classList.toggle('next-open', state.open);
    if (openBtn) openBtn.setAttribute('aria-expanded', String(state.open));
  };

  const draw = () => {
    policySel.value = state.policy;
    if (doc.activeElement !== nowInput) nowInput.value = String(state.now);
    if (!body) {
      for (const id of ['next-label', 'next-narr', 'next-other', 'next-pos', 'next-counts', 'next-map-aside', 'next-map-desc',
        'next-tour-title', 'next-tour-text', 'next-verdict', 'next-tour-pos']) $(id).textContent = '';
      $('next-cands').replaceChildren();
      $('next-moves').replaceChildren();
      $('next-cells').replaceChildren();
      $('next-terms').replaceChildren();
      $('next-quiz').hidden = true;
      return;
    }
    const f = body.frame;
    seek.max = String(frames - 1);
    seek.value = String(state.at);
    seek.setAttribute('aria-valuetext', `frame ${state.at + 1} of ${frames}: ${f.label}`);
    $('next-pos').textContent = `frame ${state.at + 1} / ${frames} · ${body.now} s`;
    /** @type {HTMLButtonElement} */ ($('next-home')).disabled = state.at === 0;
    /** @type {HTMLButtonElement} */ ($('next-back')).disabled = state.at === 0;
    /** @type {HTMLButtonElement} */ ($('next-step')).disabled = state.at >= frames - 1;
    /** @type {HTMLButtonElement} */ ($('next-end')).disabled = state.at >= frames - 1;
    $('next-label').textContent = f.label;
    writeTerms($('next-narr'), f.narration, matcher);
    candidates(doc, $('next-cands'), f, body);
    other(doc, $('next-other'), f);
    moves(doc, $('next-moves'), f);
    map(doc, f, body.segsPerSec, body.policy);
    $('next-counts').textContent = f.counts.map((/** @type {{class: string, n: number}} */ c) => `${c.class}: ${int(c.n)}`).join(' · ');
    $('next-map-aside').textContent = `${int(body.segments)} segments · ${body.segsPerSec} a section`;
    $('next-map-desc').textContent = mapText(f, body.segsPerSec);
    tour(doc, f);
  };

  const tour = (/** @type {any} */ f) => {
    const stops = body.stops;
    const k = stopIndex(stops, state.at);
    const s = stops[k];
    const q = openQuestion(stops, state.at, quiz(), answers);
    $('next-tour-pos').textContent = k >= 0 ? `stop ${k + 1} of ${stops.length}` : `${stops.length} stops`;
    /** @type {HTMLButtonElement} */ ($('next-tour-prev')).disabled = k <= 0;
    /** @type {HTMLButtonElement} */ ($('next-tour-next')).disabled = k >= stops.length - 1;
    // A question's stop title and text would not answer it, but its terms name the policy only.
    $('next-tour-title').textContent = s ? (q ? 'Predict' : s.title) : '';
    if (s && !q) writeTerms($('next-tour-text'), s.text, matcher); else $('next-tour-text').textContent = '';
    const terms = $('next-terms');
    terms.replaceChildren();
    if (s && s.terms.length) {
      terms.append('terms: ');
      s.terms.forEach((/** @type {string} */ t, /** @type {number} */ i) => {
        if (i) terms.append(' · ');
        const b = termButton(doc, t.replace(/-/g, ' '), t);
        b.tabIndex = 0;
        terms.append(b);
      });
    }
    $('next-quiz').hidden = !q;
    if (!q) {
      $('next-question').textContent = '';
      $('next-choices').replaceChildren();
    } else {
      $('next-question').textContent = q.text;
      $('next-choices').replaceChildren(...q.choices.map((c) => {
        const b = doc.createElement('button');
        b.type = 'button';
        b.dataset.value = c;
        b.dataset.testid = 'next-choice';
        b.textContent = c;
        return b;
      }));
    }
    $('next-verdict').textContent = verdictAt(stops, state.at, f.victim, answers);
  };

  // Controls.
  if (openBtn) openBtn.addEventListener('click', () => { act({ type: 'open' }); panel.focus(); });
  $('next-close').addEventListener('click', () => { act({ type: 'close' }); if (openBtn) openBtn.focus(); });
  $('next-home').addEventListener('click', () => act({ type: 'home' }));
  $('next-back').addEventListener('click', () => act({ type: 'step', n: -1 }));
  $('next-step').addEventListener('click', () => act({ type: 'step', n: 1 }));
  $('next-end').addEventListener('click', () => act({ type: 'end' }));
  seek.addEventListener('change', () => act({ type: 'seek', at: Number(seek.value) }));
  policySel.addEventListener('change', () => act({ type: 'policy', policy: policySel.value }));
  $('next-now-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const n = parseNow(nowInput.value);
    if (n === null) { nowInput.setCustomValidity('whole seconds since mount, e.g. 0 or 3600'); nowInput.reportValidity(); return; }
    nowInput.setCustomValidity('');
    act({ type: 'now', now: n });
  });
  nowInput.addEventListener('input', () => nowInput.setCustomValidity(''));
  const tourGo = (/** @type {number} */ d) => {
    if (!body) return;
    const k = stopIndex(body.stops, state.at) + d;
    if (k >= 0 && k < body.stops.length) act({ type: 'seek', at: body.stops[k].at });
  };
  $('next-tour-prev').addEventListener('click', () => tourGo(-1));
  $('next-tour-next').addEventListener('click', () => tourGo(1));
  $('next-choices').addEventListener('click', (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest('button[data-value]');
    if (!(b instanceof HTMLButtonElement) || !body) return;
    const q = openQuestion(body.stops, state.at, quiz(), answers);
    if (!q) return;
    answers.set(state.at, b.dataset.value || '');
    act({ type: 'seek', at: q.reveal });
  });
  // The panel's quiz switch is the player's (its own is under the panel): one sets the other.
  const setQuiz = (/** @type {boolean} */ on) => {
    if (!quizToggle || quizToggle.checked === on) return;
    quizToggle.checked = on;
    quizToggle.dispatchEvent(new Event('change'));
  };
  ownQuiz.checked = quiz();
  ownQuiz.addEventListener('change', () => setQuiz(ownQuiz.checked));
  if (quizToggle) {
    quizToggle.addEventListener('change', () => { ownQuiz.checked = quizToggle.checked; if (state.open) load(); });
  } else {
    ownQuiz.disabled = true;
  }
  // The panel's keys are the player's: while the focus is in the panel they move the panel, not
  // the run under it.
  panel.addEventListener('keydown', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    // No key pressed in the panel reaches the player's own keys (space would play the run).
    e.stopPropagation();
    if (t.tagName === 'INPUT' && /** @type {HTMLInputElement} */ (t).type !== 'range') return;
    if (t.tagName === 'SELECT' || e.ctrlKey || e.metaKey || e.altKey) return;
    /** @type {import('./nextstate.js').NextAction|null} */
    let a = null;
    switch (e.key) {
      case 'ArrowRight': a = { type: 'step', n: 1 }; break;
      case 'ArrowLeft': a = state.at === 0 ? { type: 'close' } : { type: 'step', n: -1 }; break;
      case 'Home': a = { type: 'home' }; break;
      case 'End': a = { type: 'end' }; break;
      case 'Escape': a = { type: 'close' }; break;
      case 'q': setQuiz(!quiz()); break;
      case 'n': case 'PageDown': tourGo(1); break;
      case 'p': case 'PageUp': tourGo(-1); break;
      case ' ': case 'Enter': return; // a focused button's
      default: return;
    }
    e.preventDefault();
    if (a) act(a);
    if (a && a.type === 'close') {
      // Back to the run: the focus goes where the run is driven from.
      const back = doc.getElementById(e.key === 'ArrowLeft' ? 'btn-step' : 'next-open');
      if (back) back.focus();
    }
  });
  panel.addEventListener('keyup', (e) => e.stopPropagation());
  // The timeline goes on from the run's end: there the player's → (the key and the step button)
  // opens the panel at its first frame, and ← on that frame comes back to the run.
  const atRunEnd = () => {
    const step = doc.getElementById('step-now');
    const total = doc.getElementById('step-total');
    const st = doc.getElementById('run-status');
    return !!(step && total && st) && st.textContent === 'done' && step.textContent === total.textContent;
  };
  const continueIntoPanel = (/** @type {Event} */ e) => {
    if (state.open || !atRunEnd()) return false;
    e.preventDefault();
    e.stopPropagation();
    act({ type: 'open' });
    act({ type: 'home' });
    panel.focus();
    return true;
  };
  doc.addEventListener('keydown', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (e.key !== 'ArrowRight' || e.shiftKey || e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA')) return;
    continueIntoPanel(e);
  }, true);
  doc.addEventListener('click', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (t && t.closest && t.closest('#btn-step')) continueIntoPanel(e);
  }, true);

  showOpen();
  if (state.open) load(); else draw();
  return { state: () => ({ ...state }) };
}

/**
 * The candidates table: rank and cost terms, the victim's row marked from the victim frame on;
 * while a question is open, the sections in segment order with their valid blocks and mtimes only.
 * @param {Document} doc
 * @param {HTMLElement} el
 * @param {any} f
 * @param {any} body
 */
function candidates(doc, el, f, body) {
  if (!f.candidates.length) { el.replaceChildren(); return; }
  const t = doc.createElement('table');
  t.className = 'kv next-cands';
  const cap = doc.createElement('caption');
  cap.textContent = f.veiled
    ? `the ${f.candidates.length} sections the search looked at, in segment order (the ranking shows after your answer)`
    : `${f.candidates.length} cheapest of ${f.searched} searched, ${body.policy} cost: lowest first`;
  t.append(cap);
  const tab = candidateTable(!!f.veiled, body.policy);
  const cols = tab.cols;
  const head = doc.createElement('tr');
  cols.forEach((c, i) => {
    const th = doc.createElement('th');
    th.scope = 'col';
    th.textContent = c;
    if (i >= (f.veiled ? 1 : 2)) th.className = 'num';
    head.append(th);
  });
  t.append(head);
  for (const c of f.candidates) {
    const tr = doc.createElement('tr');
    tr.dataset.testid = 'next-cand';
    const chosen = f.victim !== null && c.segno === f.victim;
    if (chosen) tr.className = 'chosen';
    const cells = tab.cells(c, chosen);
    cells.forEach((v, i) => {
      const td = doc.createElement('td');
      td.textContent = v;
      // Numbers line up on the right; the rank and the section read from the left.
      if (i >= (f.veiled ? 1 : 2)) td.className = 'num';
      tr.append(td);
    });
    t.append(tr);
  }
  el.replaceChildren(t);
}

/**
 * What the other policy would pick on the same state (search frames).
 * @param {Document} doc
 * @param {HTMLElement} el
 * @param {any} f
 */
function other(doc, el, f) {
  const o = f.other;
  if (!o) { el.textContent = ''; return; }
  const top = o.candidates.slice(0, 3).map((/** @type {any} */ c) => `${c.segno} (cost ${c.cost})`).join(', ');
  el.replaceChildren(
    termButton(doc, o.policy, o.policy),
    o.victim === null
      ? ` (${o.call}) would find nothing to take here.`
      : ` (${o.call}) would pick segment ${o.victim} on this state${top ? `; its cheapest: ${top}` : ''}.`,
  );
}

/**
 * The moves of a move or sync frame, one line per source and destination.
 * @param {Document} doc
 * @param {HTMLElement} el
 * @param {any} f
 */
function moves(doc, el, f) {
  el.replaceChildren(...f.moves.map((/** @type {any} */ m) => {
    const li = doc.createElement('li');
    li.dataset.testid = 'next-move';
    li.textContent = moveLine(m);
    return li;
  }));
}

/**
 * Draws the segment map: one cell per segment, made once per segment count, its class set each
 * frame.
 * @param {Document} doc
 * @param {any} f
 * @param {number} segsPerSec
 * @param {string} policy "greedy" or "cost-benefit"
 */
function map(doc, f, segsPerSec, policy) {
  const box = /** @type {HTMLElement} */ (doc.getElementById('next-cells'));
  const n = f.classes.length;
  if (box.children.length !== n) {
    const cells = [];
    for (let i = 0; i < n; i++) {
      const c = doc.createElement('span');
      c.dataset.segno = String(i);
      cells.push(c);
    }
    box.replaceChildren(...cells);
    // A small volume's map is drawn large enough to read from the back of a room.
    box.classList.toggle('big', n <= 256);
  }
  const m = marks(f, segsPerSec);
  const cands = new Map((f.candidates || []).map((/** @type {any} */ c) => [c.segno, c]));
  for (let i = 0; i < n; i++) {
    const c = /** @type {HTMLElement} */ (box.children[i]);
    const letter = f.classes[i];
    const cls = cellClass(letter, { victim: m.victim.has(i), dest: m.dest.has(i), marked: m.marked.has(i) });
    if (c.className !== cls) c.className = cls;
    let title = cellTitle(i, letter, f.valid[i], cands.get(i), policy);
    if (m.victim.has(i)) title += ' · the victim';
    if (m.dest.has(i)) title += ' · moved blocks went here';
    if (m.marked.has(i)) title += ' · marked by a background call';
    if (c.title !== title) c.title = title;
    // The victim and the destinations carry their number, so "segment 38" can be found.
    const label = box.classList.contains('big') && (m.victim.has(i) || m.dest.has(i)) ? String(i) : '';
    if (c.textContent !== label) c.textContent = label;
  }
}
