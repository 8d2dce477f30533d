// Unit tests of the glossary's term matching (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TermMatcher } from '../js/glossary.js';

const entries = [
  { slug: 'sit', term: 'SIT', match: ['SIT'] },
  { slug: 'sit-lock', term: 'SIT lock', match: ['SIT lock holds', 'SIT lock'] },
  { slug: 'segment', term: 'segment', match: ['segments', 'segment'] },
  { slug: 'current-segment', term: 'current segment', match: ['current segment'] },
  { slug: 'new-addr', term: 'NEW_ADDR', match: ['NEW_ADDR'] },
  { slug: 'f2fs-invalidate-blocks', term: 'f2fs_invalidate_blocks', match: ['f2fs_invalidate_blocks'] },
  { slug: 'free', term: 'free' },
];

test('terms are found whole, longest first, each once', () => {
  const m = new TermMatcher(entries);
  const parts = m.split('f2fs_invalidate_blocks(6,144, 361): call 2 takes the SIT lock; the SIT lock holds the segment, a current segment; SITE and NEW_ADDRx are not terms, NEW_ADDR is.');
  assert.deepEqual(parts.filter((p) => p.slug).map((p) => [p.text, p.slug]), [
    ['f2fs_invalidate_blocks', 'f2fs-invalidate-blocks'],
    ['SIT lock', 'sit-lock'],
    ['segment', 'segment'],
    ['current segment', 'current-segment'],
    ['NEW_ADDR', 'new-addr'],
  ]);
  // Nothing is lost or doubled.
  assert.equal(parts.map((p) => p.text).join(''), 'f2fs_invalidate_blocks(6,144, 361): call 2 takes the SIT lock; the SIT lock holds the segment, a current segment; SITE and NEW_ADDRx are not terms, NEW_ADDR is.');
});

test('a shared seen set links a term once across texts', () => {
  const m = new TermMatcher(entries);
  const seen = new Set();
  assert.equal(m.split('the SIT', seen).filter((p) => p.slug).length, 1);
  assert.equal(m.split('the SIT again', seen).filter((p) => p.slug).length, 0);
});

test('empty text and no entries are handled', () => {
  assert.deepEqual(new TermMatcher(entries).split(''), []);
  assert.deepEqual(new TermMatcher([]).split('SIT'), [{ text: 'SIT' }]);
  assert.deepEqual(new TermMatcher(entries).split('nothing here'), [{ text: 'nothing here' }]);
});
