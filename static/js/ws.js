// The player's websocket: connects to /ws/run, reconnects with backoff and
// resumes at the step last shown (docs/protocol.md, version 1).

export const PROTOCOL_VERSION = 1;

/**
 * @typedef {object} RunParams
 * @property {string} image
 * @property {string} path
 * @property {number} offset
 * @property {number} length
 * @property {string} mode
 * @property {boolean} keepSize
 * @property {number} step
 */

/**
 * @typedef {object} Handlers
 * @property {(msg: any) => void} hello
 * @property {(msg: any) => void} frame
 * @property {(msg: any) => void} error
 * @property {(status: string) => void} status "connecting", "open", "retrying in 2 s", "closed: ..."
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
    /** @type {WebSocket|null} */
    this.ws = null;
    this.delay = 500;
    this.stopped = false;
    /** @type {string[]} controls sent while not connected, replayed on open */
    this.queue = [];
    this.timer = 0;
  }

  /** @returns {string} the websocket URL for the current parameters */
  url() {
    const p = this.params;
    const q = new URLSearchParams({
      image: p.image, path: p.path, offset: String(p.offset), length: String(p.length),
      mode: p.mode, keepSize: String(p.keepSize), step: String(p.step),
    });
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${proto}//${location.host}/ws/run?${q}`;
  }

  /** Opens the connection. */
  connect() {
    if (this.stopped) return;
    this.on.status('connecting');
    const ws = new WebSocket(this.url());
    this.ws = ws;
    let gotHello = false;
    ws.addEventListener('open', () => this.on.status('open'));
    ws.addEventListener('message', (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.v !== PROTOCOL_VERSION) {
        this.stop();
        this.on.error({ error: `server speaks protocol v${msg.v}, this page v${PROTOCOL_VERSION}: reload the page`, fatal: true });
        return;
      }
      if (msg.type === 'hello') {
        gotHello = true;
        this.delay = 500;
        this.on.hello(msg);
        for (const m of this.queue.splice(0)) ws.send(m);
      } else if (msg.type === 'frame') {
        this.on.frame(msg);
      } else if (msg.type === 'error') {
        this.on.error(msg);
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
      const wait = this.delay;
      this.delay = Math.min(8000, this.delay * 2);
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
    const s = JSON.stringify(msg);
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(s);
    else if (this.queue.length < 16) this.queue.push(s);
  }

  /** Reconnects after stop, at the step last shown. */
  resume() {
    if (!this.stopped) return;
    this.stopped = false;
    this.delay = 500;
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
