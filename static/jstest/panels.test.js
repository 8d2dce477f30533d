// Unit tests of the player's panels on a fake document (node --test): the counters, the veil over
// an open question, the tour and quiz panel, the call lanes.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { updateDOM, helloDOM, tourDOM, lane, outcomeDOM } from '../js/panels.js';
import { TourQuiz } from '../js/tourquiz.js';
import { VEILED_NARRATION } from '../js/quiz.js';
import { FakeDocument } from './fakedom.js';
import { model, frame, hello } from './player.fixture.js';

/** The panels' inputs for a model, in or out of a quiz. */
function ui(doc, st, o = {}) {
  const tq = o.tq || new TourQuiz();
  const view = { quiz: !!o.quiz, present: false, colour: { by: 'run' } };
  const q = tq.follow(st.stops, st.step, view.quiz);
  return {
    status: 'open', notice: o.notice || '', dragging: false, seek: doc.getElementById('seek'), paceSel: doc.getElementById('pace'),
    matcher: null, view, tq, q, slots: { pin: null }, sit: { shown: [1, 1] }, driving: o.driving ?? true, callLog: null,
  };
}

test('the counters show the step, the calls and the slots in use, grouped', () => {
  const doc = new FakeDocument();
  const st = model();
  st.frame(frame(3, { calls: 3, narration: 'slot 2 is released' }), 0);
  updateDOM(doc, st, ui(doc, st));
  assert.equal(doc.text('step-now'), '3');
  assert.equal(doc.text('run-status'), 'paused');
  assert.equal(doc.text('c-pb-calls'), '3');
  assert.equal(doc.text('c-bt-calls'), '1');
  assert.equal(doc.getElementById('stat-calls-per-block').dataset.count, '3');
  assert.equal(doc.text('narr-bt-text'), 'slot 2 is released');
  assert.equal(doc.text('slots-aside'), '10 slots in 1 chunk · 1 physical run');
  assert.equal(doc.text('markers-desc'), '3 tour stops, 1 dnode chunk, 2 call markers');
  assert.equal(doc.getElementById('seek').getAttribute('aria-valuetext'), 'step 3 of 40');
  assert.ok(!doc.body.classList.contains('veiled'));
  assert.equal(doc.getElementById('counters-panel').dataset.final, 'false');
});

test('an open question veils the narration and the SIT line, and the tour title names only the question', () => {
  const doc = new FakeDocument();
  const st = model();
  st.frame(frame(3, { narration: 'f2fs_invalidate_blocks(4608, 3) (flush: the next address is not contiguous)' }), 0);
  updateDOM(doc, st, ui(doc, st, { quiz: true }));
  assert.ok(doc.body.classList.contains('veiled'));
  assert.equal(doc.text('markers-desc'), '3 tour stops, 1 dnode chunk', 'a quiz says nothing of where the calls fall');
  assert.equal(doc.text('narr-pb-text'), VEILED_NARRATION);
  assert.equal(doc.text('narr-bt-text'), VEILED_NARRATION);
  assert.equal(doc.text('sit-desc'), '');
  assert.equal(doc.text('tour-title'), 'Predict: question 1 of 1');
  assert.equal(doc.text('tour-text'), '');
  assert.equal(doc.text('quiz-question'), 'Does slot 3 end the pending run?');
  const page = [...doc.byId.values()].map((e) => e.textContent).join(' | ');
  assert.doesNotMatch(page, /ends the run|flush|not contiguous/, 'nothing on the page answers the question');
  const choices = doc.getElementById('quiz-choices').all().filter((e) => e.tagName === 'BUTTON');
  assert.deepEqual(choices.map((b) => [b.textContent, b.disabled]), [['yes', false], ['no', false]]);
  assert.ok(doc.getElementById('quiz-answer').hidden, 'a choice is pressed, not typed');
});

