// The player's websocket: connects to /ws/run, reconnects with backoff and
// resumes at the step last shown (docs/protocol.md, version 2).
import { setRunQuery } from './links.js';
import { contract, isStatic } from './contract.js';
import { PortSocket, OPEN } from './portsocket.js';

export const PROTOCOL_VERSION = 2;

/** Attempts in a row that never got a hello before the socket gives up: a run
 * the server refuses (a bad parameter, a deleted image) is not mended by retrying. */
export const MAX_FAILED_STARTS = 4;

/**
 * @typedef {object} RunParams
 * @property {string} image
 * @property {string} path
 * @property {string} [op] the played call (contract().played): "zero" (absent), "punch", "truncate" (a size rule's offset is the new size)
 * @property {string} offset decimal, as the page gave it: never through Number()
 * @property {string} length decimal, or "" for the rest of the file
 * @property {string} mode
 * @property {boolean} keepSize
 * @property {string[]} before operations run first (ops lines)
 * @property {number} step
 * @property {string} pace
 * @property {string} [sandbox] a sandbox slot list: then image and path are not used
 * @property {string} [trace] an attached kernel trace's id (POST /api/images/{id}/traces)
 * @property {string} [traceOp] which of its operations to compare (1-based), "" for the server's choice
 * @property {string} [room] the room this page presents (with token: a reloaded presenter takes it back)
 * @property {string} [token] the presenter's token (sessionStorage only, never in a page URL)
 * @property {string} [follow] a room's code: the socket is /ws/follow?code= and mirrors its presenter
 * @property {boolean} [quiz] the quiz is on: the server holds the view at the first question not
 *   answered and sends nothing that answers it (web/quizhold.go)
 * @property {string} [answered] with quiz: the stops whose questions this page has its verdicts for
 *   ("0,3"), which a reconnection does not ask again
 */

/** Controls a follower's socket may send (docs/protocol.md, "Rooms"): the rest drive the room. */
export const FOLLOWER_CONTROLS = new Set(['initial', 'answer']);

/**
 * Returns the query of /ws/run for params.
 * @param {RunParams} p
 * @returns {URLSearchParams}
 */
export function runQuery(p) {
  if (p.sandbox) {
    const q = new URLSearchParams({ sandbox: p.sandbox, [contract().query.mode]: p.mode, step: String(p.step) });
    // A sandbox list may be punched (web/runs.go resolveSandbox).
    if (p.op && p.op !== contract().ops.zero) q.set(contract().query.op, p.op);
    if (p.pace) q.set('pace', p.pace);
    quizQuery(q, p);
    return q;
  }
  const q = setRunQuery(new URLSearchParams({ image: p.image }), p);
  q.set('step', String(p.step));
  if (p.pace) q.set('pace', p.pace);
  if (p.trace) {
    q.set('trace', p.trace);
    if (p.traceOp) q.set('traceOp', p.traceOp);
  }
  if (p.room && p.token) {
    q.set('room', p.room);
    q.set('token', p.token);
  }
  quizQuery(q, p);
  return q;
}

/**
 * Adds the quiz to a socket's query: quiz=1, and the questions already answered.
 * @param {URLSearchParams} q
 * @param {RunParams} p
 */
function quizQuery(q, p) {
  if (!p.quiz) return;
  q.set('quiz', '1');
  if (p.answered) q.set('answered', p.answered);
}

/**
 * Returns the socket's path and query: /ws/follow?code= for a follower, else /ws/run?….
 * @param {RunParams} p
 * @returns {string}
 */
export function socketPath(p) {
  if (p.follow) return `/ws/follow?${new URLSearchParams({ code: p.follow })}`;
  return `/ws/run?${runQuery(p)}`;
}

/**
 * The backoff before reconnect attempt k (0-based): 0.5 s doubling to 8 s.
 * @param {number} k
 * @returns {number} milliseconds
 */
export function backoff(k) {
  return Math.min(8000, 500 * 2 ** Math.max(0, k));
}

/**
 * @typedef {object} Handlers
 * @property {(msg: any) => void} hello
 * @property {(msg: any) => void} frame
 * @property {(msg: any) => void} error
 * @property {(status: string) => void} status "connecting", "open", "retrying in 2 s", "closed: ..."
 * @property {(msg: any) => void} [other] any other message ("initial" pages, "quiz" verdicts)
 */

