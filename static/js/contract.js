// The constants the page shares with the server, read once from the contract every page carries
// (web/contract.go renders it as <script type="application/json" id="zrviz-contract">): the mode
// names, the log types, the segment classes, the slot values that are not addresses, the segment
// number formula, the run query's field names and the calls a player plays. No other module restates them; they import them
// from here. Node tests install the copy the pages render (static/jstest/contract.fixture.js).

/**
 * @typedef {object} Contract
 * @property {{order: string[], perBlock: string, batched: string, both: string}} modes the engines,
 *   per-block first as the protocol orders them, and "both" as the query names the pair
 * @property {string[]} logTypes the six logs' names by the SIT's type number (hot data … cold node)
 * @property {{free: string, dirty: string, full: string, prefree: string, current: string}} segmentClasses
 *   core.SegClass's names, in core's order
 * @property {Record<string, string>} classLetters each class by the letter gc's timeline sends
 * @property {{null: number, new: number, compress: number}} addr NULL_ADDR, NEW_ADDR, COMPRESS_ADDR
 * @property {{base: string, perSegment: string}} segment the geometry fields of the segment formula
 * @property {{path: string, offset: string, length: string, keepSize: string, mode: string, before: string, op: string, size: string}} query
 *   the run query's field names (op: the played call, size: a truncate's new size)
 * @property {Record<string, string>} ops the calls a player plays by kind, as the query's op and
 *   the ops language name them (request.Playable): ops.zero is "zero"
 * @property {Played[]} played each call a player plays, its declaration's facet (request.Played), in
 *   the registry's order: its ops line, its query and its form are built from it
 * @property {string} transport how the player reaches the server: "websocket", or "worker" in the
 *   static site, whose server is this origin's service worker (portsocket.js)
 */

/**
 * @typedef {object} Played one call a player plays (web/contract.go contractPlayed, request.Played)
 * @property {string} kind the query's op and the ops line's first word
 * @property {string} label the pages' words ("punch hole")
 * @property {string} range "offset-length" (OFFSET LENGTH) or "size" (SIZE, the request's offset)
 * @property {string[]} fields the query fields it reads besides path and mode, in its words' order
 * @property {boolean} keepSize keep_size is a choice
 * @property {boolean} keepsSize i_size never changes (FALLOC_FL_KEEP_SIZE always)
 * @property {boolean} freesNodes it frees node blocks (truncate_node)
 * @property {boolean} skips it skips addresses that are not valid
 * @property {string} perDnode the kernel function it runs once per dnode chunk
 * @property {boolean} compare a side of the compare page
 * @property {boolean} sandbox the sandbox plays it
 */

/** @type {Contract|null} */
let current = null;

/**
 * Installs a contract instead of the page's: for the node tests, which have no page. Call it
 * before any module that reads the contract when it loads.
 * @param {Contract} c
 */
export function installContract(c) {
  current = deepFreeze(c);
}

/**
 * The page's contract.
 * @returns {Contract}
 */
export function contract() {
  if (current) return current;
  const el = globalThis.document?.getElementById('zrviz-contract');
  if (!el) throw new Error('zrviz: the page carries no contract (script#zrviz-contract, web/contract.go)');
  current = deepFreeze(JSON.parse(el.textContent || ''));
  return /** @type {Contract} */ (current);
}

/**
 * @template T
 * @param {T} o
 * @returns {T}
 */
function deepFreeze(o) {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/**
 * The segment of main-area block addr: ⌊(addr − base) / blocks per segment⌋ over the geometry the
 * hello sent, the fields as the contract names them (core's segnoOf, the kernel's GET_SEGNO).
 * @param {Record<string, number>} g the geometry
 * @param {number} addr
 * @returns {number}
 */
export function segnoOf(g, addr) {
  const s = contract().segment;
  return Math.floor((addr - g[s.base]) / g[s.perSegment]);
}

/**
 * The block's offset in its segment (GET_BLKOFF_FROM_SEG0).
 * @param {Record<string, number>} g the geometry
 * @param {number} addr
 * @returns {number}
 */
export function blockOffset(g, addr) {
  const s = contract().segment;
  return addr - g[s.base] - segnoOf(g, addr) * g[s.perSegment];
}

/**
 * The first block of segment segno.
 * @param {Record<string, number>} g the geometry
 * @param {number} segno
 * @returns {number}
 */
export function segmentStart(g, segno) {
  const s = contract().segment;
  return g[s.base] + segno * g[s.perSegment];
}

/**
 * Whether the page is the static site's (zrviz site), whose server is this origin's service worker:
 * the contract's transport is "worker" there (web/contract.go transportWorker), "websocket" from the
 * server.
 * @param {{transport?: string}} [c] the page contract
 * @returns {boolean}
 */
export function isStatic(c = contract()) {
  return c?.transport === 'worker';
}

/**
 * The declaration of the played call kind (absent or "": a zero, the query's default), or null
 * when kind is not a played call.
 * @param {string} [kind]
 * @returns {Played|null}
 */
export function playedOf(kind) {
  const k = kind || contract().ops.zero;
  return contract().played.find((p) => p.kind === k) || null;
}
