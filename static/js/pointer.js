// The pointer on the player's canvases: hover shows a slot's or segment's numbers, a click pins
// a slot (and a second click on the zoom lets it go), the wheel zooms the strip above the rows and
// scrolls the rows and the SIT list. The arithmetic is pure (static/jstest/pointer.test.js).
import { slotText } from './describe.js';

/** The slot cells' size range, px. */
export const CELL_MIN = 6;
export const CELL_MAX = 48;

/**
 * The cell size after a wheel turn over the strip.
 * @param {number} cell
 * @param {number} deltaY
 * @returns {number}
 */
export function wheelCell(cell, deltaY) {
  return Math.max(CELL_MIN, Math.min(CELL_MAX, cell + (deltaY < 0 ? 2 : -2)));
}

/**
 * The first row shown after a wheel turn over the rows: a third of the rows a notch.
 * @param {number|null} rowScroll the row scrolled to, or null (the cursor's)
 * @param {{firstRow: number, rows: number}} layout
 * @param {number} deltaY
 * @returns {number}
 */
export function wheelRows(rowScroll, layout, deltaY) {
  const base = rowScroll ?? layout.firstRow;
  return Math.max(0, base + Math.sign(deltaY) * Math.max(1, Math.floor(layout.rows / 3)));
}

/**
 * The slot pinned after a click: the slot hit, or none on a miss or a second click on the zoom.
 * @param {{slot: number, where: string}|null} h
 * @param {number|null} pin
 * @returns {number|null}
 */
export function pinAfterClick(h, pin) {
  return !h || (h.where === 'zoom' && pin !== null) ? null : h.slot;
}

/**
 * Wires the pointer on the slots and SIT canvases.
 * @param {{slotsCanvas: HTMLCanvasElement, sitCanvas: HTMLCanvasElement, st: import('./state.js').RunState,
 *   slots: import('./slotsview.js').SlotsView, sit: import('./sitview.js').SITView,
 *   tip: import('./canvas.js').Tooltip, redraw: () => void}} p
 */
export function wirePointer(p) {
  const { slotsCanvas, sitCanvas, st, slots, sit, tip, redraw } = p;
  const at = (/** @type {HTMLCanvasElement} */ c, /** @type {MouseEvent} */ e) => {
    const r = c.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  slotsCanvas.addEventListener('mousemove', (e) => {
    const { x, y } = at(slotsCanvas, e);
    const h = slots.hit(st, x, y);
    if (!h) { tip.hide(); return; }
    tip.show(slotText(st, h.slot, slots.opts.quiz ? slots.opts.veil : undefined), e.clientX, e.clientY);
  });
  slotsCanvas.addEventListener('mouseleave', () => tip.hide());
  slotsCanvas.addEventListener('click', (e) => {
    const { x, y } = at(slotsCanvas, e);
    slots.pin = pinAfterClick(slots.hit(st, x, y), slots.pin);
    redraw();
  });
  slotsCanvas.addEventListener('wheel', (e) => {
    const { y } = at(slotsCanvas, e);
    e.preventDefault();
    if (y < slots.layout.rowsY - 14) slots.cell = wheelCell(slots.cell, e.deltaY);
    else slots.rowScroll = wheelRows(slots.rowScroll, slots.layout, e.deltaY);
    redraw();
  }, { passive: false });
  sitCanvas.addEventListener('mousemove', (e) => {
    const { x, y } = at(sitCanvas, e);
    const t = sit.hit(st, x, y);
    if (t) tip.show(t, e.clientX, e.clientY); else tip.hide();
  });
  sitCanvas.addEventListener('mouseleave', () => tip.hide());
  sitCanvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    sit.scroll += Math.sign(e.deltaY) * 2;
    redraw();
  }, { passive: false });
}
