// Unit tests of the tour and quiz session (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TourQuiz } from '../js/tourquiz.js';
import { hello } from './player.fixture.js';

const stops = hello().stops;

test('the tour follows the step until the user opens a stop, and again after a move by hand', () => {
  const tq = new TourQuiz();
  tq.hello(null, 'both', stops, 0);
  assert.equal(tq.open, 0);
  assert.equal(tq.follow(stops, 5, false), -1);
  assert.equal(tq.open, 1, 'step 5 is past stop 1 (step 4)');
  assert.equal(tq.openStop(stops, 2, false), 40);
  assert.equal(tq.follow(stops, 5, false), -1);
  assert.equal(tq.open, 2, 'an opened stop stays open');
  tq.unstick();
  tq.follow(stops, 5, false);
  assert.equal(tq.open, 1);
  assert.equal(tq.openStop(stops, 3, false), -1, 'no stop 3');
  assert.equal(tq.openStop(stops, -1, false), -1);
});

test('n and p: next and previous stop from the open one; in a quiz n opens a question where it is asked', () => {
  const tq = new TourQuiz();
  tq.hello(null, 'both', stops, 0);
  assert.equal(tq.nextStop(stops), 1);
  assert.equal(tq.openStop(stops, tq.nextStop(stops), true), 3, 'the question is asked at step 3, before its stop');
  assert.equal(tq.prevStop(stops), 0);
  tq.verdict({ stop: 1, correct: true, answer: 'yes', score: { right: 1, asked: 1 } }, false);
  assert.equal(tq.openStop(stops, 1, true), 4, 'answered: the stop itself');
});

test('a question opens at its ask step and stays open past it until answered; a follower\'s closes at its reveal', () => {
  const tq = new TourQuiz();
  tq.hello(null, 'both', stops, 0);
  assert.equal(tq.follow(stops, 2, true), -1);
  assert.equal(tq.follow(stops, 3, true), 1);
  assert.equal(tq.open, 1);
  assert.equal(tq.follow(stops, 3, false), -1, 'no quiz, no question');
  assert.equal(tq.follow(stops, 4, true), 1, 'held: past its reveal, unanswered, it is still the question');
  assert.equal(tq.follow(stops, 40, true), 1, 'and at the end');
  tq.held = false;
  assert.equal(tq.follow(stops, 4, true), -1, 'a follower mirroring: revealed');
  tq.held = true;
  tq.verdict({ stop: 1, correct: false, answer: 'yes' }, false);
  assert.equal(tq.follow(stops, 3, true), -1, 'answered');
  assert.equal(tq.follow(stops, 40, true), -1, 'answered');
});

test('a quiz holds the view at an unanswered question, however it got past it, until it is answered', () => {
  const tq = new TourQuiz();
  tq.hello(null, 'both', stops, 0);
  assert.equal(tq.hold(stops, 2, true, true), -1, 'before it');
  assert.equal(tq.hold(stops, 3, true, false), -1, 'at it, paused: stay');
  assert.equal(tq.hold(stops, 3, true, true), 3, 'playing onto it: stop there');
  assert.equal(tq.hold(stops, 3, true, false), -1, 'the seek arrived');
  assert.equal(tq.hold(stops, 9, true, true), 3, 'played past it: back');
  assert.deepEqual([tq.open, tq.sticky], [1, true]);
  assert.equal(tq.hold(stops, 10, true, true), -1, 'that seek is on its way: not asked again');
  assert.equal(tq.hold(stops, 3, true, false), -1);
  assert.equal(tq.hold(stops, 40, true, false), 3, 'End, or a permalink at the end, paused: back');
  assert.equal(tq.hold(stops, 3, true, false), -1);
  assert.equal(tq.hold(stops, 4, true, false), 3, 'even at its reveal: it is not answered');
  assert.equal(tq.hold(stops, 40, false, false), -1, 'no quiz: no hold');
  tq.held = false;
  assert.equal(tq.hold(stops, 40, true, false), -1, 'a follower mirroring cannot seek');
  tq.held = true;
  tq.verdict({ stop: 1, correct: true, answer: 'yes' }, false);
  assert.equal(tq.hold(stops, 40, true, false), -1, 'answered: the view goes anywhere');
});

