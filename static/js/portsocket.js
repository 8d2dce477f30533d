// The player's connection in the static site (zrviz site): the server runs as WebAssembly in this
// origin's service worker (static/site/sw.js), so there is no websocket to open. PortSocket is the
// part of the WebSocket interface ws.js uses (readyState, send, close, and the open, message and
// close events), carried over a MessagePort handed to the worker: the messages are the websocket's,
// byte for byte (docs/protocol.md); only the carrier differs (web/transport.go).

/** WebSocket's readyState values, which PortSocket shares. */
export const CONNECTING = 0;
export const OPEN = 1;
export const CLOSING = 2;
export const CLOSED = 3;

/** How often the page tells the worker it is still there (cmd/zrviz-wasm/port.go portIdle). */
export const PING_EVERY_MS = 10_000;

/**
 * A WebSocket-like connection to the service worker's server.
 */
export class PortSocket extends EventTarget {
  /**
   * @param {string} path the socket's path and query ("/ws/run?…")
   * @param {{postMessage: (msg: any, transfer: any[]) => void}|null} worker the controlling service
   *   worker (navigator.serviceWorker.controller), or null when the page has none
   * @param {{setInterval: typeof setInterval, clearInterval: typeof clearInterval, addEventListener?: (t: string, f: () => void) => void}} [env]
   */
  constructor(path, worker, env = globalThis) {
    super();
    this.readyState = CONNECTING;
    this.env = env;
    if (!worker) {
      // No worker controls this page (a hard reload bypasses it): say why, as a close would.
      queueMicrotask(() => this.closed(1011, 'zrviz is not running in this tab: reload the page'));
      this.port = null;
      this.pinger = 0;
      return;
    }
    const ch = new MessageChannel();
    this.port = ch.port1;
    this.port.onmessage = (ev) => this.receive(ev.data);
    worker.postMessage({ type: 'zrviz-ws', path }, [ch.port2]);
    this.pinger = env.setInterval(() => this.post({ kind: 'ping' }), PING_EVERY_MS);
    // A page that goes away tells the session at once rather than after the worker's idle bound.
    if (env.addEventListener) env.addEventListener('pagehide', () => this.close(1001, 'page closed'));
  }

  /** @param {any} m */
  post(m) {
    if (this.port && this.readyState <= OPEN) this.port.postMessage(m);
  }

  /**
   * Handles a message from the worker: {kind: "open"}, {kind: "message", data}, {kind: "close", code, reason}.
   * @param {any} m
   */
  receive(m) {
    if (!m || this.readyState === CLOSED) return;
    if (m.kind === 'open' && this.readyState === CONNECTING) {
      this.readyState = OPEN;
      this.dispatchEvent(new Event('open'));
    } else if (m.kind === 'message' && this.readyState === OPEN) {
      this.dispatchEvent(new MessageEvent('message', { data: m.data }));
    } else if (m.kind === 'close') {
      this.closed(Number(m.code) || 1006, String(m.reason || ''));
    }
  }

  /** @param {string} data */
  send(data) {
    if (this.readyState !== OPEN) throw new Error('PortSocket is not open');
    this.post({ kind: 'message', data });
  }

  /**
   * @param {number} [code]
   * @param {string} [reason]
   */
  close(code = 1000, reason = '') {
    if (this.readyState >= CLOSING) return;
    this.post({ kind: 'close', code, reason });
    this.closed(code, reason);
  }

  /**
   * @param {number} code
   * @param {string} reason
   */
  closed(code, reason) {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    if (this.pinger) this.env.clearInterval(this.pinger);
    if (this.port) this.port.close();
    const ev = new Event('close');
    Object.assign(ev, { code, reason, wasClean: code === 1000 });
    this.dispatchEvent(ev);
  }
}
