// Switching mode (the b key, the mode menu): which mode comes next, and what the tour shows after
// the new mode's hello. The server maps the step (player.Player.Follow: the end to the end, a
// chunk's start to the same chunk's start, else the first step at the same slot cursor); the
// page's part is to take the new run's stops as they are at that step, as a fresh load of the
// permalink would. Pure functions, tested in static/jstest/modeswitch.test.js.
import { stopAt } from './tour.js';
import { contract } from './contract.js';

/** The order b cycles through: each engine in the protocol's order, then both. */
export const MODE_CYCLE = Object.freeze([...contract().modes.order, contract().modes.both]);

/**
 * Returns the mode after mode in the cycle.
 * @param {string} mode
 * @returns {string}
 */
export function nextMode(mode) {
  return MODE_CYCLE[(MODE_CYCLE.indexOf(mode) + 1) % MODE_CYCLE.length];
}

/**
 * Returns the tour's position after a hello. A hello for another mode brings that mode's stops:
 * a stop the user had opened (an index into the old list) means nothing there, so the tour
 * follows the step again, as on a fresh load. A hello for the same mode (a reconnect) keeps it.
 * @param {string|null} before the mode shown before the hello (null: none yet)
 * @param {string} after the hello's mode
 * @param {import('./tour.js').Stop[]} stops the hello's stops
 * @param {number} step the hello's step
 * @param {number} open the open stop's index
 * @param {boolean} sticky the user opened it (the tour does not follow the step)
 * @returns {{open: number, sticky: boolean}}
 */
export function tourAfterHello(before, after, stops, step, open, sticky) {
  if (before === null || before !== after || open >= stops.length) return { open: stopAt(stops, step), sticky: false };
  return { open, sticky };
}