test('after a verdict the stop shows its title, the verdict and the score; the choices are spent', () => {
  const doc = new FakeDocument();
  const st = model();
  st.frame(frame(3), 0);
  const tq = new TourQuiz();
  tq.verdict({ stop: 1, correct: false, answer: 'yes', score: { right: 0, asked: 1 } }, false);
  updateDOM(doc, st, ui(doc, st, { quiz: true, tq }));
  assert.ok(!doc.body.classList.contains('veiled'));
  assert.equal(doc.text('tour-title'), 'Slot 3 ends the run');
  assert.equal(doc.text('quiz-result'), 'wrong: yes');
  assert.equal(doc.getElementById('quiz-result').className, 'result bad');
  assert.equal(doc.text('quiz-score'), '0/1');
  const choices = doc.getElementById('quiz-choices').all();
  assert.ok(choices.every((b) => b.disabled));
});

test('a refused answer shows its hint while the question is open', () => {
  const doc = new FakeDocument();
  const st = model();
  st.frame(frame(3), 0);
  const tq = new TourQuiz();
  tq.answer(st.stops, 3, 'maybe', st.n);
  updateDOM(doc, st, ui(doc, st, { quiz: true, tq }));
  assert.match(doc.text('quiz-hint'), /choose one of: yes, no/);
});

test('the tour panel says where the tour is, and a follower cannot move it', () => {
  const doc = new FakeDocument();
  const st = model();
  const u = ui(doc, st, { driving: false });
  tourDOM(doc, st, u);
  assert.equal(doc.text('tour-pos'), 'stop 1 of 3');
  assert.equal(doc.text('tour-title'), 'Start');
  assert.ok(doc.getElementById('tour-next').disabled);
  assert.ok(doc.getElementById('tour-prev').disabled);
});

test('a notice replaces the narration; the end shows the outcome and the final counters', () => {
  const doc = new FakeDocument();
  const st = model();
  st.frame(frame(40, { calls: 8, done: true }), 0);
  updateDOM(doc, st, ui(doc, st, { notice: 'too many runs' }));
  assert.equal(doc.text('narr-bt-text'), '⚠ too many runs');
  assert.equal(doc.text('run-status'), 'done');
  assert.equal(doc.text('outcome'), hello().outcome.line);
  assert.equal(doc.getElementById('outcome').hidden, false);
  assert.equal(doc.text('counters-heading'), 'at the end: before and after');
  const big = model();
  big.frame(frame(40, { calls: 16384, done: true }), 0);
  updateDOM(doc, big, ui(doc, big));
  assert.equal(doc.text('stat-calls-per-block'), '16,384', 'the headline groups its digits');
  assert.equal(doc.getElementById('stat-calls-per-block').dataset.count, '16384');
});

test('helloDOM names the modes and the tour size; a lane lists the latest calls, newest first', () => {
  const doc = new FakeDocument();
  const st = model();
  helloDOM(doc, st);
  assert.equal(doc.text('slots-mode'), 'both modes: the slots end alike');
  assert.equal(doc.text('tour-count'), '3');
  assert.ok(doc.getElementById('file-compressed').hidden);
  const ms = { counters: { calls: 1200 }, pending: { start: 34304, len: 512 }, calls: [[100, 1, 'a'], [200, 2, 'b'], [300, 3, 'c'], [400, 4, 'flush']] };
  const el = lane(doc, 'batched', ms, 2, null);
  assert.match(el.textContent, /^batched · 1,200 calls · pending run \(blkstart 34304, blklen 512\)/);
  const items = el.all().filter((e) => e.tagName === 'LI').map((e) => e.textContent);
  assert.equal(items.length, 3, 'two lanes: three calls each');
  assert.match(items[0], /^f2fs_invalidate_blocks\(400, 4\)/);
});

test('the outcome line shows the server\'s words: hidden while it has none, its line before the end, its line at the end', () => {
  const doc = new FakeDocument();
  const st = model({ outcome: { returns: 'f2fs_fallocate returns -EOPNOTSUPP', line: 'the words at the end', ahead: 'the words before it' } });
  outcomeDOM(doc, st, null);
  assert.equal(doc.text('outcome'), 'the words before it');
  assert.equal(doc.getElementById('outcome').hidden, false);
  st.frame(frame(40, { done: true }), 0);
  outcomeDOM(doc, st, null);
  assert.equal(doc.text('outcome'), 'the words at the end');
  const plain = model();
  outcomeDOM(doc, plain, null);
  assert.equal(doc.getElementById('outcome').hidden, true, 'no line while a plain run is under way');
});
