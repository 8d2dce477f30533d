// Unit tests of the tour and quiz logic (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  stopStep, stopAt, nextStop, prevStop, tourPosition, openQuestion, verdictText, scoreText,
} from '../js/tour.js';

// A tour shaped like bench64's: start, a chunk question asked at its stop and revealed later, two
// stops at one step (a flush and its SIT update), a yes/no asked one step before its stop, the end.
const stops = [
  { step: 0, kind: 'start', slot: 0, title: 'start', text: '', terms: [] },
  { step: 1750, kind: 'sit-update', slot: 873, title: 'sit', text: '', terms: [] },
  { step: 1750, kind: 'flush-end-of-chunk', slot: 873, title: 'eoc', text: '', terms: [] },
  { step: 3503, kind: 'chunk', slot: 873, title: 'chunk', text: '', terms: [],
    question: { kind: 'number', text: 'How many?', ask: 3503, reveal: 7582 } },
  { step: 9000, kind: 'flush-discontiguous', slot: 2909, title: 'disc', text: '', terms: [],
    question: { kind: 'yesno', text: 'Ends the run?', ask: 8999, reveal: 9000 } },
  { step: 65675, kind: 'end', slot: 16384, title: 'end', text: '', terms: [] },
];

test('stopAt finds the last stop at or before a step, the first of a shared step', () => {
  const cases = [[-1, -1], [0, 0], [1, 0], [1749, 0], [1750, 1], [1751, 1], [3503, 3], [8999, 3], [9000, 4], [70000, 5]];
  for (const [step, want] of cases) assert.equal(stopAt(stops, step), want, `step ${step}`);
  assert.equal(stopAt([], 10), -1);
  assert.equal(stopAt(stops.slice(1), 0), -1, 'before the first stop');
});

test('n and p walk the stops one by one, also through stops sharing a step', () => {
  const seen = [];
  for (let k = -1; k !== -1 || seen.length === 0;) {
    k = nextStop(stops, k);
    if (k < 0) break;
    seen.push(k);
  }
  assert.deepEqual(seen, [0, 1, 2, 3, 4, 5]);
  assert.equal(nextStop(stops, 5), -1);
  assert.equal(nextStop([], -1), -1);
  assert.equal(prevStop(stops, 3), 2);
  assert.equal(prevStop(stops, 0), -1);
  assert.equal(prevStop(stops, -1), -1);
});

test('in a quiz a stop with a question is visited where it is asked', () => {
  assert.equal(stopStep(stops[4], false), 9000);
  assert.equal(stopStep(stops[4], true), 8999);
  assert.equal(stopStep(stops[1], true), 1750);
});

test('tour position reads "stop k of n"', () => {
  assert.equal(tourPosition(-1, 6), 'before stop 1 of 6');
  assert.equal(tourPosition(0, 6), 'stop 1 of 6');
  assert.equal(tourPosition(2, 3, true), 'stop 3 of 3+', 'a quiz\'s hold withholds the later stops');
  assert.equal(tourPosition(5, 6), 'stop 6 of 6');
  assert.equal(tourPosition(-1, 0), 'no stops');
});

test('the open question is the one asked and not yet revealed nor answered', () => {
  const none = new Set();
  assert.equal(openQuestion(stops, 3502, none), -1);
  assert.equal(openQuestion(stops, 3503, none), 3);
  assert.equal(openQuestion(stops, 7581, none), 3);
  assert.equal(openQuestion(stops, 7582, none), -1, 'revealed');
  assert.equal(openQuestion(stops, 3600, new Set([3])), -1, 'answered');
  assert.equal(openQuestion(stops, 8999, none), 4);
  assert.equal(openQuestion(stops, 9000, none), -1);
  // A question asked and revealed at one step is open at that step.
  const same = [{ step: 5, kind: 'x', slot: 0, title: '', text: '', terms: [], question: { kind: 'yesno', text: '', ask: 5, reveal: 5 } }];
  assert.equal(openQuestion(same, 5, none), 0);
});

test('a held quiz keeps an unanswered question open past its reveal', () => {
  const none = new Set();
  assert.equal(openQuestion(stops, 9500, none, true), 3, 'the first unanswered question asked before the step');
  assert.equal(openQuestion(stops, 9500, new Set([3]), true), 4);
  assert.equal(openQuestion(stops, 3502, none, true), -1);
});

test('verdicts and scores read as the issue words them', () => {
  assert.equal(verdictText({ correct: true, answer: '19' }), 'correct');
  assert.equal(verdictText({ correct: false, unanswered: true, answer: '19' }), 'not answered: 19');
  assert.equal(verdictText({ correct: false, answer: '19' }), 'wrong: 19');
  assert.equal(scoreText({ right: 2, asked: 3 }), '2/3');
  assert.equal(scoreText(undefined), '0/0');
});

test('stopSlot: at a stop\'s own step the view points at the slot its text is about', async () => {
  const { stopSlot } = await import('../js/tour.js');
  const range = { start: 100, end: 200 };
  const stops = [
    { step: 5, kind: 'start', slot: 100, title: 't', text: 'x', terms: [] },
    { step: 9, kind: 'new-in-run', slot: 150, title: 't', text: 'x', terms: [] },
    { step: 12, kind: 'end', slot: 999, title: 't', text: 'x', terms: [] },
  ];
  assert.equal(stopSlot(stops, 1, 9, range), 150);
  assert.equal(stopSlot(stops, 1, 10, range), null, 'a step past the stop: the engine\'s cursor');
  assert.equal(stopSlot(stops, -1, 9, range), null);
  assert.equal(stopSlot(stops, 2, 12, range), null, 'a slot outside the range');
  assert.equal(stopSlot([{ ...stops[1], withheld: true }], 0, 9, range), null, 'a stop the quiz withholds');
});
