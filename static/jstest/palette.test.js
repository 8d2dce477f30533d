// The colours of the stylesheet against palette.js (node --test): one Okabe–Ito palette, and every
// operation's tag on the diff page readable (issue 30: white on vermillion was 3.9:1 at 12 px).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { OI } from '../js/palette.js';
import { contrast } from '../js/colour.js';

const css = readFileSync(new URL('../css/app.css', import.meta.url), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
const root = Object.fromEntries([...css.match(/:root\s*\{([^}]*)\}/)[1].matchAll(/(--[\w-]+):\s*([^;]+);/g)]
  .map((m) => [m[1], m[2].trim()]));

/** The colour a CSS value names, following var() into :root. */
const resolve = (v) => {
  const m = /^var\((--[\w-]+)\)$/.exec(v.trim());
  if (m) return resolve(root[m[1]]);
  const c = v.trim().toLowerCase();
  return /^#[0-9a-f]{3}$/.test(c) ? '#' + [...c.slice(1)].map((d) => d + d).join('') : c;
};

/** Each `.op-NAME { --op-fill: …; --op-ink: …; }` rule: the operation's fill and text. */
const opRules = new Map();
for (const m of css.matchAll(/([^{}]*\.op-[^{}]*)\{([^}]*--op-fill:[^}]*)\}/g)) {
  const fill = /--op-fill:\s*([^;]+);/.exec(m[2])[1];
  const ink = /--op-ink:\s*([^;]+);/.exec(m[2])[1];
  for (const sel of m[1].split(',')) opRules.set(sel.trim().replace(/^\.op-/, ''), { fill: resolve(fill), ink: resolve(ink) });
}

test('app.css repeats palette.js: the same Okabe–Ito colours', () => {
  for (const [name, hex] of Object.entries(OI)) {
    if (name === 'black') continue;
    assert.equal(root[`--oi-${name}`], hex, `--oi-${name}`);
  }
});

test('every operation of imgdiff has a fill, and its text is at least 4.5:1 on it', () => {
  // imgdiff's operations, from its source: a new one needs a colour or a place on this list.
  const plain = new Set(['', 'dentry']); // a grey tag (.tag's own colours)
  const go = readFileSync(new URL('../../imgdiff/diff.go', import.meta.url), 'utf8');
  const ops = [...go.matchAll(/^\s*Op\w+\s+Op = "([^"]*)"/gm)].map((m) => m[1]);
  assert.ok(ops.length >= 9, `imgdiff declares ${ops.length} operations`);
  for (const op of ops) {
    if (plain.has(op)) continue;
    const r = opRules.get(op);
    assert.ok(r, `no .op-${op} rule in app.css`);
    assert.match(r.fill, /^#[0-9a-f]{6}$/, `.op-${op} fill`);
    const c = contrast(r.fill, r.ink);
    assert.ok(c >= 4.5, `.op-${op}: ${r.ink} on ${r.fill} is ${c.toFixed(2)}:1`);
  }
  // The fills are palette colours (or the muted ink), so the maps, the legend and the tags agree.
  const allowed = new Set([...Object.values(OI), resolve('var(--ink-3)')]);
  for (const [op, r] of opRules) assert.ok(allowed.has(r.fill), `.op-${op} fill ${r.fill} is not a palette colour`);
});

test('the tag rules take their colours from the operation rules only', () => {
  // One definition: no other rule gives an .op- element a literal colour.
  for (const m of css.matchAll(/([^{}]*\.op-[^{}]*)\{([^}]*)\}/g)) {
    if (/--op-fill:/.test(m[2])) continue;
    assert.doesNotMatch(m[2], /(background|color):\s*#/, `${m[1].trim()} sets a colour of its own`);
  }
});
