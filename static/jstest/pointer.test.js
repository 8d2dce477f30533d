// Unit tests of the canvases' pointer arithmetic (node --test).
import './contract.fixture.js'; // first: the modules read the page's contract as they load
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wheelCell, wheelRows, pinAfterClick, CELL_MIN, CELL_MAX } from '../js/pointer.js';

test('the wheel over the strip zooms within the cell sizes', () => {
  assert.equal(wheelCell(12, -1), 14);
  assert.equal(wheelCell(12, 1), 10);
  assert.equal(wheelCell(CELL_MAX, -1), CELL_MAX);
  assert.equal(wheelCell(CELL_MIN, 1), CELL_MIN);
});

test('the wheel over the rows scrolls a third of them a notch, from the cursor\'s row, never above the first', () => {
  const layout = { firstRow: 10, rows: 9 };
  assert.equal(wheelRows(null, layout, 1), 13);
  assert.equal(wheelRows(20, layout, -1), 17);
  assert.equal(wheelRows(1, layout, -1), 0);
  assert.equal(wheelRows(null, { firstRow: 0, rows: 1 }, 1), 1, 'at least one row');
});

test('a click pins the slot hit; a miss or a second click on the zoom lets it go', () => {
  assert.equal(pinAfterClick({ slot: 5, where: 'row' }, null), 5);
  assert.equal(pinAfterClick({ slot: 6, where: 'row' }, 5), 6);
  assert.equal(pinAfterClick({ slot: 6, where: 'zoom' }, null), 6);
  assert.equal(pinAfterClick({ slot: 6, where: 'zoom' }, 5), null);
  assert.equal(pinAfterClick(null, 5), null);
});
