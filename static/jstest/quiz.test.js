// Unit tests of the quiz's veil and answer checks (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { VEILED_NARRATION, veiledTitle, questionPlace, choicesOf, checkAnswer, verdictSpeech } from '../js/quiz.js';

const num = { kind: 'number', text: 'How many calls?', ask: 1, reveal: 9 };
const yesno = { kind: 'yesno', text: 'Does slot 512 end the run?', ask: 1, reveal: 2 };
const choice = { kind: 'choice', text: 'Which segment becomes prefree next?', choices: ['4', '5', '59', '6'], ask: 1, reveal: 3 };

test('the veiled title names the question, not what happens', () => {
  assert.equal(veiledTitle(1, 5), 'Predict: question 2 of 5');
  assert.equal(veiledTitle(0, 0), 'Predict');
  assert.doesNotMatch(VEILED_NARRATION, /f2fs_invalidate_blocks|segment|prefree|flush/);
});

test('questionPlace counts only the stops with a question', () => {
  const stops = [{}, { question: num }, {}, { question: yesno }, { question: choice }];
  assert.deepEqual(questionPlace(stops, 3), { nth: 1, count: 3 });
  assert.deepEqual(questionPlace(stops, 1), { nth: 0, count: 3 });
  assert.deepEqual(questionPlace(stops, 0), { nth: -1, count: 3 });
});

test('choicesOf: yes/no, the choices, nothing for a number', () => {
  assert.deepEqual(choicesOf(yesno), ['yes', 'no']);
  assert.deepEqual(choicesOf(choice), ['4', '5', '59', '6']);
  assert.deepEqual(choicesOf(num), []);
  assert.deepEqual(choicesOf({ kind: 'choice' }), []);
});

test('a number counts only when it is a whole number in range', () => {
  assert.deepEqual(checkAnswer(num, ' 16,384 ', 16384), { ok: true, value: '16384' });
  assert.deepEqual(checkAnswer(num, '1_000', 16384), { ok: true, value: '1000' });
  assert.deepEqual(checkAnswer(num, '0', 10), { ok: true, value: '0' });
  for (const bad of ['abc', '', '  ', '-1', '1.5', '0x10', '12a']) {
    const r = checkAnswer(num, bad, 16384);
    assert.equal(r.ok, false, bad);
    assert.match(/** @type {any} */ (r).hint, /whole number from 0 to 16,384/, bad);
  }
  const over = checkAnswer(num, '16385', 16384);
  assert.equal(over.ok, false);
  assert.match(/** @type {any} */ (over).hint, /16,385 is more than this range has slots/);
  assert.equal(checkAnswer(num, '99999999999999999999', 10).ok, false);
});

test('a yes/no or a choice counts only when it is one of the choices', () => {
  assert.deepEqual(checkAnswer(yesno, 'Yes', 0), { ok: true, value: 'yes' });
  assert.deepEqual(checkAnswer(yesno, 'n', 0), { ok: true, value: 'no' });
  assert.equal(checkAnswer(yesno, 'maybe', 0).ok, false);
  assert.deepEqual(checkAnswer(choice, '59', 0), { ok: true, value: '59' });
  const r = checkAnswer(choice, '60', 0);
  assert.equal(r.ok, false);
  assert.equal(/** @type {any} */ (r).hint, 'choose one of: 4, 5, 59, 6');
  assert.equal(checkAnswer(choice, 'abc', 0).ok, false);
});

test('the spoken verdict carries the right answer either way', () => {
  assert.equal(verdictSpeech({ correct: true, answer: '59' }), 'Correct: the answer is 59.');
  assert.equal(verdictSpeech({ correct: false, answer: 'no' }), 'Wrong: the answer is no.');
  assert.equal(verdictSpeech({ correct: false, answer: '59' }, true), 'The answer is 59.');
});

test('the page takes and refuses answers as the server does (testdata/answers.json, from web\'s TestAnswerVectors)', () => {
  const { vectors } = JSON.parse(readFileSync(new URL('./testdata/answers.json', import.meta.url), 'utf8'));
  assert.ok(vectors.length > 100);
  let taken = 0;
  for (const v of vectors) {
    const r = checkAnswer(v.question, v.answer, v.max);
    const what = `${v.question.kind} ${JSON.stringify(v.question.choices || [])} ${JSON.stringify(v.answer)}`;
    if (v.value === null) {
      assert.equal(r.ok, false, `${what}: the server refuses it`);
    } else {
      assert.deepEqual(r, { ok: true, value: v.value }, `${what}: the server counts it as ${v.value}`);
      taken++;
    }
  }
  assert.ok(taken > 20 && taken < vectors.length, `${taken} of ${vectors.length} taken`);
});
