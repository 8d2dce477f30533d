// Unit tests of op sequences in the player (node --test): the ops line of a run, the URL that
// continues from its end state with before=, the trace operation carried along.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { opLine, decimal, chainRefusal, chainURL, nextTraceOp, beforeText, opWords, nextRange, MAX_BEFORE } from '../js/chain.js';

// Kernel case 9's first operation, as hello.run describes it.
const op1 = {
  image: 'demo', path: '/cases/contiguous.bin', offset: '1048576', length: '1048576', keepSize: false,
  mode: 'both', before: [],
};

test('opLine writes request.Run.OpLine\'s form', () => {
  assert.equal(opLine(op1), 'zero /cases/contiguous.bin 1048576 1048576');
  assert.equal(opLine({ ...op1, keepSize: true }), 'zero /cases/contiguous.bin 1048576 1048576 keep_size');
  // Decimal strings pass through: 2^63-1 is not rounded.
  assert.equal(opLine({ ...op1, offset: '9223372036854775807', length: '0' }), 'zero /cases/contiguous.bin 9223372036854775807 0');
});

test('decimal reads byte counts typed with separators, as strings', () => {
  assert.equal(decimal('524288'), '524288');
  assert.equal(decimal(' 2,097,152 '), '2097152');
  assert.equal(decimal('1_048_576'), '1048576');
  assert.equal(decimal('007'), '7');
  assert.equal(decimal('0'), '0');
  assert.equal(decimal('9223372036854775807'), '9223372036854775807');
  for (const bad of ['', '-1', '0x10', '1.5', '64MiB', '9223372036854775808', '99999999999999999999', 'abc']) {
    assert.equal(decimal(bad), '', bad);
  }
});

test('chainURL appends the run as a before= line and plays the new range', () => {
  const u = new URL(chainURL(op1, { offset: '524288', length: '2097152', keepSize: false }), 'http://x');
  assert.equal(u.pathname, '/images/demo/run');
  assert.equal(u.searchParams.get('path'), '/cases/contiguous.bin');
  assert.equal(u.searchParams.get('offset'), '524288');
  assert.equal(u.searchParams.get('length'), '2097152');
  assert.equal(u.searchParams.get('mode'), 'both');
  assert.equal(u.searchParams.get('keepSize'), null);
  assert.deepEqual(u.searchParams.getAll('before'), ['zero /cases/contiguous.bin 1048576 1048576']);
  assert.equal(u.searchParams.get('step'), null, 'the new run starts at step 0');

  // A third operation keeps the first two in order; keep_size of the run and of the next.
  const op2 = { ...op1, offset: '524288', length: '2097152', keepSize: true, mode: 'batched', before: ['zero /cases/contiguous.bin 1048576 1048576'] };
  const keep = new URLSearchParams('path=/x&step=99&pace=10&colour=segment&present=1&quiz=1&room=abcdefgh&trace=t1&before=zero%20/x%200%201');
  const v = new URL(chainURL(op2, { offset: '0', length: '4096', keepSize: true }, keep), 'http://x');
  assert.deepEqual(v.searchParams.getAll('before'), [
    'zero /cases/contiguous.bin 1048576 1048576',
    'zero /cases/contiguous.bin 524288 2097152 keep_size',
  ]);
  assert.equal(v.searchParams.get('keepSize'), 'true');
  assert.equal(v.searchParams.get('mode'), 'batched');
  for (const [k, want] of [['pace', '10'], ['colour', 'segment'], ['present', '1'], ['quiz', '1'], ['room', 'abcdefgh']]) {
    assert.equal(v.searchParams.get(k), want, `${k} kept`);
  }
  assert.equal(v.searchParams.get('step'), null);
  assert.equal(v.searchParams.get('trace'), null, 'a trace is not carried without knowing its operations');
  assert.equal(v.searchParams.get('path'), '/cases/contiguous.bin');
});

test('a trace of several operations goes on with the next one', () => {
  const u = new URL(chainURL(op1, { offset: '524288', length: '2097152', keepSize: false }, undefined, { id: 'abc', op: 1, ops: 2 }), 'http://x');
  assert.equal(u.searchParams.get('trace'), 'abc');
  assert.equal(u.searchParams.get('traceOp'), '2');
  assert.deepEqual(nextTraceOp({ id: 'abc', op: 2, ops: 2 }), null, 'past its last operation');
  assert.deepEqual(nextTraceOp({ id: 'abc', op: 1, ops: 1 }), null, 'a trace of one operation');
  assert.deepEqual(nextTraceOp({ id: 'abc', op: 1, ops: 0 }), null, 'unknown size');
  assert.deepEqual(nextTraceOp(null), null);
  assert.deepEqual(nextTraceOp({ id: 'abc', op: 3, ops: 9 }), { id: 'abc', op: 4 });
});

