// A small stand-in for the DOM, enough for the player's panels (panels.js, speech.js) under node:
// elements with text, children, attributes, dataset and classes, found by id. Not a browser: the
// browser suite (web/*e2e_test.go) runs the real page.

export class FakeElement {
  /**
   * @param {FakeDocument} doc
   * @param {string} tagName
   */
  constructor(doc, tagName) {
    this.ownerDocument = doc;
    this.tagName = tagName.toUpperCase();
    /** @type {Array<FakeElement|string>} */
    this.children = [];
    this.dataset = {};
    this.attrs = new Map();
    this.classes = new Set();
    this.hidden = false;
    this.disabled = false;
    this.value = '';
    this.title = '';
    this.type = '';
    this.scrollTop = 0;
    /** @type {Map<string, Function[]>} */
    this.listeners = new Map();
    /** @type {FakeElement|null} */
    this.parent = null;
    const classes = this.classes;
    this.classList = {
      toggle: (c, on = !classes.has(c)) => { if (on) classes.add(c); else classes.delete(c); return on; },
      contains: (c) => classes.has(c),
      add: (c) => classes.add(c),
      remove: (c) => classes.delete(c),
    };
  }

  get className() { return [...this.classes].join(' '); }

  set className(v) { this.classes.clear(); for (const c of String(v).split(/\s+/).filter(Boolean)) this.classes.add(c); }

  get textContent() { return this.children.map((c) => (typeof c === 'string' ? c : c.textContent)).join(''); }

  set textContent(v) { this.children = v === '' ? [] : [String(v)]; }

  /** @param {...(FakeElement|string)} xs */
  append(...xs) { this.children.push(...xs); }

  /** @param {...(FakeElement|string)} xs */
  prepend(...xs) { this.children.unshift(...xs); }

  /** @param {...(FakeElement|string)} xs */
  replaceChildren(...xs) { this.children = [...xs]; }

  setAttribute(k, v) { this.attrs.set(k, String(v)); }

  removeAttribute(k) { this.attrs.delete(k); }

  click() { this.dispatch('click'); }

  addEventListener(type, fn) { this.listeners.set(type, [...(this.listeners.get(type) || []), fn]); }

  /**
   * Calls the element's listeners for an event of type (no bubbling), with target this.
   * @param {string} type
   * @returns {{defaultPrevented: boolean}}
   */
  dispatch(type, target = this) {
    const e = { type, target, defaultPrevented: false, preventDefault() { this.defaultPrevented = true; } };
    for (const fn of this.listeners.get(type) || []) fn(e);
    return e;
  }

  setCustomValidity(m) { this.validity = m; }

  /** @param {string} sel only "button[data-value]" */
  closest(sel) {
    for (let el = this; el; el = el.parent) if (sel === 'button[data-value]' && el.tagName === 'BUTTON' && el.dataset.value !== undefined) return el;
    return null;
  }

  getAttribute(k) { return this.attrs.has(k) ? this.attrs.get(k) : null; }

  /** @returns {FakeElement[]} the element descendants, depth first */
  all() {
    const out = [];
    for (const c of this.children) if (typeof c !== 'string') out.push(c, ...c.all());
    return out;
  }
}

export class FakeDocument {
  constructor() {
    /** @type {Map<string, FakeElement>} */
    this.byId = new Map();
    this.body = new FakeElement(this, 'body');
    this.activeElement = this.body;
  }

  /** Every id exists: the page's template has them all; a test reads the ones it checks. */
  getElementById(id) {
    let el = this.byId.get(id);
    if (!el) {
      el = new FakeElement(this, id === 'seek' || id === 'quiz-answer' ? 'input' : 'div');
      el.id = id;
      this.byId.set(id, el);
    }
    return el;
  }

  createElement(tag) { return new FakeElement(this, tag); }

  querySelectorAll() { return []; }

  /** @param {string} id @returns {string} */
  text(id) { return this.getElementById(id).textContent; }
}
