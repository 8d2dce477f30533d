// The player page's entry module: starts the player (player.js) on the page with the parts beyond
// one run — a room (room.js), a kernel trace (trace.js), the operations before this one and the
// next (chain.js), links into the block inspector (links.js).
import { initRun } from './player.js';
import { RoomUI, presenterRoomParams } from './room.js';
import { TraceUI, opsKey, traceKept } from './trace.js';
import { ChainUI } from './chain.js';
import { SlotLinks, blockURL } from './links.js';
import { SidePanels } from './sidepanel.js';
import { WritebackUI } from './writeback.js';
import { AfterCheckUI } from './aftercheck.js';
import { initNext } from './nextpanel.js';
import { initRunForm } from './runform.js';

async function main() {
  const root = document.getElementById('player');
  if (!root) return;
  initRunForm(document);
  const follow = root.dataset.follow || '';
  /** @type {Partial<import('./ws.js').RunParams>} */
  const params = {};
  if (follow) {
    params.follow = follow;
  } else {
    const q = new URLSearchParams(location.search);
    params.trace = q.get('trace') || '';
    params.traceOp = q.get('traceOp') || '';
    const [kept, room] = await Promise.all([
      params.trace ? traceKept(root.dataset.image || '', params.trace) : true, presenterRoomParams(document)]);
    if (!kept) {
      document.body.dataset.traceGone = params.trace;
      params.trace = '';
      params.traceOp = '';
      const u = new URLSearchParams(location.search);
      u.delete('trace');
      u.delete('traceOp');
      history.replaceState(null, '', `${location.pathname}?${u}${location.hash}`);
    }
    Object.assign(params, room);
  }
  const room = new RoomUI(document, follow);
  const trace = new TraceUI(document);
  const chain = new ChainUI(document);
  const links = new SlotLinks(document);
  const panels = new SidePanels(document);
  const writeback = new WritebackUI(document, panels);
  const after = new AfterCheckUI(document, panels);
  /** @type {import('./player.js').PlayerController|null} */
  let ctl = null;
  ctl = initRun(document, {
    params,
    onHello(h) { room.hello(h); trace.hello(h); chain.hello(h); links.schedule(); writeback.hello(h); after.hello(h); },
    onFrame(f) { room.frame(); trace.frame(f); chain.frame(); links.schedule(); },
    onMessage(m) { room.message(m); },
    callLog: trace.callLog(() => (ctl ? ctl.state.info.image || '' : ''), blockURL),
  });
  if (!ctl) return;
  initNext(document);
  room.attach(ctl);
  trace.attach(ctl);
  links.attach(ctl);
  after.attach(ctl);
  chain.attach(ctl, () => {
    const t = trace.info;
    if (!t) return null;
    let ops = 0;
    try { ops = Number(sessionStorage.getItem(opsKey(t.id)) || 0); } catch { /* storage refused */ }
    return { id: t.id, op: t.op, ops };
  });
}

main();
