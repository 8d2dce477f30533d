// Unit tests of the server-held quiz on the page (node --test): the socket's quiz and answered
// questions, a solo quiz's progress kept for a reload, the hold message, and what a follower may do
// while its room's quiz is on (issue 38).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { quizKey, loadQuiz, saveQuiz, addScore } from '../js/quizstore.js';
import { runQuery } from '../js/ws.js';
import { TourQuiz } from '../js/tourquiz.js';
import { RunState } from '../js/state.js';
import { detachRefusal, leftText } from '../js/room.js';
import { hello } from './player.fixture.js';

/** A Storage in memory. */
function memStore() {
  const m = new Map();
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => { m.set(k, String(v)); }, removeItem: (k) => { m.delete(k); } };
}

const run = { image: 'demo', path: '/seed/bench64.bin', op: 'zero', offset: '0', length: '', keepSize: false, before: [], mode: 'both', step: 0, pace: '' };

test('the socket says the quiz is on, and which questions the page has answered', () => {
  assert.equal(runQuery({ ...run }).get('quiz'), null);
  const q = runQuery({ ...run, quiz: true, answered: '0,3' });
  assert.equal(q.get('quiz'), '1');
  assert.equal(q.get('answered'), '0,3');
  // answered means nothing without the quiz
  assert.equal(runQuery({ ...run, answered: '0,3' }).get('answered'), null);
  assert.equal(runQuery({ ...run, sandbox: '1-4', quiz: true }).get('quiz'), '1');
});

test('a run\'s quiz is kept by the run, not the step or the view', () => {
  assert.equal(quizKey({ ...run, step: 5 }), quizKey({ ...run, step: 900, pace: '10' }));
  assert.notEqual(quizKey(run), quizKey({ ...run, mode: 'batched' }));
  assert.notEqual(quizKey(run), quizKey({ ...run, path: '/x' }));
  const s = memStore();
  assert.equal(loadQuiz(s, quizKey(run)), null);
  saveQuiz(s, quizKey(run), { answered: [2, 5], verdicts: [[2, 'correct'], [5, 'wrong: 19']], score: { right: 1, asked: 2 } });
  assert.deepEqual(loadQuiz(s, quizKey(run)), { answered: [2, 5], verdicts: [[2, 'correct'], [5, 'wrong: 19']], score: { right: 1, asked: 2 } });
  // What a page cannot trust is mended or dropped, never thrown.
  s.setItem('bad', '{');
  assert.equal(loadQuiz(s, 'bad'), null);
  s.setItem('odd', JSON.stringify({ answered: [1, -1, 'x', 2.5], verdicts: [[1, 'correct'], ['x', 1]], score: { right: 3, asked: 1 } }));
  assert.deepEqual(loadQuiz(s, 'odd'), { answered: [1], verdicts: [[1, 'correct']], score: { right: 3, asked: 3 } });
  assert.equal(loadQuiz(null, 'k'), null);
  saveQuiz({ setItem() { throw new Error('full'); } }, 'k', { answered: [], verdicts: [], score: { right: 0, asked: 0 } });
});

test('the score shown is the kept one plus the connection\'s: a reload does not reset it', () => {
  assert.deepEqual(addScore({ right: 2, asked: 3 }, { right: 1, asked: 1 }), { right: 3, asked: 4 });
  const tq = new TourQuiz();
  const h = hello();
  tq.base = { right: 2, asked: 3 };
  tq.score = { right: 2, asked: 3 };
  tq.hello(null, 'both', h.stops, 0, { right: 0, asked: 0 }); // a new connection's server counts from 0
  assert.deepEqual(tq.score, { right: 2, asked: 3 });
  const k = h.stops.findIndex((s) => s.question);
  tq.verdict({ stop: k, correct: true, answer: '1', score: { right: 1, asked: 1 } }, false);
  assert.deepEqual(tq.score, { right: 3, asked: 4 });
  // A reconnection keeps what was shown as its base.
  tq.newConnection();
  tq.hello('both', 'both', h.stops, 0, { right: 0, asked: 0 });
  assert.deepEqual(tq.score, { right: 3, asked: 4 });
});

test('the server\'s hold: the questions before it are done here too; a hold message replaces what was withheld', () => {
  const h = hello();
  const q1 = h.stops.find((s) => s.question);
  h.stops = [...h.stops, { ...q1, step: q1.step + 100, question: { ...q1.question, ask: q1.question.ask + 100, reveal: q1.question.reveal + 100 } }];
  const ks = h.stops.map((s, i) => (s.question ? i : -1)).filter((i) => i >= 0);
  assert.equal(ks.length, 2);
  const tq = new TourQuiz();
  tq.hello(null, 'both', h.stops, 0);
  tq.heldBy(h.stops, { stop: ks[1] });
  assert.ok(tq.answered.has(ks[0]) && !tq.answered.has(ks[1]));
  tq.heldBy(h.stops, null); // nothing held, and no quiz on the socket: nothing changes
  assert.equal(tq.answered.size, 1);
  // The socket's quiz on and nothing held: every question is done (the page holds at none).
  tq.heldBy(h.stops, null, true);
  assert.deepEqual([...tq.answered].sort(), ks);

  const st = new RunState();
  const held = { ...h, hold: { stop: ks[0], ask: 3, questions: ks.length }, outcome: {}, stops: h.stops.slice(0, ks[0] + 1), markers: [] };
  st.hello(held);
  assert.deepEqual(st.hold, held.hold);
  assert.equal(st.said.line, '');
  assert.equal(st.stops.length, ks[0] + 1);
  st.applyHold({ type: 'hold', hold: null, stops: h.stops, chunks: h.chunks, markers: h.markers, markersThinned: false, outcome: { returns: 'r', line: 'l' } });
  assert.equal(st.hold, null);
  assert.equal(st.stops.length, h.stops.length);
  assert.equal(st.said.line, 'l');
  assert.equal(st.chunks.length, h.chunks.length);
});

test('a follower cannot detach while its room\'s quiz is on; the presenter hears who left', () => {
  const info = (ui, extra = {}) => ({ code: 'c', role: 'follower', url: '/follow/c', followers: 3, presenter: true, ui, ...extra });
  assert.equal(detachRefusal(null), '');
  assert.equal(detachRefusal(info({ stop: -1, quiz: false, question: -1 })), '');
  assert.match(detachRefusal(info({ stop: 2, quiz: true, question: 2 })), /question is open/);
  assert.match(detachRefusal(info({ stop: -1, quiz: true, question: -1 })), /quiz is on/);
  assert.equal(detachRefusal(info({ stop: 2, quiz: true, question: 2 }, { ended: true })), '');
  assert.equal(leftText(info({ stop: 2, quiz: true, question: 2 })), '');
  assert.match(leftText(info({ stop: 2, quiz: true, question: 2 }, { left: 2 })), /^2 left during this question/);
});
