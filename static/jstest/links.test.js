// Unit tests of the player's links into the block inspector (node --test): the URLs must be the
// ones Go's templates.BlockURL and FileSlotURL build (expected values printed by Go's net/url).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { queryEscape, pathEscape, blockURL, fileSlotURL, slotLinks, imagePage, apiImage, uploadURL, uploadProgressURL, followPage } from '../js/links.js';

test('blockURL and fileSlotURL match templates.BlockURL and FileSlotURL', () => {
  const cases = [
    ['demo', '/seed/bench64.bin', 16383, 22527, '/images/demo/blocks/22527', '/images/demo/file?path=%2Fseed%2Fbench64.bin#slot=16383'],
    ['3f2a9c01d4e5', '/a b/c+d', 0, 4294967293, '/images/3f2a9c01d4e5/blocks/4294967293', '/images/3f2a9c01d4e5/file?path=%2Fa+b%2Fc%2Bd#slot=0'],
    ['demo', "/x~y*z!'()", 7, 1, '/images/demo/blocks/1', '/images/demo/file?path=%2Fx~y%2Az%21%27%28%29#slot=7'],
    ['my image', '/ü/é&=?#', 12, 34304, '/images/my%20image/blocks/34304', '/images/my%20image/file?path=%2F%C3%BC%2F%C3%A9%26%3D%3F%23#slot=12'],
  ];
  for (const [id, path, slot, addr, block, file] of cases) {
    assert.equal(blockURL(id, addr), block, `block ${id} ${addr}`);
    assert.equal(fileSlotURL(id, path, slot), file, `file ${path}`);
  }
});

test('queryEscape and pathEscape escape as url.QueryEscape and url.PathEscape', () => {
  assert.equal(queryEscape('/a b/c+d'), '%2Fa+b%2Fc%2Bd');
  assert.equal(pathEscape('/a b/c+d'), '%2Fa%20b%2Fc+d');
  assert.equal(pathEscape('/ü/é&=?#'), '%2F%C3%BC%2F%C3%A9&=%3F%23');
  assert.equal(queryEscape("x~y*z!'()"), 'x~y%2Az%21%27%28%29');
  assert.equal(pathEscape('$:@,;'), '$:@%2C%3B');
});

test('slotLinks: the file page always, the block only for an address', () => {
  const l = slotLinks('demo', '/cases/contiguous.bin', 5, 22533);
  assert.deepEqual(l, { file: '/images/demo/file?path=%2Fcases%2Fcontiguous.bin#slot=5', block: '/images/demo/blocks/22533', addr: 22533 });
  for (const v of [0, 0xffffffff, 0xfffffffe, -1, -2]) {
    const x = slotLinks('demo', '/a', 1, v);
    assert.equal(x && x.block, '', `value ${v} is no address`);
    assert.equal(x && x.file, '/images/demo/file?path=%2Fa#slot=1');
  }
  assert.equal(slotLinks('', '/sandbox', 1, 9000), null, 'a sandbox run has no image to link');
  assert.equal(slotLinks('demo', '/a', -1, 9000), null);
});

test('imagePage and apiImage escape every segment, numbers as they are', () => {
  assert.equal(imagePage('demo'), '/images/demo');
  assert.equal(imagePage('demo', 'run'), '/images/demo/run');
  assert.equal(imagePage('a b/c', 'file'), '/images/a%20b%2Fc/file');
  assert.equal(apiImage('demo'), '/api/images/demo');
  assert.equal(apiImage('demo', 'segments', 3), '/api/images/demo/segments/3');
  assert.equal(apiImage('x', 'traces', 't?1#2'), '/api/images/x/traces/t%3F1%232');
  assert.equal(blockURL('demo', -1), '/images/demo/blocks/4294967295');
});

test('uploadURL and followPage escape what the user named', () => {
  assert.equal(uploadURL('00ff', 'my image&v=2.img'), '/api/images?token=00ff&name=my+image%26v%3D2.img');
  assert.equal(followPage('ab12'), '/follow/ab12');
  assert.equal(uploadProgressURL('00ff'), '/api/uploads/00ff');
  assert.equal(uploadProgressURL('a b/c'), '/api/uploads/a%20b%2Fc');
  assert.equal(followPage('a/b'), '/follow/a%2Fb');
});

test('no module but links.js builds URLs with encodeURIComponent', () => {
  const dir = new URL('../js/', import.meta.url);
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.js') || f === 'links.js') continue;
    assert.ok(!readFileSync(new URL(f, dir), 'utf8').includes('encodeURIComponent'), `${f} calls encodeURIComponent`);
  }
});