test('in a quiz n stops at every question, the one asked first, even before the next stop', () => {
  // bench64's shape: the prefree question is asked at the first chunk (step 2) but its stop comes
  // after a SIT-update stop (step 5); a yes/no is asked just before its own stop.
  const s = [
    { step: 0, kind: 'start', title: 'start', terms: [] },
    { step: 5, kind: 'sit-update', title: 'sit', terms: [] },
    { step: 2051, kind: 'prefree', title: 'prefree', terms: [], question: { kind: 'choice', text: 'which?', choices: ['4', '59'], ask: 2, reveal: 2051 } },
    { step: 2057, kind: 'flush-discontiguous', title: 'disc', terms: [], question: { kind: 'yesno', text: 'ends?', ask: 2055, reveal: 2057 } },
    { step: 9000, kind: 'end', title: 'end', terms: [] },
  ];
  const tq = new TourQuiz();
  tq.hello(null, 'both', s, 0);
  assert.equal(tq.nextStop(s, 0, false), 1, 'no quiz: the next stop');
  const k = tq.nextStop(s, 0, true);
  assert.equal(k, 2, 'the question asked at step 2 comes before the stop at step 5');
  assert.equal(tq.openStop(s, k, true), 2);
  tq.verdict({ stop: 2, correct: true, answer: '59' }, false);
  assert.equal(tq.nextStop(s, 2, true), 3, 'answered: on to the next stop, which asks');
  assert.equal(tq.openStop(s, 3, true), 2055);
  tq.verdict({ stop: 3, correct: true, answer: 'yes' }, false);
  assert.equal(tq.nextStop(s, 2055, true), 4);
  // Walking n from the start in a quiz opens every question.
  const w = new TourQuiz();
  w.hello(null, 'both', s, 0);
  const asked = new Set();
  let step = 0;
  for (let i = 0; i < 10; i++) {
    const n = w.nextStop(s, step, true);
    if (n < 0) break;
    step = w.openStop(s, n, true);
    const q = w.question(s, step, true);
    if (q >= 0) { asked.add(q); w.verdict({ stop: q, correct: true, answer: 'x' }, false); }
  }
  assert.deepEqual([...asked].sort(), [2, 3]);
});

test('an answer is sent only when the question can take it; a slip leaves a hint and the question open', () => {
  const tq = new TourQuiz();
  tq.hello(null, 'both', stops, 0);
  assert.equal(tq.answer(stops, 0, 'yes', 10), null, 'no question open at step 0');
  assert.equal(tq.hint, '');
  assert.equal(tq.answer(stops, 3, 'maybe', 10), null);
  assert.match(tq.hint, /yes, no/);
  assert.equal(tq.waiting, -1);
  assert.deepEqual(tq.answer(stops, 3, ' Y ', 10), { type: 'answer', stop: 1, answer: 'yes' });
  assert.equal(tq.hint, '');
  assert.equal(tq.waiting, 1);
});

test('a verdict opens its stop, counts, and is said with the right answer; a presenter hears only the answer', () => {
  const tq = new TourQuiz();
  tq.hello(null, 'both', stops, 0);
  tq.waiting = 1;
  tq.verdict({ stop: 1, correct: false, answer: 'no', score: { right: 0, asked: 1 } }, false);
  assert.equal(tq.verdicts.get(1), 'wrong: no');
  assert.equal(tq.speech, 'Wrong: the answer is no.');
  assert.deepEqual(tq.score, { right: 0, asked: 1 });
  assert.deepEqual([tq.open, tq.sticky, tq.waiting], [1, true, -1]);
  assert.ok(tq.answered.has(1));
  tq.verdict({ stop: 1, correct: true, answer: 'no' }, true);
  assert.equal(tq.speech, 'The answer is no.');
});

test('a follower\'s pending answer waits for the presenter without closing the question', () => {
  const tq = new TourQuiz();
  tq.verdict({ stop: 1, pending: true }, false);
  assert.match(tq.verdicts.get(1), /presenter reveals/);
  assert.ok(!tq.answered.has(1));
});

test('a hello for another mode starts the verdicts over; the same mode keeps them and the open stop', () => {
  const tq = new TourQuiz();
  tq.hello(null, 'both', stops, 0);
  tq.openStop(stops, 2, false);
  tq.verdict({ stop: 1, correct: true, answer: 'yes' }, false);
  tq.hello('both', 'both', stops, 5, { right: 1, asked: 1 });
  assert.deepEqual([tq.open, tq.verdicts.size, tq.score.right], [1, 1, 1], 'the verdict opened stop 1 and it stays');
  tq.hello('both', 'batched', stops, 5);
  assert.equal(tq.verdicts.size, 0);
  assert.equal(tq.answered.size, 0);
  assert.equal(tq.sticky, false);
  assert.equal(tq.open, 1, 'follows the step');
});

test("a follower keeps the presenter's open question open over the presenter's frames past it", () => {
  const tq = new TourQuiz();
  tq.held = false;
  tq.hello(null, 'both', stops, 0);
  assert.equal(tq.follow(stops, 40, true), -1, 'no word from the presenter: the question is behind');
  tq.asked = 1;
  assert.equal(tq.follow(stops, 40, true), 1, "the presenter's End, on its way back to the question");
  assert.equal(tq.follow(stops, 2, true), -1, 'before it is asked');
  assert.equal(tq.hold(stops, 40, true, false), -1, 'a follower never seeks');
  tq.verdict({ stop: 1, correct: false, unanswered: true, answer: 'yes', score: { right: 0, asked: 0 } }, false);
  assert.equal(tq.verdicts.get(1), 'not answered: yes');
  assert.equal(tq.speech, 'Not answered: the answer is yes.');
  tq.unstick();
  assert.equal(tq.follow(stops, 40, true), -1, 'revealed: the view goes on');
});
