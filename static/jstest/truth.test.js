// The page's state is a function of (run, mode, step): replays navigation paths recorded from the
// real server (static/jstest/testdata/truth.json, written by go test ./web -run
// TestWriteTruthVectors -truth-vectors) through state.js, and compares the model after every
// control with the model of a page loaded fresh at the same step (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { RunState } from '../js/state.js';

/** Feeds server messages to a model, as player.js does. */
function feed(st, msgs) {
  for (const m of msgs) {
    if (m.type === 'hello') st.hello(m);
    else if (m.type === 'initial') st.addInitial(m);
    else if (m.type === 'frame') st.frame(m, 0);
  }
}

const hex = (a) => Array.from(a, (b) => b.toString(16).padStart(2, '0')).join('');

/** What the panels show of a model. */
function view(st) {
  const per = {};
  for (const m of st.modes) {
    const ms = st.per[m];
    per[m] = {
      step: ms.step, done: ms.done, errno: ms.errno, message: ms.message, returnedBy: ms.returnedBy, cursor: ms.cursor,
      chunk: ms.chunk, pending: ms.pending, counters: ms.counters, narration: ms.narration, calls: ms.calls,
      sit: st.sitTotals(m),
      segments: [...ms.segments.values()].sort((a, b) => a.segno - b.segno)
        .map((s) => [s.segno, s.valid, s.status, hex(s.map), s.validBefore, s.statusBefore, hex(s.mapBefore)]),
    };
  }
  return {
    step: st.step, mode: st.mode, per, slots: Array.from(st.slots), bad: [...st.bad].sort((a, b) => a - b),
    activity: st.segmentsByActivity(), stop: st.stopAt(st.step), slotStates: st.slotStates(), cursor: st.cursor(),
    runs: st.runs ? Array.from(st.runs.starts) : null, outcome: st.outcome,
  };
}

test('every step reached by any path shows what a fresh load of the step shows', async () => {
  const data = JSON.parse(await readFile(new URL('./testdata/truth.json', import.meta.url), 'utf8'));
  assert.ok(data.paths.length >= 8);
  let compared = 0;
  const fullBack = new Set();
  for (const [i, p] of data.paths.entries()) {
    const st = new RunState();
    feed(st, p.start);
    for (const [k, mv] of p.moves.entries()) {
      feed(st, mv.got);
      assert.equal(st.step, mv.step, `path ${i} move ${k}`);
      const fresh = new RunState();
      feed(fresh, mv.fresh);
      assert.deepEqual(view(st), view(fresh), `path ${i} (${p.run}) after ${JSON.stringify(p.moves.slice(0, k + 1).map((m) => m.control))}`);
      compared++;
      if (mv.control.type === 'reset' || (mv.control.type === 'step' && mv.control.n < 0)) fullBack.add(p.run);
    }
  }
  assert.ok(compared >= 80, `${compared} steps compared`);
  assert.ok(fullBack.size >= 2, 'paths go back');
});