test('chainRefusal: sandbox runs, paths the ops language cannot name, too many operations', () => {
  assert.equal(chainRefusal(op1), '');
  assert.match(chainRefusal({ ...op1, image: '' }), /sandbox/);
  assert.match(chainRefusal({ ...op1, path: '/a b' }), /spaces/);
  assert.equal(chainRefusal({ ...op1, before: Array(MAX_BEFORE - 1).fill('zero /a 0 1') }), '');
  assert.match(chainRefusal({ ...op1, before: Array(MAX_BEFORE).fill('zero /a 0 1') }), /at most 64/);
});

test('beforeText lists the operations run first', () => {
  assert.equal(beforeText([]), '');
  assert.equal(beforeText(['zero /cases/contiguous.bin 1048576 1048576']),
    'before this: zero /cases/contiguous.bin 1,048,576 1,048,576');
  assert.equal(beforeText(['zero /a 0 4096 keep_size', 'zero /a 4096 8192']),
    'before this, 2 operations: 1. zero /a 0 4,096 keep_size; 2. zero /a 4,096 8,192');
  assert.equal(opWords('garbage'), 'garbage');
});

test('opWords shows the other operations of a sequence', () => {
  assert.equal(opWords('write /h.bin 4096 1048576'), 'write /h.bin 4,096 1,048,576');
  assert.equal(opWords('sync'), 'sync');
  assert.equal(opWords('fsync /h.bin'), 'fsync /h.bin');
  assert.equal(opWords('tune ipu_policy 16'), 'tune ipu_policy 16');
  assert.equal(beforeText(['write /a 0 8192', 'sync']), 'before this, 2 operations: 1. write /a 0 8,192; 2. sync');
});

test('nextRange suggests a range inside the file as the run leaves it, never past EOF', () => {
  // The README's demo: the whole 1 MiB file played; the next range is its first half, not [1 MiB, 2 MiB).
  assert.deepEqual(nextRange({ size: '1048576', offset: '0', length: '1048576', keepSize: false }), { offset: '0', length: '524288' });
  // The range after the one played, clamped at the end of the file.
  assert.deepEqual(nextRange({ size: '4194304', offset: '1048576', length: '1048576', keepSize: false }), { offset: '2097152', length: '1048576' });
  assert.deepEqual(nextRange({ size: '3000000', offset: '0', length: '2097152', keepSize: false }), { offset: '2097152', length: '902848' });
  // Past EOF without keep_size the file grew to the range's end; with it, it did not.
  assert.deepEqual(nextRange({ size: '4096', offset: '8192', length: '8192', keepSize: false }), { offset: '0', length: '8192' });
  assert.deepEqual(nextRange({ size: '4096', offset: '8192', length: '8192', keepSize: true }), { offset: '0', length: '4096' });
  assert.deepEqual(nextRange({ size: '0', offset: '0', length: '0', keepSize: true }), { offset: '0', length: '4096' });
  assert.deepEqual(nextRange({ size: '100', offset: '0', length: '100', keepSize: false }), { offset: '0', length: '100' });
  // Any run: a range of at least a byte, inside the file after the run, after the played one when it can be.
  let seed = 30;
  const rnd = (/** @type {number} */ n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  for (let i = 0; i < 2000; i++) {
    const size = BigInt(rnd(4) === 0 ? rnd(5000) : rnd(1 << 30));
    const off = BigInt(rnd(3) === 0 ? rnd(5000) : rnd(1 << 30));
    const len = BigInt(rnd(1 << 28));
    const keepSize = rnd(2) === 0;
    const after = !keepSize && off + len > size ? off + len : size;
    const r = nextRange({ size: String(size), offset: String(off), length: String(len), keepSize });
    const o = BigInt(r.offset);
    const l = BigInt(r.length);
    const what = `size ${size} offset ${off} length ${len} keep ${keepSize} → ${r.offset} ${r.length}`;
    assert.ok(l > 0n, what);
    if (after > 0n) assert.ok(o + l <= after, what);
    if (len > 0n && off + len < after) assert.equal(o, off + len, what);
  }
});
