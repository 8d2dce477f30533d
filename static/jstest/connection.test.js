// Unit tests of the player's socket handlers (node --test): what each server message does to the
// model and the quiz, and what the page asks for in return.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunState } from '../js/state.js';
import { TourQuiz } from '../js/tourquiz.js';
import { playerHandlers } from '../js/connection.js';
import { hello, frame } from './player.fixture.js';

/** Handlers over a fresh model, with everything they do recorded. */
function setup(o = {}) {
  const st = new RunState();
  const tq = new TourQuiz();
  const view = { quiz: !!o.quiz, version: 0, colour: { by: 'run', geometry: null, segTypes: null, runs: null } };
  const params = { mode: 'both' };
  const log = { sent: [], shown: 0, redraws: 0, changed: 0, notices: [], status: [], hooks: [] };
  let runEnd = !!o.runEnd;
  const h = playerHandlers({
    st, tq, view, params,
    send: (m) => log.sent.push(m),
    takeRunEnd: () => { const e = runEnd; runEnd = false; return e; },
    presenter: () => !!o.presenter,
    shown: () => { log.shown++; },
    redraw: () => { log.redraws++; },
    changed: () => { log.changed++; },
    notify: (t, fatal) => log.notices.push([t, fatal]),
    status: (s) => log.status.push(s),
    hooks: {
      onHello: () => log.hooks.push('hello'),
      onFrame: () => log.hooks.push('frame'),
      onMessage: (m) => log.hooks.push(m.type),
    },
  });
  return { st, tq, view, params, log, h };
}

test('a hello fills the model and the view, asks for the rest of the initial map, and the end once', () => {
  const { st, view, params, log, h } = setup({ runEnd: true });
  h.hello(hello({ run: { ...hello().run, mode: 'batched', modes: ['batched'] }, initial: { from: 0, next: 4, extents: [] } }));
  assert.ok(st.ready);
  assert.equal(params.mode, 'batched');
  assert.equal(view.version, 1);
  assert.equal(view.colour.geometry.blocksPerSeg, 512);
  assert.deepEqual(log.sent, [{ type: 'end' }, { type: 'initial', from: 4 }]);
  assert.deepEqual([log.shown, log.hooks[0]], [1, 'hello']);
  h.hello(hello({ initial: { from: 0, next: 4, extents: [] } }));
  assert.deepEqual(log.sent.slice(2), [{ type: 'initial', from: 4 }], 'no second end');
});

test('initial pages are asked for until the map is complete, then the physical runs colour the view', () => {
  const { st, view, log, h } = setup();
  h.hello(hello({ initial: { from: 0, next: 4, extents: [{ index: 0, count: 4, state: 'addr', addr: 4608 }] } }));
  h.other({ type: 'initial', from: 4, next: 7, extents: [] });
  assert.deepEqual(log.sent.at(-1), { type: 'initial', from: 7 });
  const v = view.version;
  h.other({ type: 'initial', from: 7, next: 10, extents: [] });
  assert.ok(st.initialComplete);
  assert.equal(log.sent.length, 2, 'nothing more asked');
  assert.ok(view.colour.runs && view.colour.runs === st.runs);
  assert.equal(view.version, v + 1);
});

test('a verdict goes to the quiz and on to the page; other messages go to the page', () => {
  const { tq, log, h } = setup({ presenter: true });
  h.hello(hello());
  h.other({ type: 'quiz', stop: 1, correct: true, answer: 'yes', score: { right: 1, asked: 1 } });
  assert.equal(tq.verdicts.get(1), 'correct');
  assert.equal(tq.speech, 'The answer is yes.', 'a presenter hears the answer, not a verdict');
  assert.equal(log.changed, 1);
  h.other({ type: 'answers', counts: {} });
  assert.deepEqual(log.hooks.slice(1), ['quiz', 'answers']);
});

test('in a quiz, a frame or a hello past an unanswered question seeks back to it, playing or not', () => {
  const { st, tq, log, h } = setup({ quiz: true });
  h.hello(hello());
  h.frame({ ...frame(2), playing: true });
  assert.equal(log.sent.length, 0);
  h.frame({ ...frame(6), playing: true });
  assert.equal(st.step, 6);
  assert.deepEqual(log.sent, [{ type: 'seek', step: 3 }]);
  assert.equal(tq.open, 1);
  // Paused (End, the slider, a seek) too; a hello at the end (a permalink) too.
  const p = setup({ quiz: true });
  p.h.hello(hello());
  p.h.frame(frame(6));
  assert.deepEqual(p.log.sent, [{ type: 'seek', step: 3 }]);
  const e = setup({ quiz: true });
  e.h.hello(hello({ step: 40 }));
  assert.deepEqual(e.log.sent.filter((m) => m.type === 'seek'), [{ type: 'seek', step: 3 }]);
  // Out of quiz mode, or a follower mirroring its presenter: no hold.
  const nq = setup();
  nq.h.hello(hello());
  nq.h.frame({ ...frame(6), playing: true });
  assert.equal(nq.log.sent.length, 0);
  const f = setup({ quiz: true });
  f.tq.held = false;
  f.h.hello(hello());
  f.h.frame(frame(6));
  assert.equal(f.log.sent.length, 0);
  assert.deepEqual(log.hooks.slice(-1), ['frame']);
});

test('errors are noticed (fatal or not) and passed on; the status is kept', () => {
  const { log, h } = setup();
  h.error({ error: 'slow down', fatal: false });
  h.error({ fatal: true });
  assert.deepEqual(log.notices, [['slow down', false], ['error', true]]);
  assert.deepEqual(log.hooks, ['error', 'error']);
  h.status('open');
  assert.deepEqual(log.status, ['open']);
});
