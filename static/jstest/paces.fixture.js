// The pace menu the server renders (testdata/paces.json, written by web's TestPaceMenu), for the
// node tests that need the paces as the page reads them.
import { readFileSync } from 'node:fs';
import { pacesFromMenu } from '../js/pace.js';

const served = JSON.parse(readFileSync(new URL('./testdata/paces.json', import.meta.url), 'utf8'));

/**
 * The pace select as rendered: its options' value, label, defaultSelected and disabled.
 * @returns {{options: Array<{value: string, label: string, defaultSelected: boolean, disabled: boolean}>}}
 */
export function servedMenu() {
  return { options: served.menu.map((/** @type {any} */ o) => ({ ...o })) };
}

/** The paces the page reads from that menu. */
export function servedPaces() {
  return pacesFromMenu(servedMenu());
}
