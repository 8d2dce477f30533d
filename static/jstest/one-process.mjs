// The fast tier's runner (scripts/test -short): every *.test.js of this folder imported into one
// Node process, in name order, instead of a process per file as `node --test static/jstest/` does
// (the full run). The 264 tests pass either way; one process saves about 5 CPU-seconds of Node
// start-ups, and the full run still catches a test that leans on another file's globals.
// It is the fast tier's, so the long property walks take fewer random paths (ZRVIZ_JSTEST_SHORT, like
// go test -short): veil.test.js walks 50 of its 150.
import { readdirSync } from 'node:fs';

process.env.ZRVIZ_JSTEST_SHORT = '1';

// A test that fails while it holds a port or a timer would keep this process alive for ever after
// its report: give up after two minutes, saying so (the timer itself keeps nothing alive).
setTimeout(() => {
  console.error('one-process.mjs: still running after 120 s: a test left a port, socket or timer open');
  process.exit(1);
}, 120_000).unref();

const dir = new URL('./', import.meta.url);
for (const f of readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort()) {
  await import(new URL(f, dir).href);
}
