// Unit tests of opening an image from this computer (localimage.js): the format told from the
// first bytes (held to real files the tools made), the messages, the drop's choice, the permalink's
// reopen, the message to the service worker and the wiring on a stand-in DOM.
import './contract.fixture.js'; // first: links.js reads the page's contract as it loads
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { FakeDocument } from './fakedom.js';
import { isStatic } from '../js/contract.js';
import {
  detectFormat, formatNote, openingMessage, pickFile, reopenOutcome, openInWorker,
  initLocalOpen, initLocalMissing, HEADER_SIZE,
} from '../js/localimage.js';

const u8 = (/** @type {number[]} */ a) => Uint8Array.from(a);

test('detectFormat tells the formats as imgio.DetectFormat does', () => {
  assert.equal(detectFormat(u8([0x1f, 0x8b, 8, 0])), 'gzip');
  assert.equal(detectFormat(u8([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0, 0, 4])), 'xz');
  assert.equal(detectFormat(u8([0x3a, 0xff, 0x26, 0xed, 1, 0])), 'android-sparse');
  assert.equal(detectFormat(u8([0x28, 0xb5, 0x2f, 0xfd, 0x24])), 'zstd');
  // A skippable frame (magic 0x184D2A5A, 5 bytes) before the frame, as pzstd writes.
  assert.equal(detectFormat(u8([0x5a, 0x2a, 0x4d, 0x18, 5, 0, 0, 0, 1, 2, 3, 4, 5, 0x28, 0xb5, 0x2f, 0xfd])), 'zstd');
  // Nothing but skippable frames, and one that runs past what was read: still zstd.
  assert.equal(detectFormat(u8([0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0])), 'zstd');
  assert.equal(detectFormat(u8([0x50, 0x2a, 0x4d, 0x18, 0xff, 0xff, 0, 0, 1])), 'zstd');
  // A skippable frame followed by something else is not zstd; neither is a short or an F2FS start.
  assert.equal(detectFormat(u8([0x50, 0x2a, 0x4d, 0x18, 1, 0, 0, 0, 9, 1, 2, 3, 4])), 'raw');
  assert.equal(detectFormat(u8([0x1f])), 'raw');
  assert.equal(detectFormat(new Uint8Array(0)), 'raw');
  const f2fs = new Uint8Array(HEADER_SIZE);
  f2fs.set([0x10, 0x20, 0xf5, 0xf2], 1024);
  assert.equal(detectFormat(f2fs), 'raw');
});

test('detectFormat on real files: the committed gzip fixture, the zstd demo, the raw image inside', () => {
  const gz = readFileSync(new URL('../../imgio/testdata/basic.img.gz', import.meta.url));
  assert.equal(detectFormat(gz.subarray(0, HEADER_SIZE)), 'gzip');
  assert.equal(detectFormat(gunzipSync(gz).subarray(0, HEADER_SIZE)), 'raw');
  const zst = readFileSync(new URL('../../imgio/demo/demo.img.zst', import.meta.url));
  assert.equal(detectFormat(zst.subarray(0, HEADER_SIZE)), 'zstd');
});

test('the opening message names the file, its size as fmt.js prints it, the format and how it is read', () => {
  assert.equal(openingMessage('userdata.img', 8 * 2 ** 30, 'raw'), 'Opening userdata.img (8 GiB, raw): read in place, a piece at a time…');
  assert.match(openingMessage('a.simg', 1536, 'android-sparse'), /^Opening a\.simg \(1\.5 KiB, android-sparse\): read in place through its chunk table…$/);
  for (const f of ['gzip', 'xz', 'zstd']) assert.match(formatNote(f), new RegExp(`unpacked in this browser \\(${f}\\).*memory`));
});

test('isStatic reads the contract\'s transport', () => {
  assert.equal(isStatic({ transport: 'worker' }), true);
  assert.equal(isStatic({ transport: 'websocket' }), false);
  assert.equal(isStatic({}), false);
  assert.equal(isStatic(/** @type {any} */ (undefined)), false);
});

test('pickFile takes exactly one non-empty file', () => {
  const f = { name: 'a.img', size: 10 };
  assert.equal(pickFile([f]).file, f);
  assert.match(pickFile([]).error || '', /drop one F2FS image/);
  assert.match(pickFile(null).error || '', /No file/);
  assert.match(pickFile([f, f, f]).error || '', /one image at a time: 3 files/);
  assert.match(pickFile([{ name: 'e.img', size: 0 }]).error || '', /e\.img is empty/);
});

test('reopenOutcome reloads on the same fingerprint and names both otherwise', () => {
  assert.deepEqual(reopenOutcome('local-00aa', 'local-00aa').reload, true);
  const o = reopenOutcome('local-1111222233334444', 'local-aaaabbbbccccdddd');
  assert.equal(o.reload, false);
  assert.match(o.text, /different file \(fingerprint aaaabbbbccccdddd\).*fingerprint 1111222233334444/);
});

/** A stand-in service worker container answering on the port as static/site/sw.js does. */
function fakeWorker(/** @type {(msg: any) => any} */ answer) {
  /** @type {any[]} */
  const got = [];
  return {
    got,
    controller: {
      postMessage(/** @type {any} */ msg, /** @type {MessagePort[]} */ transfer) {
        got.push(msg);
        assert.equal(transfer.length, 1);
        transfer[0].postMessage(answer(msg));
      },
    },
  };
}

