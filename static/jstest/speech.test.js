// Unit tests of what the player's live region says (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { speechFor, newSpoken, speak } from '../js/speech.js';
import { model, frame } from './player.fixture.js';
import { FakeDocument } from './fakedom.js';

test('a stop says the step, its narration and the calls; playing says so once, and not each step', () => {
  const st = model();
  const sp = newSpoken();
  st.frame(frame(2, { calls: 2, narration: 'slot 1 is released' }), 0);
  assert.equal(speechFor(st, sp, new Map(), '', -1, ''), 'Step 2. slot 1 is released per-block 2 calls, batched 1 calls.');
  assert.equal(speechFor(st, sp, new Map(), '', -1, ''), '', 'nothing new');
  st.frame(frame(3, { playing: true }), 0);
  assert.equal(speechFor(st, sp, new Map(), '', -1, ''), 'Playing.');
  st.frame(frame(9, { playing: true }), 0);
  assert.equal(speechFor(st, sp, new Map(), '', -1, ''), '', 'quiet while playing');
  st.frame(frame(9), 0);
  assert.equal(speechFor(st, sp, new Map(), '', -1, ''), 'Paused at step 9.');
});

test('an open question is said instead of the narration that would answer it', () => {
  const st = model();
  const sp = newSpoken();
  st.frame(frame(3, { narration: 'f2fs_invalidate_blocks(4608, 3) (flush: the next address is not contiguous)' }), 0);
  const say = speechFor(st, sp, new Map(), '', 1, '');
  assert.equal(say, 'Step 3. Question: Does slot 3 end the pending run?');
  assert.doesNotMatch(say, /flush|f2fs_invalidate_blocks/);
});

test('a verdict is said at once with the right answer, and again before the next step\'s words', () => {
  const st = model();
  const sp = newSpoken();
  st.frame(frame(3), 0);
  speechFor(st, sp, new Map(), '', 1, '');
  const v = new Map([[1, 'wrong: no']]);
  assert.equal(speechFor(st, sp, v, 'Wrong: the answer is no.', 1, ''), 'Quiz: Wrong: the answer is no.');
  st.frame(frame(4, { narration: 'flushed' }), 0);
  assert.match(speechFor(st, sp, v, 'Wrong: the answer is no.', -1, ''), /^Quiz: Wrong: the answer is no\. Step 4\. flushed/);
  st.frame(frame(5), 0);
  assert.doesNotMatch(speechFor(st, sp, v, '', -1, ''), /Quiz/, 'said once');
});

test('the end says the outcome, once', () => {
  const st = model();
  const sp = newSpoken();
  st.frame(frame(40, { calls: 8, done: true }), 0);
  assert.equal(speechFor(st, sp, new Map(), '', -1, 'f2fs_zero_range returns 0'), 'f2fs_zero_range returns 0');
  assert.notEqual(speechFor(st, sp, new Map(), '', -1, 'f2fs_zero_range returns 0'), 'f2fs_zero_range returns 0');
});

test('speak writes the live region, and nothing before the hello', () => {
  const doc = new FakeDocument();
  const st = model();
  st.frame(frame(40, { done: true }), 0);
  doc.getElementById('outcome').textContent = 'it returns 0';
  speak(doc, st, newSpoken(), new Map(), '', -1);
  assert.equal(doc.text('sr-live'), 'it returns 0');
  const fresh = new FakeDocument();
  speak(fresh, { ready: false }, newSpoken(), new Map(), '', -1);
  assert.equal(fresh.text('sr-live'), '');
});
