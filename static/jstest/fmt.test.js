// Unit tests of the number formatting (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { int, bytes, approxBytes, rate, groupDigits, showCount } from '../js/fmt.js';

/** What Go's units.Group and units.Bytes print (testdata/units.json, written by go test ./internal/units -run TestVectors). */
const vectors = JSON.parse(readFileSync(new URL('./testdata/units.json', import.meta.url), 'utf8'));
const shared = vectors.group;

test('groupDigits groups as Go\'s units.Group does, exactly past 2^53', () => {
  assert.ok(shared.length >= 10);
  for (const [in_, want] of shared) assert.equal(groupDigits(in_), want, in_);
});

test('int agrees with groupDigits on every safe integer of the shared cases', () => {
  for (const [in_, want] of shared) {
    const n = Number(in_);
    if (Number.isSafeInteger(n)) assert.equal(int(n), want, in_);
  }
});

test('int groups thousands and truncates', () => {
  assert.equal(int(16384), '16,384');
  assert.equal(int(-2891136), '-2,891,136');
  assert.equal(int(999), '999');
  assert.equal(int(1.9), '1');
  assert.equal(int(NaN), '–');
  assert.equal(int(undefined), '–');
});

test('bytes prints every size as Go\'s units.Bytes does, exactly past 2^53', () => {
  assert.ok(vectors.bytes.length >= 100);
  for (const [n, want] of vectors.bytes) {
    assert.equal(bytes(n), want, n);
    assert.equal(bytes(BigInt(n)), want, n);
    if (Number.isSafeInteger(Number(n))) assert.equal(bytes(Number(n)), want, n);
  }
});

test('approxBytes rounds to one decimal, for progress only', () => {
  assert.equal(approxBytes(512), '512 B');
  assert.equal(approxBytes(1536), '1.5 KiB');
  assert.equal(approxBytes(1052672), '1 MiB'); // bytes says 1,028 KiB
  assert.equal(approxBytes(64 * 1024 * 1024), '64 MiB');
  assert.equal(approxBytes(12.34 * 1024 * 1024), '12.3 MiB');
});

test('rate', () => {
  assert.equal(rate(0.5), '0.5 steps/s');
  assert.equal(rate(20000), '20,000 steps/s');
});

test('showCount groups the count and keeps its digits in data-count; no count is a dash', () => {
  const el = { textContent: '', dataset: {} };
  showCount(el, 16384);
  assert.equal(el.textContent, '16,384');
  assert.equal(el.dataset.count, '16384');
  showCount(el, 0);
  assert.deepEqual([el.textContent, el.dataset.count], ['0', '0']);
  showCount(el, null);
  assert.equal(el.textContent, '–');
  assert.ok(!('count' in el.dataset));
});
