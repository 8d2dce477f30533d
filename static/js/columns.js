// Which slots each column of an aggregated strip shows. A strip draws n
// slots in cols ≤ n columns (one per device pixel); column x shows slots
// [columnStart(x), columnStart(x + 1)), so the columns partition the
// slots: every slot is drawn in exactly one column and none is dropped.
//
// The bounds multiply before they divide: x·n and (i+1)·cols are exact
// integers (well below 2^53 for any range the player draws), so float
// rounding cannot move a bound across a slot, as it can with x·(n/cols).

/**
 * Returns the first slot of column x; columnStart(cols, n, cols) = n.
 * @param {number} x column, 0 ≤ x ≤ cols
 * @param {number} n slots in the strip
 * @param {number} cols columns, 1 ≤ cols ≤ n
 * @returns {number}
 */
export function columnStart(x, n, cols) {
  return x >= cols ? n : Math.floor((x * n) / cols);
}

/**
 * Returns the column showing slot i: the last column starting at or
 * before i.
 * @param {number} i slot, 0 ≤ i < n
 * @param {number} n
 * @param {number} cols 1 ≤ cols ≤ n
 * @returns {number}
 */
export function columnOf(i, n, cols) {
  // columnStart(x) ≤ i  ⇔  x·n < (i+1)·cols  ⇔  x < (i+1)·cols / n.
  return Math.min(cols - 1, Math.max(0, Math.ceil(((i + 1) * cols) / n) - 1));
}

/**
 * Returns the columns [x0, x1) that draw slots [a, b) of a strip of n slots
 * in cols columns, for any n and cols: with n ≥ cols, the columns showing
 * slot a through slot b − 1 (columnOf); with fewer slots than columns, each
 * slot gets its own columns [columnStart(i, cols, n), columnStart(i + 1,
 * cols, n)), the same partition with the roles swapped. So slots that
 * follow each other get columns that follow each other, with no gap and no
 * overlap, and every slot at least one column.
 * @param {number} a first slot, 0 ≤ a < b
 * @param {number} b end slot, a < b ≤ n
 * @param {number} n slots in the strip, ≥ 1
 * @param {number} cols columns, ≥ 1
 * @returns {[number, number]}
 */
export function spanColumns(a, b, n, cols) {
  if (n >= cols) return [columnOf(a, n, cols), columnOf(b - 1, n, cols) + 1];
  return [columnStart(a, cols, n), columnStart(b, cols, n)];
}

/**
 * Returns the slot column x shows (the first of its slots when it shows
 * several): the inverse of spanColumns for one slot.
 * @param {number} x column, 0 ≤ x < cols (clamped)
 * @param {number} n slots, ≥ 1
 * @param {number} cols columns, ≥ 1
 * @returns {number}
 */
export function slotAtColumn(x, n, cols) {
  const c = Math.min(cols - 1, Math.max(0, Math.floor(x)));
  return n >= cols ? columnStart(c, n, cols) : columnOf(c, cols, n);
}
