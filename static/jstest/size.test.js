// Unit tests of byte counts as typed (node --test), the forms internal/units.ParseSize reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byteCount } from '../js/size.js';

test('decimal, with separators', () => {
  assert.equal(byteCount('524288'), '524288');
  assert.equal(byteCount(' 2,097,152 '), '2097152');
  assert.equal(byteCount('1_048_576'), '1048576');
  assert.equal(byteCount('007'), '7');
  assert.equal(byteCount('0'), '0');
  assert.equal(byteCount('9223372036854775807'), '9223372036854775807');
});

test('0x hex and binary units, as the header form takes them', () => {
  assert.equal(byteCount('0x1000'), '4096');
  assert.equal(byteCount('0X10'), '16');
  assert.equal(byteCount('64MiB'), String(64 * 1024 * 1024));
  assert.equal(byteCount('64 mib'), String(64 * 1024 * 1024));
  assert.equal(byteCount('1.5GiB'), String(1.5 * 1024 ** 3));
  assert.equal(byteCount('4k'), '4096');
  assert.equal(byteCount('4KB'), '4096');
  assert.equal(byteCount('512b'), '512');
  assert.equal(byteCount('.5k'), '512');
  assert.equal(byteCount('7EiB'), String(7n << 60n));
});

test('what is not a whole non-negative int64 of bytes is refused', () => {
  for (const bad of ['', ' ', 'abc', '-1', '-0x10', '1.5', '0.3k', '0x', '0xg', '1e3', '8EiB', '9223372036854775808', '1/2', '64 MiB MiB', 'MiB']) {
    assert.equal(byteCount(bad), '', bad);
  }
});
