// Unit tests of the "what happens next" panel's state (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  readState, writeState, apply, parseNow, frameURL, cellClass, marks, openQuestion, verdictAt, stopIndex, moveLine, mapText, candidateTable, cellTitle,
} from '../js/nextstate.js';

const fresh = (/** @type {string} */ q) => readState(new URLSearchParams(q));

test('readState: next opens the panel at a frame; bad values fall back to the defaults', () => {
  assert.deepEqual(fresh(''), { open: false, at: 0, policy: 'greedy', now: 0 });
  assert.deepEqual(fresh('next=4&policy=cost-benefit&now=3600'), { open: true, at: 4, policy: 'cost-benefit', now: 3600 });
  assert.deepEqual(fresh('next=0'), { open: true, at: 0, policy: 'greedy', now: 0 });
  for (const q of ['next=-1', 'next=x', 'next=1.5']) assert.equal(fresh(q).open, false, q);
  assert.equal(fresh('next=2&policy=lru').policy, 'greedy');
  assert.equal(fresh('next=2&now=-5').now, 0);
  assert.equal(fresh('next=2&now=99999999999999999999').now, 0, 'beyond a safe integer');
});

test('writeState is readState\'s inverse and leaves the player\'s parameters alone', () => {
  const states = [
    { open: true, at: 0, policy: 'greedy', now: 0 },
    { open: true, at: 7, policy: 'cost-benefit', now: 12 },
    { open: false, at: 0, policy: 'greedy', now: 0 },
  ];
  for (const s of states) {
    const q = writeState(new URLSearchParams('mode=both&step=9&path=%2Fa&quiz=1'), s);
    assert.equal(q.get('step'), '9');
    assert.equal(q.get('mode'), 'both');
    assert.equal(q.get('quiz'), '1');
    assert.deepEqual(readState(q), s);
  }
  const q = writeState(new URLSearchParams('next=3&policy=cost-benefit&now=5&step=1'), { open: false, at: 3, policy: 'cost-benefit', now: 5 });
  assert.equal(q.toString(), 'step=1', 'a closed panel leaves no parameter behind');
  assert.equal(writeState(new URLSearchParams(), { open: true, at: 2, policy: 'greedy', now: 0 }).toString(), 'next=2', 'defaults are left out');
});

test('apply: step, back, home, end and seek stay inside the timeline', () => {
  const s0 = { open: true, at: 0, policy: 'greedy', now: 0 };
  assert.equal(apply(s0, { type: 'step', n: -1 }, 10).at, 0);
  assert.equal(apply(s0, { type: 'step', n: 1 }, 10).at, 1);
  assert.equal(apply({ ...s0, at: 9 }, { type: 'step', n: 1 }, 10).at, 9);
  assert.equal(apply({ ...s0, at: 5 }, { type: 'home' }, 10).at, 0);
  assert.equal(apply(s0, { type: 'end' }, 10).at, 9);
  assert.equal(apply(s0, { type: 'seek', at: 42 }, 10).at, 9);
  assert.equal(apply(s0, { type: 'seek', at: -3 }, 10).at, 0);
  assert.equal(apply(s0, { type: 'seek', at: Number.NaN }, 10).at, 0);
  assert.equal(apply(s0, { type: 'seek', at: 3.7 }, 10).at, 3);
  assert.equal(apply(s0, { type: 'seek', at: 42 }, 0).at, 42, 'an unknown length: the server clamps');
});

