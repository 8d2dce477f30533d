// The player's side panels (writeback, the after-image check): each opens in the guided tour's
// place from its button in the session bar, and closes back to the tour (its ✕, Escape, or its
// button again). One is open at a time.
import { contract } from './contract.js';
import { setRunQuery } from './links.js';

/**
 * The query of the run a hello describes, as the run API reads it (web.resolveRun): path, range,
 * keepSize, mode and the operations before it.
 * @param {{path: string, op?: string, offset: string, length: string, keepSize: boolean, mode: string, before?: string[]}} run
 * @returns {string}
 */
export function runQuery(run) {
  return setRunQuery(new URLSearchParams(), { ...run, mode: run.mode || contract().modes.both }).toString();
}

/** Opens and closes the side panels. */
export class SidePanels {
  /** @param {Document} doc */
  constructor(doc) {
    this.doc = doc;
    /** @type {string} the open panel's name, "" for none */
    this.open = '';
    /** @type {Map<string, () => void>} */
    this.onOpen = new Map();
    doc.addEventListener('click', (e) => {
      const b = /** @type {HTMLElement} */ (e.target).closest('[data-close]');
      if (b) this.show('');
    });
    doc.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || !this.open) return;
      const panel = doc.getElementById(`${this.open}-panel`);
      if (panel && panel.contains(/** @type {Node} */ (e.target))) {
        const name = this.open;
        this.show('');
        doc.getElementById(`${name}-open`)?.focus();
      }
    });
  }

  /**
   * Wires panel name's button (#NAME-open) and panel (#NAME-panel).
   * @param {string} name
   * @param {() => void} onOpen runs each time it opens
   */
  add(name, onOpen) {
    this.onOpen.set(name, onOpen);
    this.doc.getElementById(`${name}-open`)?.addEventListener('click', () => this.show(this.open === name ? '' : name));
  }

  /**
   * Opens panel name ("" closes the open one).
   * @param {string} name
   */
  show(name) {
    const was = this.open;
    this.open = name;
    for (const n of this.onOpen.keys()) {
      const p = this.doc.getElementById(`${n}-panel`);
      if (p) p.hidden = n !== name;
      this.doc.getElementById(`${n}-open`)?.setAttribute('aria-expanded', String(n === name));
    }
    this.doc.body.classList.toggle('side-open', !!name);
    if (name) {
      const fn = this.onOpen.get(name);
      if (fn) fn();
      if (name !== was) /** @type {HTMLElement|null} */ (this.doc.querySelector(`#${name}-panel h2`))?.focus?.();
    }
  }
}
