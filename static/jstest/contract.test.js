// The contract the pages carry (web/contract.go; testdata/contract.json, written by web's
// TestContract): contract.js reads it, its segment formula agrees with the engine on real runs,
// and no other module restates what it holds.
import { served } from './contract.fixture.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { contract, segnoOf, blockOffset, segmentStart } from '../js/contract.js';

test('the modules see the contract the pages render, frozen', () => {
  const c = contract();
  assert.deepEqual(c, served.contract);
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.modes.order) && Object.isFrozen(c.addr));
  assert.throws(() => { /** @type {any} */ (c.modes).both = 'x'; });
});

test('segnoOf puts every address of real runs in the segment the engine charged', () => {
  const g = served.geometry;
  assert.ok(served.segments.length >= 20, `${served.segments.length} vectors`);
  const segs = new Set();
  for (const { addr, segno } of served.segments) {
    assert.equal(segnoOf(g, addr), segno, `address ${addr}`);
    const k = blockOffset(g, addr);
    assert.ok(k >= 0 && k < g.blocksPerSeg, `address ${addr}: offset ${k}`);
    assert.equal(segmentStart(g, segno) + k, addr);
    segs.add(segno);
  }
  assert.ok(segs.size >= 10, `${segs.size} segments`);
});

test('a page reads its own contract from script#zrviz-contract, and one without it fails loudly', async () => {
  const text = JSON.stringify(served.contract);
  /** @type {any} */ (globalThis).document = { getElementById: (/** @type {string} */ id) => (id === 'zrviz-contract' ? { textContent: text } : null) };
  try {
    const fresh = await import('../js/contract.js?page');
    assert.deepEqual(fresh.contract(), served.contract);
    /** @type {any} */ (globalThis).document = { getElementById: () => null };
    const bare = await import('../js/contract.js?bare');
    assert.throws(() => bare.contract(), /no contract/);
  } finally {
    delete (/** @type {any} */ (globalThis)).document;
  }
});

/**
 * What no module but contract.js may spell out: each constant the contract carries, as a literal.
 * The allowed lines are each justified.
 */
test('no module restates the contract', () => {
  const c = served.contract;
  const quoted = (/** @type {string[]} */ words) => new RegExp(`['"\`](${words.map((w) => w.replace(/[-]/g, '\\-')).join('|')})['"\`]`);
  const checks = [
    { what: 'a mode name', re: quoted([...c.modes.order, c.modes.both]) },
    { what: 'a log type name', re: quoted(c.logTypes) },
    { what: 'a segment class name', re: quoted(Object.values(c.segmentClasses)) },
    { what: 'a special address', re: new RegExp(`\\b(${Object.values(c.addr).filter((v) => v !== 0).flatMap((v) => [`0x${v.toString(16)}`, String(v)]).join('|')})\\b`, 'i') },
    { what: 'the segment formula', re: new RegExp(`- *[\\w.]*${c.segment.base}\\) */|/ *[\\w.]*${c.segment.perSegment}\\b`) },
    { what: 'a run query field', re: new RegExp(`\\.(set|append|getAll)\\('(${Object.values(c.query).join('|')})'`) },
    { what: 'a played call\'s name', re: quoted(Object.values(c.ops)) },
    // A call's words and kernel function are its declaration's (contract().played, request.Played).
    { what: 'a played call\'s words', re: quoted(c.played.flatMap((p) => [p.label, p.perDnode])) },
    // The query's default call (ops.zero) is the one a module may name; any other is read from its
    // declaration's facet (playedOf), not picked by name.
    { what: 'a played call other than the default, by name', re: /contract\(\)\.ops\.(?!zero\b)\w+|\bops = contract\(\)\.ops/ },
  ];
  /** Lines that look like a restatement and are not, by file and the text they hold. */
  const allowed = [
    // The call's reason, core.Action's "per-block" (ActPerBlock), which the server sends as a word:
    // not the mode, though it is spelt alike.
    ['calllog.js', "why !== 'per-block'"],
    // A block bit's state on the image page, not a segment class.
    ['image.js', "'valid' : 'free'"],
    // A row of the counters table named by its DOM id (c-pb-prefree), not a class.
    ['panels.js', "['prefree', 'segmentsPrefree']"],
    // The file tree's "zero" column, a CSS class, not the call.
    ['tree.js', "span('zero', '')"],
  ];
  const dir = new URL('../js/', import.meta.url);
  const found = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.js') && n !== 'contract.js')) {
    readFileSync(new URL(f, dir), 'utf8').split('\n').forEach((line, i) => {
      const code = line.replace(/^\s*(\/\/|\*|\/\*\*).*$/, ''); // comments may name them
      for (const { what, re } of checks) {
        if (re.test(code) && !allowed.some(([af, t]) => af === f && code.includes(t))) found.push(`${f}:${i + 1}: ${what}: ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(found, []);
});
