// Unit tests of the glossary's term matching (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TermMatcher, popoverPlace } from '../js/glossary.js';

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

/** @returns {{left: number, top: number, right: number, bottom: number}} */
const box = (left, top, width, height) => ({ left, top, right: left + width, bottom: top + height });
const overlaps = (s, p, a) => s.left < a.right && s.left + p.width > a.left && s.top < a.bottom && s.top + p.height > a.top;

test('the popover goes under its term, or above it when under does not fit', () => {
  const p = { width: 300, height: 200 };
  const v = { width: 1024, height: 768 };
  assert.deepEqual(popoverPlace(box(100, 100, 50, 20), p, v, []), { left: 100, top: 126 });
  assert.deepEqual(popoverPlace(box(100, 700, 50, 20), p, v, []), { left: 100, top: 494 });
  assert.deepEqual(popoverPlace(box(900, 100, 50, 20), p, v, []), { left: 718, top: 126 }, 'kept inside on the right');
});

test('the popover never covers the quiz choices when there is any room that does not', () => {
  const p = { width: 360, height: 220 };
  // Terms in the tour text above the choices, at several widths, the choices just under them.
  for (const [vw, vh] of [[390, 844], [1024, 768], [1366, 768], [1920, 1080]]) {
    for (let y = 250; y < vh - 300; y += 37) {
      const term = box(20, y, 80, 18);
      const choices = box(10, y + 30, Math.min(600, vw - 20), 44);
      const s = popoverPlace(term, p, { width: vw, height: vh }, [choices]);
      assert.ok(!overlaps(s, p, choices), `${vw}×${vh}, term at ${y}: ${JSON.stringify(s)}`);
      assert.ok(s.left >= 6 && s.top >= 6 && s.left + p.width <= vw - 6 && s.top + p.height <= vh - 6, 'inside the viewport');
    }
  }
});

test('with no clear place the popover covers the least it can', () => {
  const p = { width: 300, height: 300 };
  const v = { width: 390, height: 400 };
  const avoid = [box(0, 0, 390, 150)];
  const s = popoverPlace(box(10, 160, 50, 20), p, v, avoid);
  const covered = Math.max(0, Math.min(s.top + p.height, 150) - s.top);
  assert.ok(covered <= 56, `covers ${covered} px of the choices`);
});

test('the pages\' own cases: a term under the quiz in the tour text, a heading below it on a phone', () => {
  // Measured in the browser suite (TestBrowserClassroomQuiz): term, popover size, viewport, quiz boxes.
  const cases = [
    [box(821, 635, 49, 18), { width: 420, height: 246 }, { width: 1024, height: 768 }, [box(725, 563, 270, 28), box(725, 563, 80, 28)]],
    [box(17, 775, 52, 17), { width: 378, height: 264 }, { width: 390, height: 844 }, [box(27, 548, 336, 40), box(27, 548, 102, 40)]],
    [box(1302, 917, 49, 18), { width: 420, height: 246 }, { width: 1920, height: 1080 }, [box(1286, 863, 605, 28), box(1286, 802, 605, 18)]],
  ];
  for (const [term, p, v, avoid] of cases) {
    const s = popoverPlace(term, p, v, avoid);
    for (const a of [...avoid, term]) assert.ok(!overlaps(s, p, a), `${v.width}×${v.height}: ${JSON.stringify(s)} covers ${JSON.stringify(a)}`);
    assert.ok(s.left >= 6 && s.top >= 6 && s.left + p.width <= v.width - 6 && s.top + p.height <= v.height - 6);
  }
});
