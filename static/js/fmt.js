// Number formatting shared by the pages.

/**
 * Formats an integer with thousands separators (16384 → "16,384").
 * @param {number} n
 * @returns {string}
 */
export function int(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  // By hand: toLocaleString goes through Intl, and the player formats
  // dozens of numbers every frame.
  const v = Math.trunc(n);
  const s = String(Math.abs(v));
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (i > 0 && (s.length - i) % 3 === 0) out += ',';
    out += s[i];
  }
  return v < 0 ? `-${out}` : out;
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
