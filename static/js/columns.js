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
