// Unit tests of the kernel trace in the player (node --test): the kernel's calls aligned with the
// model's by call number as the hello and frames bring them, the ticks, the words, the slider mark.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KernelLog, traceOpFor, traceWords, traceStatus, stepX, callText, traceFileRefusal, MAX_TRACE_BYTES } from '../js/trace.js';

test('KernelLog ticks the calls that agree and marks those that do not', () => {
  const log = new KernelLog();
  // A frame: the batched mode's latest calls are numbers 17, 18, 19; the kernel made 19 calls.
  log.add({ mode: 'batched', first: 17, calls: [[6144, 361], [7000, 24], null] });
  assert.deepEqual(log.note('batched', 17, [6144, 361, 'end-of-chunk']), { ok: true, kernel: [6144, 361], first: false });
  assert.deepEqual(log.note('batched', 18, [7000, 25, 'discontiguous']), { ok: false, kernel: [7000, 24], first: false });
  assert.deepEqual(log.note('batched', 19, [9000, 1]), { ok: false, kernel: null, first: false }, 'past the kernel\'s last call');
  assert.equal(log.note('per-block', 17, [6144, 361]), null, 'the trace is compared with one mode');
  assert.equal(log.note('batched', 16, [1, 1]), null, 'a call the log has not been told about');
  log.firstDivergence = 18;
  assert.equal(log.note('batched', 18, [7000, 25]).first, true);
});

test('KernelLog keeps what it learnt across seeks, bounded, and starts over for another mode', () => {
  const log = new KernelLog();
  const v0 = log.version;
  log.add({ mode: 'per-block', first: 0, calls: [[34304, 1], [34305, 1]] });
  assert.ok(log.version > v0);
  const v1 = log.version;
  log.add({ mode: 'per-block', first: 1, calls: [[34305, 1]] });
  assert.equal(log.version, v1, 'nothing new: the call log need not redraw');
  // A seek back: the numbers name the same kernel calls.
  log.add({ mode: 'per-block', first: 0, calls: [[34304, 1]] });
  assert.equal(log.note('per-block', 1, [34305, 1]).ok, true);
  // Bounded: a long run keeps the latest 1,024 numbers.
  for (let i = 0; i < 3000; i += 16) log.add({ mode: 'per-block', first: i, calls: Array.from({ length: 16 }, (_, j) => [34304 + i + j, 1]) });
  assert.ok(log.calls.size <= 1024);
  assert.equal(log.note('per-block', 3007, [34304 + 3007, 1]).ok, true);
  assert.equal(log.note('per-block', 0, [34304, 1]), null, 'the oldest are forgotten');
  log.add({ mode: 'batched', first: 0, calls: [[34304, 512]] });
  assert.equal(log.note('per-block', 3007, [34304 + 3007, 1]), null);
  assert.equal(log.note('batched', 0, [34304, 512]).ok, true);
  log.add(null);
  log.add({ mode: 'batched' });
  log.clear();
  assert.equal(log.calls.size, 0);
  assert.equal(log.mode, '');
});

test('traceOpFor: the server picks for one operation or as many as the run; else the run\'s place', () => {
  assert.equal(traceOpFor(1, 1), 0);
  assert.equal(traceOpFor(1, 3), 0, 'a trace of one operation compares with the played one');
  assert.equal(traceOpFor(2, 2), 0);
  assert.equal(traceOpFor(2, 1), 1, 'case 9\'s trace on its first operation');
  assert.equal(traceOpFor(5, 3), 3);
  assert.equal(traceOpFor(2, 4), 2, 'a shorter trace: its last');
});

const agree = { id: 'x', mode: 'batched', format: 'ftrace', op: 1, calls: 19, modelCalls: 19, expanded: false, agree: true, firstDivergence: null, step: -1 };

test('traceWords says which mode, how compared and where they differ', () => {
  assert.equal(traceWords(agree), 'The kernel agrees with the batched model, call by call: 19 f2fs_invalidate_blocks calls each, in the same order (operation 1 of the ftrace trace).');
  const exp = { ...agree, mode: 'per-block', calls: 19, modelCalls: 16384, expanded: true };
  assert.match(traceWords(exp), /^The kernel agrees with the per-block model, block by block \(the kernel's 19 multi-block calls expanded to one per block\): 16,384 /);
  const dropped = {
    ...agree, mode: 'per-block', format: 'plain', calls: 16383, modelCalls: 16384, agree: false, step: 32771,
    firstDivergence: { index: 8192, kernel: [42497, 1], model: [42496, 1], slot: 8192, chunk: 8, dnode: 'i_nid[2]/7' },
  };
  assert.equal(traceWords(dropped), 'The kernel diverges from the per-block model, call by call, at call 8,193 (index 8,192): the kernel called f2fs_invalidate_blocks(42,497, 1), the model f2fs_invalidate_blocks(42,496, 1), at slot 8,192 in dnode i_nid[2]/7 (chunk 9). The kernel made 16,383 calls, the model 16,384 (operation 1 of the plain trace).');
  const short = { ...dropped, firstDivergence: { index: 19, kernel: null, model: [1, 2], slot: 3, chunk: 0, dnode: 'inode' } };
  assert.match(traceWords(short), /the kernel made no more calls, the model f2fs_invalidate_blocks\(1, 2\), at slot 3 in dnode inode \(chunk 1\)/);
  const extra = { ...dropped, firstDivergence: { index: 5, kernel: [7, 1], model: null, slot: 0, chunk: 0, dnode: '' } };
  assert.match(traceWords(extra), /the kernel called f2fs_invalidate_blocks\(7, 1\), the model made no more calls\. /);
  const expd = { ...dropped, expanded: true, firstDivergence: { ...dropped.firstDivergence, kernelCall: 4 } };
  assert.match(traceWords(expd), /\(a block of its call 5\)/);
  assert.equal(traceStatus(agree), '✓ agrees with batched');
  assert.equal(traceStatus(dropped), '✗ diverges from per-block at call 8,193');
  assert.equal(callText(null), 'no call');
});

test('stepX places a step where the markers canvas draws it', () => {
  assert.equal(stepX(0, 100, 216), 8);
  assert.equal(stepX(100, 100, 216), 208);
  assert.equal(stepX(50, 100, 216), 108);
  assert.equal(stepX(500, 100, 216), 208, 'clamped');
  assert.equal(stepX(5, 0, 216), 8);
});

test('traceFileRefusal: empty and oversized files are refused before sending', () => {
  assert.equal(traceFileRefusal({ name: 'a.ftrace', size: 10 }), '');
  assert.match(traceFileRefusal({ name: 'a.ftrace', size: 0 }), /empty/);
  assert.match(traceFileRefusal({ name: 'big', size: MAX_TRACE_BYTES + 1 }), /at most 64 MiB/);
  assert.equal(traceFileRefusal({ name: 'max', size: MAX_TRACE_BYTES }), '');
});
