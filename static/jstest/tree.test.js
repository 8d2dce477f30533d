// Unit tests of the image page's tree paging (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirURL, fileURL, runURL, subtreeEnd, pageItems } from '../js/tree.js';

test('dirURL asks for a page after a name', () => {
  assert.equal(dirURL('ab12', '/seed/bench64.bin', '', 200), '/api/images/ab12/dir?path=%2Fseed%2Fbench64.bin&limit=200');
  assert.equal(dirURL('ab12', '/a b', 'f199', 200), '/api/images/ab12/dir?path=%2Fa+b&limit=200&after=f199');
  assert.equal(dirURL('x/y', '/', '', 1), '/api/images/x%2Fy/dir?path=%2F&limit=1');
});

test('fileURL and runURL match the server templates', () => {
  assert.equal(fileURL('demo', '/cases/tiny.txt'), '/images/demo/file?path=%2Fcases%2Ftiny.txt');
  assert.equal(runURL('demo', '/x', 0), '/images/demo/run?path=%2Fx&offset=0&length=1&mode=both');
  assert.equal(runURL('demo', '/x', 8192), '/images/demo/run?path=%2Fx&offset=0&length=8192&mode=both');
});

test('subtreeEnd finds the end of a directory in a depth-first list', () => {
  //        /  a  a/x a/y b  b/c b/c/d e
  const d = [0, 1, 2, 2, 1, 2, 3, 1];
  assert.equal(subtreeEnd(d, 0), 8);
  assert.equal(subtreeEnd(d, 1), 4);
  assert.equal(subtreeEnd(d, 2), 3);
  assert.equal(subtreeEnd(d, 4), 7);
  assert.equal(subtreeEnd(d, 7), 8);
});

test('pageItems places a page one level down and says where the next starts', () => {
  const page = {
    dir: { path: '/seed/bench64.bin', ino: 7, type: 'dir', size: 0 },
    entries: [{ path: '/seed/bench64.bin/f200', ino: 9, type: 'file', size: 4096 }],
    more: true, next: 'f200', problems: [],
  };
  const { items, after } = pageItems(page, 2);
  assert.deepEqual(items, [{ path: '/seed/bench64.bin/f200', ino: 9, type: 'file', size: 4096, depth: 3, name: 'f200' }]);
  assert.equal(after, 'f200');
  assert.equal(pageItems({ ...page, more: false }, 2).after, null);
  assert.deepEqual(pageItems({ ...page, entries: [], more: false }, 0), { items: [], after: null });
});
