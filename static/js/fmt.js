// Number formatting shared by the pages.

/**
 * Formats a decimal integer string with thousands separators ("9223372036854775807" →
 * "9,223,372,036,854,775,807"), exactly: the server sends byte counts and offsets as strings so
 * they stay exact past 2^53. The one grouping of the front end, the same as Go's units.Group
 * (internal/units/testdata/group.json holds both to the same cases).
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

/**
 * Formats a byte count with a binary unit ("1.5 MiB").
 * @param {number} n
 * @returns {string}
 */
export function bytes(n) {
  if (!(n >= 1024)) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let f = n / 1024;
  let i = 0;
  while (f >= 1024 && i < units.length - 1) { f /= 1024; i++; }
  const s = Number.isInteger(f) ? String(f) : f.toFixed(1).replace(/\.0$/, '');
  return `${s} ${units[i]}`;
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
