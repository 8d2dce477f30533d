// Byte counts as people type them, read as the server reads them (internal/units.ParseSize):
// decimal digits with separators, 0x hex, or a number with a binary unit ("64MiB", "1.5 GiB", "4k").
// Kept as decimal strings and BigInt arithmetic: Number() would round past 2^53.

/** Binary units by suffix, lower case, longest first: the server's table. */
const UNITS = /** @type {Array<[string, number]>} */ ([
  ['kib', 10], ['mib', 20], ['gib', 30], ['tib', 40], ['pib', 50], ['eib', 60],
  ['kb', 10], ['mb', 20], ['gb', 30], ['tb', 40], ['pb', 50], ['eb', 60],
  ['k', 10], ['m', 20], ['g', 30], ['t', 40], ['p', 50], ['e', 60],
  ['b', 0],
]);

const MAX = (1n << 63n) - 1n;

/**
 * Reads a byte offset or length: "524288", "2,097,152", "0x1000", "64MiB", "1.5 GiB", "4k".
 * @param {string} s
 * @returns {string} the count in decimal digits, or "" when s is not a whole, non-negative number
 *   of bytes that fits in an int64
 */
export function byteCount(s) {
  let t = String(s ?? '').trim().toLowerCase();
  if (t === '') return '';
  /** @type {bigint} */
  let v;
  if (t.startsWith('0x')) {
    if (!/^0x[0-9a-f]+$/.test(t)) return '';
    v = BigInt(t);
  } else {
    let shift = 0n;
    for (const [u, sh] of UNITS) {
      if (t.endsWith(u)) {
        t = t.slice(0, -u.length).trim();
        shift = BigInt(sh);
        break;
      }
    }
    t = t.replace(/[,_\s]/g, '');
    const m = /^(\d+)(?:\.(\d+))?$/.exec(t) || /^()\.(\d+)$/.exec(t);
    if (!m) return '';
    const frac = m[2] || '';
    const scaled = BigInt((m[1] || '0') + frac) << shift;
    const den = 10n ** BigInt(frac.length);
    if (scaled % den !== 0n) return ''; // not a whole number of bytes
    v = scaled / den;
  }
  return v <= MAX ? v.toString() : '';
}
