// Number formatting shared by the pages.

/**
 * Formats a decimal integer string with thousands separators ("9223372036854775807" →
 * "9,223,372,036,854,775,807"), exactly: the server sends byte counts and offsets as strings so
 * they stay exact past 2^53. The one grouping of the front end, the same as Go's units.Group
 * (static/jstest/testdata/units.json, written by go test ./internal/units, holds both to the
 * same cases).
 * @param {string|number} s
 * @returns {string}
 */
export function groupDigits(s) {
  const t = String(s);
  const neg = t.startsWith('-');
  const d = neg ? t.slice(1) : t;
  let out = '';
  for (let i = 0; i < d.length; i++) {
    if (i > 0 && (d.length - i) % 3 === 0) out += ',';
    out += d[i];
  }
  return neg ? `-${out}` : out;
}

/**
 * Formats an integer with thousands separators (16384 → "16,384"), truncating a fraction.
 * @param {number} n
 * @returns {string}
 */
export function int(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  // By hand, not toLocaleString: that goes through Intl, and the player formats dozens of
  // numbers every frame.
  return groupDigits(String(Math.trunc(n)));
}

const UNIT_NAMES = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/**
 * Formats a byte count exactly, as Go's units.Bytes does (held to it by
 * static/jstest/testdata/units.json): the largest binary unit that shows it in at most two
 * decimals, else grouped bytes — 4096 → "4 KiB", 1572864 → "1.5 MiB", 1052672 → "1,028 KiB",
 * 1000003 → "1,000,003 B". Never rounded, so a size the page prints is the size the server
 * printed and reads back the same (size.js). For a count that changes as it is watched, see
 * approxBytes.
 * @param {number|string|bigint} n a whole number of bytes; a decimal string keeps it exact past 2^53
 * @returns {string}
 */
export function bytes(n) {
  let v = BigInt(typeof n === 'number' ? Math.trunc(n) : n);
  const sign = v < 0n ? '-' : '';
  if (v < 0n) v = -v;
  for (let i = UNIT_NAMES.length - 1; i > 0; i--) {
    const u = 1n << BigInt(10 * i);
    if (v < u || (v * 100n) % u !== 0n) continue;
    const h = (v * 100n) / u;
    const f = h % 100n;
    const frac = f === 0n ? '' : f % 10n === 0n ? `.${f / 10n}` : `.${String(f).padStart(2, '0')}`;
    return `${sign}${groupDigits(String(h / 100n))}${frac} ${UNIT_NAMES[i]}`;
  }
  return `${sign}${groupDigits(String(v))} B`;
}

/**
 * Formats a byte count rounded to one decimal of its unit ("12.3 MiB"), for progress that moves
 * while it is read (an upload's bytes sent): an exact count there would be a wall of digits
 * changing every frame. Never for a size the server also prints; that is bytes.
 * @param {number} n
 * @returns {string}
 */
export function approxBytes(n) {
  if (!(n >= 1024)) return `${n} B`;
  let f = n / 1024;
  let i = 1;
  while (f >= 1024 && i < UNIT_NAMES.length - 1) { f /= 1024; i++; }
  const s = Number.isInteger(f) ? String(f) : f.toFixed(1).replace(/\.0$/, '');
  return `${s} ${UNIT_NAMES[i]}`;
}

/**
 * Formats a rate in steps per second ("2,000 steps/s", "0.5 steps/s").
 * @param {number} n
 * @returns {string}
 */
export function rate(n) {
  return `${n < 1 ? n : int(n)} steps/s`;
}

/**
 * Shows a count in an element as the page shows every count, grouped ("16,384"), with its plain
 * digits in data-count for scripts and tests; "–" and no data-count when there is no such count
 * (a mode the run does not have).
 * @param {{textContent: string|null, dataset: Record<string, string|undefined>}} el
 * @param {number|null} n
 */
export function showCount(el, n) {
  const t = n === null ? '–' : int(n);
  if (el.textContent !== t) el.textContent = t;
  const raw = n === null ? undefined : String(n);
  if (el.dataset.count !== raw) {
    if (raw === undefined) delete el.dataset.count; else el.dataset.count = raw;
  }
}
