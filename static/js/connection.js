// The player's side of the run's socket: what each server message does to the model (state.js),
// the tour and quiz (tourquiz.js) and the view's options, and what the page asks the server for in
// return (the initial map's next page, the end a permalink asked for, the step of a question a
// quiz holds the view at). The DOM is left to the callbacks. Tested in static/jstest/connection.test.js
// with a model and a recorded send.

/**
 * @typedef {object} ConnectionContext
 * @property {import('./state.js').RunState} st
 * @property {import('./tourquiz.js').TourQuiz} tq
 * @property {import('./render.js').ViewOptions} view
 * @property {{mode: string, quiz?: boolean}} params the socket's parameters (the mode follows the hello's; quiz: the
 *   socket was opened with quiz=1)
 * @property {(m: object) => void} send sends on the socket
 * @property {() => boolean} takeRunEnd true once if the page was asked to open at the run's end
 * @property {() => boolean} presenter the page presents a room (it hears answers, not verdicts)
 * @property {(h: any) => void} shown writes what a hello changes on the page
 * @property {() => void} redraw the canvases and panels must be drawn again
 * @property {() => void} changed the presenter's state changed (rooms mirror it)
 * @property {(text: string, fatal: boolean) => void} notify shows a server error
 * @property {(s: string) => void} status the socket's status
 * @property {{onHello?: (h: any) => void, onFrame?: (f: any) => void, onMessage?: (m: any) => void}} hooks
 */

/**
 * Returns the socket's handlers (ws.js RunSocket) for a player.
 * @param {ConnectionContext} c
 * @returns {{hello: (h: any) => void, other: (m: any) => void, frame: (f: any) => void, error: (e: any) => void, status: (s: string) => void}}
 */
export function playerHandlers(c) {
  const { st, tq, view } = c;
  const morePages = () => { if (!st.initialComplete) c.send({ type: 'initial', from: st.initialNext }); };
  // A quiz holds the view at an unanswered question: a step past it, however reached, seeks back.
  const hold = () => {
    const step = tq.hold(st.stops, st.step, view.quiz, st.playing);
    if (step >= 0) c.send({ type: 'seek', step });
  };
  return {
    hello(h) {
      const before = st.ready ? st.mode : null;
      st.hello(h);
      c.params.mode = st.mode;
      tq.hello(before, st.mode, st.stops, st.step, h.score);
      tq.heldBy(st.stops, st.hold, !!c.params.quiz);
      view.colour.geometry = st.geometry;
      view.colour.segTypes = st.segTypes;
      view.colour.runs = st.runs;
      view.version++;
      if (c.takeRunEnd()) c.send({ type: 'end' });
      else hold();
      morePages();
      c.shown(h);
      c.redraw();
      if (c.hooks.onHello) c.hooks.onHello(h);
    },
    other(m) {
      if (m.type === 'initial') {
        st.addInitial(m);
        if (!st.initialComplete) morePages();
        else if (view.colour.runs !== st.runs) { view.colour.runs = st.runs; view.version++; }
        c.redraw();
      } else if (m.type === 'hold') {
        if (!st.ready) return;
        st.applyHold(m);
        tq.heldBy(st.stops, st.hold, !!c.params.quiz);
        c.shown(m);
        c.redraw();
        c.changed();
      } else if (m.type === 'quiz') {
        tq.verdict(m, c.presenter());
        c.changed();
        if (c.hooks.onMessage) c.hooks.onMessage(m);
      } else if (c.hooks.onMessage) {
        c.hooks.onMessage(m);
      }
    },
    frame(f) {
      st.frame(f, performance.now());
      hold();
      c.redraw();
      if (c.hooks.onFrame) c.hooks.onFrame(f);
    },
    error(e) {
      c.notify(e.error || 'error', !!e.fatal);
      if (c.hooks.onMessage) c.hooks.onMessage({ ...e, type: 'error' });
    },
    status(s) { c.status(s); },
  };
}
