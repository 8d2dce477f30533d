// Byte counts as typed (node --test), held to Go's units.ParseSize on every vector of
// testdata/units.json (written by go test ./internal/units -run TestVectors -units-vectors).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { byteCount } from '../js/size.js';
import { bytes, groupDigits } from '../js/fmt.js';

const vectors = JSON.parse(readFileSync(new URL('./testdata/units.json', import.meta.url), 'utf8'));

test('byteCount takes and refuses what units.ParseSize does, with the same value', () => {
  const taken = vectors.size.filter((/** @type {{value: string|null}} */ v) => v.value !== null).length;
  assert.ok(taken >= 100 && vectors.size.length - taken >= 100, `${taken} of ${vectors.size.length} taken`);
  for (const v of vectors.size) assert.equal(byteCount(v.in), v.value ?? '', JSON.stringify(v.in));
});

test('what the page prints reads back as the same count', () => {
  for (const [n] of vectors.bytes) {
    assert.equal(byteCount(bytes(n)), BigInt(n).toString(), n);
    assert.equal(byteCount(groupDigits(n)), BigInt(n).toString(), n);
  }
});

test('the forms the run header and the chain form show as hints', () => {
  assert.equal(byteCount('4096'), '4096');
  assert.equal(byteCount('0x1000'), '4096');
  assert.equal(byteCount('64MiB'), String(64 * 1024 * 1024));
  assert.equal(byteCount(' 2,097,152 '), '2097152');
  assert.equal(byteCount('1_048_576'), '');
});
