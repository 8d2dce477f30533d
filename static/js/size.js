// Byte counts and offsets as people type them, in the one grammar of internal/units.ParseSize (its
// doc comment has it whole): decimal, grouped as the pages print counts ("2,097,152"), 0x hex, or a
// number with a binary unit ("64MiB", "1.5 GiB", "4k"); a leading "-" as the server reads it. Held
// to ParseSize by static/jstest/testdata/units.json (written by go test ./internal/units), so a form
// takes exactly what the server and the CLI take. Kept as decimal strings and BigInt arithmetic:
// Number() would round past 2^53.

/** Unit shifts by lower-case name: units.ParseSize's table. */
const UNITS = new Map(/** @type {Array<[string, bigint]>} */ ([
  ['b', 0n],
  ['k', 10n], ['kb', 10n], ['kib', 10n],
  ['m', 20n], ['mb', 20n], ['mib', 20n],
  ['g', 30n], ['gb', 30n], ['gib', 30n],
  ['t', 40n], ['tb', 40n], ['tib', 40n],
  ['p', 50n], ['pb', 50n], ['pib', 50n],
  ['e', 60n], ['eb', 60n], ['eib', 60n],
]));

const MAX = (1n << 63n) - 1n;
const MIN = -(1n << 63n);

/** Blanks are spaces and tabs only, as in Go: the two languages disagree on other spaces. */
const trimBlanks = (/** @type {string} */ s) => s.replace(/^[ \t]+|[ \t]+$/g, '');

/**
 * Reads a byte offset or length: "524288", "2,097,152", "0x1000", "64MiB", "1.5 GiB", "4k", "-1".
 * @param {string} s
 * @returns {string} the count in decimal digits, or "" when units.ParseSize refuses s
 */
export function byteCount(s) {
  let t = trimBlanks(String(s ?? ''));
  const neg = t.startsWith('-');
  if (neg) t = t.slice(1);
  /** @type {bigint} */
  let v;
  if (/^0x/i.test(t)) {
    if (!/^0x[0-9a-f]+$/i.test(t)) return '';
    v = BigInt(`0x${t.slice(2)}`);
  } else {
    let shift = 0n;
    const u = /[a-z]+$/i.exec(t);
    if (u) {
      const sh = UNITS.get(u[0].toLowerCase());
      if (sh === undefined) return '';
      t = trimBlanks(t.slice(0, u.index));
      shift = sh;
    }
    const m = /^(?:(\d+|\d{1,3}(?:,\d{3})+)(?:\.(\d+))?|\.(\d+))$/.exec(t);
    if (!m) return '';
    const whole = (m[1] || '0').replace(/,/g, '');
    const frac = m[2] ?? m[3] ?? '';
    const scaled = BigInt(whole + frac) << shift;
    const den = 10n ** BigInt(frac.length);
    if (scaled % den !== 0n) return ''; // not a whole number of bytes
    v = scaled / den;
  }
  if (neg) v = -v;
  return v >= MIN && v <= MAX ? v.toString() : '';
}
