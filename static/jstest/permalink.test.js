// Unit tests of the player's permalink (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { permalinkSearch } from '../js/permalink.js';
import { model, frame } from './player.fixture.js';
import { servedPaces } from './paces.fixture.js';

const params = { path: '/seed/bench64.bin', offset: '0', length: '', mode: 'both', keepSize: false, before: ['write 0 4096'], sandbox: '' };
const paces = servedPaces();
const view = (o = {}) => ({ colour: { by: 'run' }, present: false, quiz: false, ...o });

test('the permalink names the run, the mode and the step, and drops the defaults', () => {
  const st = model();
  st.frame(frame(7), 0);
  const q = new URLSearchParams(permalinkSearch('?run=abc&before=x&pace=30&colour=run', params, st, view(), paces));
  assert.equal(q.get('step'), '7');
  assert.equal(q.get('mode'), 'both');
  assert.equal(q.get('path'), '/seed/bench64.bin');
  assert.equal(q.get('offset'), '0');
  assert.equal(q.get('length'), '40960', 'the length the server resolved');
  assert.deepEqual(q.getAll('before'), ['write 0 4096']);
  for (const k of ['run', 'pace', 'colour', 'present', 'quiz', 'keepSize']) assert.ok(!q.has(k), k);
});

test('the view\'s choices are kept: pace, colouring, presenter mode, quiz, keep size', () => {
  const st = model({ pace: '180' });
  const q = new URLSearchParams(permalinkSearch('', { ...params, keepSize: true }, st, view({ colour: { by: 'segment' }, present: true, quiz: true }), paces));
  assert.deepEqual([q.get('pace'), q.get('colour'), q.get('present'), q.get('quiz'), q.get('keepSize')], ['180', 'segment', '1', '1', 'true']);
});

test('a sandbox run keeps its own keys: no path or range', () => {
  const st = model();
  const q = new URLSearchParams(permalinkSearch('?list=x', { ...params, sandbox: 's1' }, st, view(), paces));
  assert.equal(q.get('list'), 'x');
  assert.ok(!q.has('path') && !q.has('offset'));
});