test('openInWorker sends the file with a port and settles on the answer', async () => {
  const file = new Blob([new Uint8Array(8)]);
  const ok = fakeWorker(() => ({ ok: true, id: 'local-0123456789abcdef', name: 'a.img' }));
  assert.deepEqual(await openInWorker(file, ok), { id: 'local-0123456789abcdef', name: 'a.img' });
  assert.equal(ok.got[0].type, 'zrviz-open');
  assert.equal(ok.got[0].file, file);
  const bad = fakeWorker(() => ({ ok: false, error: 'imgio: android-sparse chunk header at 0x28: unknown chunk type (0xcac9)' }));
  await assert.rejects(openInWorker(file, bad), /chunk header at 0x28: unknown chunk type/);
  await assert.rejects(openInWorker(file, { controller: null }), /service worker is not running/);
  await assert.rejects(openInWorker(file, undefined), /reload the page/);
});

/** Lets the page's promise chains run. */
async function settle() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

/** A File stand-in whose first bytes say gzip. */
function gzFile(name = 'img.gz', size = 3 * 2 ** 20) {
  return { name, size, slice: () => new Blob([u8([0x1f, 0x8b, 8])]) };
}

test('initLocalOpen: a pick shows the opening line, then hands over the opened image; failures are said in the live region', async () => {
  const doc = new FakeDocument();
  /** @type {any[]} */
  const opened = [];
  /** @type {(v: any) => void} */
  let finish = () => {};
  /** @type {(e: Error) => void} */
  let fail = () => {};
  initLocalOpen(/** @type {any} */ (doc), {
    open: () => new Promise((res, rej) => { finish = res; fail = rej; }),
    opened: (img, say) => { opened.push(img); say('ok', `Opened ${img.name}`); },
  });
  const input = /** @type {any} */ (doc.getElementById('local-input'));
  input.files = [gzFile()];
  input.value = 'C:\\fakepath\\img.gz';
  input.dispatch('change');
  await settle();
  assert.equal(doc.text('local-msg'), 'Opening img.gz (3 MiB, gzip): unpacked in this browser (gzip): its non-zero blocks are kept in memory…');
  assert.equal(doc.getElementById('local-zone').getAttribute('aria-busy'), 'true');
  // A second pick while busy is ignored.
  input.dispatch('change');
  finish({ id: 'local-0123456789abcdef', name: 'img.gz' });
  await settle();
  assert.deepEqual(opened, [{ id: 'local-0123456789abcdef', name: 'img.gz' }]);
  assert.equal(doc.text('local-msg'), 'Opened img.gz');
  assert.ok(doc.getElementById('local-msg').classList.contains('ok'));
  assert.equal(doc.getElementById('local-zone').getAttribute('aria-busy'), null);
  assert.equal(input.value, '');

  input.dispatch('change');
  await settle();
  fail(new Error('imgio: not an F2FS image'));
  await settle();
  assert.equal(doc.text('local-msg'), 'Could not open img.gz: imgio: not an F2FS image');
  assert.ok(doc.getElementById('local-msg').classList.contains('error'));

  const zone = doc.getElementById('local-zone');
  assert.equal(zone.dispatch('dragover').defaultPrevented, true);
  assert.ok(zone.classList.contains('over'));
  const drop = { type: 'drop', defaultPrevented: false, preventDefault() { this.defaultPrevented = true; }, dataTransfer: { files: [gzFile('a'), gzFile('b')] } };
  for (const fn of zone.listeners.get('drop') || []) fn(drop);
  await settle();
  assert.ok(drop.defaultPrevented && !zone.classList.contains('over'));
  assert.equal(doc.text('local-msg'), 'Drop one image at a time: 2 files were dropped.');

  let clicked = 0;
  input.addEventListener('click', () => { clicked++; });
  doc.getElementById('local-choose').dispatch('click');
  assert.equal(clicked, 1, 'the button opens the picker');
});

test('initLocalMissing reloads on the same file and links the other one otherwise', async () => {
  for (const [got, reloads] of /** @type {[string, number][]} */ ([['local-0123456789abcdef', 1], ['local-ffffffffffffffff', 0]])) {
    const doc = new FakeDocument();
    doc.getElementById('local-missing').dataset.id = 'local-0123456789abcdef';
    let reloaded = 0;
    initLocalMissing(/** @type {any} */ (doc), { reload: () => { reloaded++; } }, async () => ({ id: got, name: 'x.img' }));
    const input = /** @type {any} */ (doc.getElementById('local-input'));
    input.files = [gzFile('x.img')];
    input.dispatch('change');
    await settle();
    assert.equal(reloaded, reloads);
    if (reloads) {
      assert.match(doc.text('local-msg'), /same file: reloading/);
    } else {
      assert.match(doc.text('local-msg'), /different file \(fingerprint ffffffffffffffff\).*It is open now as local-ffffffffffffffff$/);
      const link = /** @type {any} */ (doc.getElementById('local-msg').children.find((c) => typeof c !== 'string'));
      assert.equal(link.href, '/images/local-ffffffffffffffff');
    }
  }
});

test('initLocalOpen opens a file picked before the module was wired', async () => {
  const doc = new FakeDocument();
  const input = /** @type {any} */ (doc.getElementById('local-input'));
  input.files = [gzFile('early.img')];
  /** @type {string[]} */
  const opened = [];
  initLocalOpen(/** @type {any} */ (doc), {
    open: async (f) => ({ id: 'local-0123456789abcdef', name: f.name }),
    opened: (img) => { opened.push(img.name); },
  });
  await settle();
  assert.deepEqual(opened, ['early.img']);
});
