// The played calls (issue 36): every call the page contract's played list declares (request.Played,
// web/contract.go) is written as an ops line and a run query exactly as Go writes them
// (testdata/played.json, written by web's TestPlayedVectors), and read back, with no JS copy of
// any call: a new playable op in Go's registry reaches these functions through the contract.
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { contract, playedOf } from '../js/contract.js';
import { opLine, isPlayed, playedNext, opWords } from '../js/chain.js';
import { setRunQuery } from '../js/links.js';

const { vectors } = JSON.parse(readFileSync(new URL('./testdata/played.json', import.meta.url), 'utf8'));

test('the vectors cover every played call of the contract, and only those', () => {
  const kinds = new Set(vectors.map((v) => v.run.op));
  assert.deepEqual([...kinds].sort(), contract().played.map((p) => p.kind).sort());
});

test("opLine and setRunQuery write each played call's line and query as Go does", () => {
  for (const v of vectors) {
    assert.equal(opLine(v.run), v.line, `line of ${JSON.stringify(v.run)}`);
    const q = setRunQuery(new URLSearchParams('offset=1&length=2&size=3&keepSize=true&op=x'), v.run);
    assert.deepEqual(Object.fromEntries([...q.entries()].sort()), Object.fromEntries(Object.entries(v.query).sort()), `query of ${JSON.stringify(v.run)}`);
  }
});

test('each played line is played, read back by playedNext (a zero is the form\'s own), its numbers grouped', () => {
  for (const v of vectors) {
    const kind = v.line.split(' ')[0];
    assert.ok(isPlayed(kind), kind);
    const p = playedOf(kind);
    assert.ok(p, kind);
    const next = playedNext(v.line);
    if (kind === contract().ops.zero) {
      assert.equal(next, null);
    } else {
      assert.ok(next, v.line);
      assert.equal(next.op, kind);
      assert.equal(next.offset, v.run.offset);
      assert.equal(next.length, p.range === 'offset-length' ? v.run.length : '');
      assert.equal(opLine({ path: v.run.path, ...next }), v.line);
    }
    const words = { size: /4,096$/, file: /\/a\/b\.bin$/, 'offset-length': /4,096 1,048,576( keep_size)?$/ };
    assert.match(opWords(v.line), words[p.range], v.line);
  }
  assert.equal(isPlayed('write'), false);
  assert.equal(isPlayed(''), false);
});