test('apply: a random path of actions never leaves the timeline and never touches what it does not change', () => {
  let seed = 22;
  const rnd = (/** @type {number} */ n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  let s = { open: true, at: 0, policy: 'greedy', now: 0 };
  const frames = 12;
  for (let i = 0; i < 2000; i++) {
    const before = s;
    const acts = [{ type: 'step', n: 1 }, { type: 'step', n: -1 }, { type: 'home' }, { type: 'end' },
      { type: 'seek', at: rnd(20) - 4 }, { type: 'policy', policy: ['greedy', 'cost-benefit', 'x'][rnd(3)] },
      { type: 'now', now: [0, 5, -1, 1.5][rnd(4)] }];
    const a = /** @type {any} */ (acts[rnd(acts.length)]);
    s = apply(s, a, frames);
    assert.ok(s.at >= 0 && s.at < frames && Number.isInteger(s.at), `${JSON.stringify(a)} → at ${s.at}`);
    assert.ok(['greedy', 'cost-benefit'].includes(s.policy));
    assert.ok(Number.isSafeInteger(s.now) && s.now >= 0);
    if (a.type !== 'policy') assert.equal(s.policy, before.policy);
    if (a.type !== 'now') assert.equal(s.now, before.now);
    if (a.type === 'policy' || a.type === 'now') assert.equal(s.at, before.at);
    // The URL round trip is the state: a fresh load reads what the path reached.
    assert.deepEqual(readState(writeState(new URLSearchParams('step=3'), s)), s);
  }
});

test('parseNow takes whole seconds with separators, nothing else', () => {
  assert.equal(parseNow('0'), 0);
  assert.equal(parseNow(' 3,600 '), 3600);
  assert.equal(parseNow('1_000'), 1000);
  for (const bad of ['', '-1', '1.5', 'abc', '1e3', '99999999999999999999']) assert.equal(parseNow(bad), null, bad);
});

test('frameURL carries the run, the state and the quiz', () => {
  const run = { image: 'demo', path: '/seed/a b.bin', offset: '0', length: '4096', keepSize: true, before: ['zero /seed/a 0 4096', 'sync'] };
  const u = new URL(frameURL(run, { open: true, at: 3, policy: 'cost-benefit', now: 7 }, true), 'http://x');
  assert.equal(u.pathname, '/api/images/demo/next');
  const q = u.searchParams;
  assert.equal(q.get('path'), '/seed/a b.bin');
  assert.deepEqual(q.getAll('before'), run.before);
  assert.equal(q.get('keepSize'), 'true');
  assert.equal(q.get('policy'), 'cost-benefit');
  assert.equal(q.get('now'), '7');
  assert.equal(q.get('at'), '3');
  assert.equal(q.get('quiz'), '1');
  assert.equal(frameURL({ ...run, image: 'a b/c' }, { open: true, at: 0, policy: 'greedy', now: 0 }, false).split('?')[0], '/api/images/a%20b%2Fc/next');
  assert.equal(new URL(frameURL({ ...run, length: '', keepSize: false }, { open: true, at: 0, policy: 'greedy', now: 0 }, false), 'http://x').searchParams.has('quiz'), false);
});

test('marks and cellClass: the victim\'s whole section, the destinations, the marked sections', () => {
  const m = marks({ victim: 8, moves: [{ from: 8, to: 20 }, { from: 9, to: 21 }], marked: [4] }, 2);
  assert.deepEqual([...m.victim], [8, 9]);
  assert.deepEqual([...m.dest], [20, 21]);
  assert.deepEqual([...m.marked], [4, 5]);
  assert.equal(marks({ victim: null, moves: [], marked: [] }, 4).victim.size, 0);
  assert.equal(cellClass('d', { victim: false, dest: false, marked: false }), 'gc-cell gc-dirty');
  assert.equal(cellClass('p', { victim: true, dest: false, marked: true }), 'gc-cell gc-prefree gc-victim', 'the victim outline wins over the mark');
  assert.equal(cellClass('c', { victim: false, dest: true, marked: false }), 'gc-cell gc-current gc-dest');
  assert.equal(cellClass('?', { victim: false, dest: false, marked: false }), 'gc-cell gc-free');
});

test('the quiz asks at its frame until answered, and the reveal frame gives the verdict', () => {
  const stops = [{ at: 0 }, { at: 2, question: { text: 'Which?', choices: ['segment 3', 'segment 38'], reveal: 3 } }, { at: 3 }];
  const answers = new Map();
  assert.equal(openQuestion(stops, 2, false, answers), null, 'quiz off');
  assert.equal(openQuestion(stops, 1, true, answers), null, 'no question here');
  assert.equal(openQuestion(stops, 2, true, answers)?.reveal, 3);
  assert.equal(verdictAt(stops, 3, 38, answers), '', 'no guess, no verdict');
  answers.set(2, 'segment 38');
  assert.equal(openQuestion(stops, 2, true, answers), null, 'answered');
  assert.match(verdictAt(stops, 3, 38, answers), /^Right/);
  answers.set(2, 'segment 3');
  assert.match(verdictAt(stops, 3, 38, answers), /^Not this time: you chose segment 3; the cleaner picks segment 38/);
  assert.equal(verdictAt(stops, 4, 38, answers), '');
});

test('stopIndex is the last stop at or before the frame', () => {
  const stops = [{ at: 0 }, { at: 1 }, { at: 4 }];
  assert.deepEqual([0, 1, 2, 3, 4, 9].map((k) => stopIndex(stops, k)), [0, 1, 1, 1, 2, 2]);
  assert.equal(stopIndex([{ at: 2 }], 1), -1);
  assert.equal(stopIndex([], 1), -1);
});

test('moveLine and mapText say what a frame moved and marks', () => {
  assert.equal(moveLine({ count: 1, from: 3, to: 29, logName: 'cold data' }), '1 block: segment 3 → segment 29 (cold data log)');
  assert.equal(moveLine({ count: 1234, from: 38, to: 29, logName: 'warm node' }), '1,234 blocks: segment 38 → segment 29 (warm node log)');
  const counts = [{ class: 'free', n: 104 }, { class: 'dirty', n: 2 }];
  assert.equal(mapText({ counts, victim: null, moves: [], marked: [] }, 1), '104 free, 2 dirty.');
  assert.equal(mapText({ counts, victim: 38, moves: [{ from: 38, to: 29 }, { from: 38, to: 29 }], marked: [4] }, 1),
    '104 free, 2 dirty; victim: the section at segment 38; blocks went to segment 29; marked: 4.');
});

test('a question shows every term its policy weighs and withholds the cost and rank (issue 30)', () => {
  const c = { segno: 7, valid: 1200, mtime: 123456, u: 40, age: 87, cost: 4242, rank: 2 };
  const cb = candidateTable(true, 'cost-benefit');
  assert.deepEqual(cb.cols, ['section', 'valid', 'u %', 'mean mtime', 'age']);
  assert.deepEqual(cb.cells(c, false), ['segment 7', '1,200', '40', '123,456', '87']);
  const gr = candidateTable(true, 'greedy');
  assert.deepEqual(gr.cols, ['section', 'valid', 'mean mtime']);
  for (const t of [cb, gr]) {
    const shown = t.cells(c, true).join(' ');
    assert.ok(!shown.includes('4242') && !shown.includes('victim'), `${shown}: the cost or the pick`);
  }
  const open = candidateTable(false, 'cost-benefit');
  assert.deepEqual(open.cells(c, true), ['2', 'segment 7 ◂ victim', '1,200', '123,456', '40', '87', '4242']);
  // The map's hover names the age a cost-benefit candidate is weighed by, asked or not.
  assert.equal(cellTitle(7, 'd', 1200, c, 'cost-benefit'), 'segment 7: dirty, 1200 valid, mean mtime 123,456, age 87');
  assert.equal(cellTitle(7, 'd', 1200, c, 'greedy'), 'segment 7: dirty, 1200 valid');
  assert.equal(cellTitle(8, 'F', 512, undefined, 'cost-benefit'), 'segment 8: full, 512 valid');
});
