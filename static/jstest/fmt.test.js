// Unit tests of the number formatting (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { int, bytes, rate } from '../js/fmt.js';

test('int groups thousands and truncates', () => {
  assert.equal(int(16384), '16,384');
  assert.equal(int(-2891136), '-2,891,136');
  assert.equal(int(999), '999');
  assert.equal(int(1.9), '1');
  assert.equal(int(NaN), '–');
  assert.equal(int(undefined), '–');
});

test('bytes uses binary units', () => {
  assert.equal(bytes(512), '512 B');
  assert.equal(bytes(1536), '1.5 KiB');
  assert.equal(bytes(64 * 1024 * 1024), '64 MiB');
});

test('rate', () => {
  assert.equal(rate(0.5), '0.5 steps/s');
  assert.equal(rate(20000), '20,000 steps/s');
});