/**
 * A reconnecting connection to one run.
 */
export class RunSocket {
  /**
   * @param {RunParams} params
   * @param {Handlers} on
   * @param {() => number} resumeStep the step to resume at after a drop
   */
  constructor(params, on, resumeStep) {
    this.params = params;
    this.on = on;
    this.resumeStep = resumeStep;
    /** @type {WebSocket|PortSocket|null} */
    this.ws = null;
    this.attempt = 0;
    /** attempts in a row without a hello */
    this.failedStarts = 0;
    this.stopped = false;
    /** @type {string[]} controls sent while not connected, replayed on open */
    this.queue = [];
    this.timer = 0;
  }

  /** @returns {string} the socket's path and query for the current parameters */
  path() {
    return socketPath(this.params);
  }

  /** @returns {string} the websocket URL for the current parameters */
  url() {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${proto}//${location.host}${this.path()}`;
  }

  /** Opens the connection. */
  connect() {
    if (this.stopped) return;
    this.on.status('connecting');
    // The static site has no websocket: its server is this origin's service worker (portsocket.js).
    const ws = isStatic()
      ? new PortSocket(this.path(), navigator.serviceWorker ? navigator.serviceWorker.controller : null)
      : new WebSocket(this.url());
    this.ws = ws;
    let gotHello = false;
    ws.addEventListener('open', () => this.on.status('open'));
    ws.addEventListener('message', (ev) => {
      // A socket this page has left (stop, then a new connection) may still deliver what was in
      // flight: it belongs to the old run.
      if (this.ws !== ws) return;
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.v !== PROTOCOL_VERSION) {
        this.stop();
        this.on.error({ error: `server speaks protocol v${msg.v}, this page v${PROTOCOL_VERSION}: reload the page`, fatal: true });
        return;
      }
      if (msg.type === 'hello') {
        gotHello = true;
        this.attempt = 0;
        this.failedStarts = 0;
        this.on.hello(msg);
        for (const m of this.queue.splice(0)) ws.send(m);
      } else if (msg.type === 'frame') {
        this.on.frame(msg);
      } else if (msg.type === 'error') {
        this.on.error(msg);
      } else if (this.on.other) {
        this.on.other(msg);
      }
    });
    ws.addEventListener('close', (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      // 1000 is a normal end; 1008 (policy) and a refused upgrade before
      // any hello are not helped by retrying at once, but a dropped
      // network or a restarted server is: retry with backoff either way,
      // unless the page asked us to stop.
      if (this.stopped) return;
      if (ev.code === 1000) { this.on.status('closed'); return; }
      if (!gotHello && ++this.failedStarts >= MAX_FAILED_STARTS) {
        this.stopped = true;
        this.on.status('could not start the run');
        this.on.error({ error: 'the server refused this run several times; check the link, or reload the page', fatal: true });
        return;
      }
      const wait = backoff(this.attempt++);
      this.on.status(`reconnecting in ${(wait / 1000).toFixed(1)} s${gotHello ? '' : ' (could not start the run)'}`);
      this.params.step = this.resumeStep();
      this.timer = window.setTimeout(() => this.connect(), wait);
    });
  }

  /**
   * Sends a control message ({type: "play"} and so on).
   * @param {object} msg
   */
  send(msg) {
    // A follower's page does not drive: the server would refuse it anyway.
    if (this.params.follow && !FOLLOWER_CONTROLS.has(/** @type {any} */ (msg).type)) return;
    const s = JSON.stringify(msg);
    if (this.ws && this.ws.readyState === OPEN) this.ws.send(s);
    else if (this.queue.length < 16) this.queue.push(s);
  }

  /** Reconnects after stop, at the step last shown. */
  resume() {
    if (!this.stopped) return;
    this.stopped = false;
    this.attempt = 0;
    this.failedStarts = 0;
    this.params.step = this.resumeStep();
    this.connect();
  }

  /** Closes the connection until resume. */
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close(1000, 'page closed');
    this.ws = null;
  }
}
