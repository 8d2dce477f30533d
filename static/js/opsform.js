// The ops language as forms (issue 17): the server hands the page request.Forms — each operation's
// kind and words, read from the grammar request.ParseOp states — and the player's "next
// operation" builds its fields and its lines from them, so an operation added to the language
// (checkpoint, gc …) reaches the chain with no change here. The player plays one file: a PATH is
// the played file's.

import { byteCount } from './size.js';
import { contract } from './contract.js';

/**
 * @typedef {object} OpArg one word of a form after the kind (request.Arg)
 * @property {string} [name] a placeholder: PATH, OFFSET, LENGTH, N …
 * @property {string[]} [words] a keyword's spellings: one fixed word, or a choice
 * @property {boolean} [optional]
 */

/**
 * @typedef {object} OpForm request.Form
 * @property {string} kind
 * @property {string} line "zero PATH OFFSET LENGTH [keep_size]"
 * @property {OpArg[]} args
 */

/** The zero's form, for a page without forms (a sandbox run's). */
export const ZERO_FORM = /** @type {OpForm} */ ({
  kind: contract().ops.zero, line: `${contract().ops.zero} PATH OFFSET LENGTH [keep_size]`,
  args: [{ name: 'PATH' }, { name: 'OFFSET' }, { name: 'LENGTH' }, { words: ['keep_size'], optional: true }],
});

/**
 * Reads the forms a page carries (data-forms): the zero's form at least, whatever it holds.
 * @param {string|undefined|null} json
 * @returns {OpForm[]}
 */
export function parseForms(json) {
  /** @type {any} */
  let v = null;
  try { v = JSON.parse(json || ''); } catch { /* none */ }
  const out = Array.isArray(v) ? v.filter((f) => f && typeof f.kind === 'string' && /^[a-z_]+$/.test(f.kind) && Array.isArray(f.args)) : [];
  if (!out.some((f) => f.kind === ZERO_FORM.kind)) out.unshift(ZERO_FORM);
  return out;
}

/**
 * Says what a placeholder asks for, for its field's label and hint.
 * @param {string} name
 * @returns {{label: string, hint: string, count: boolean}} count: a byte count (size.js forms)
 */
export function placeholder(name) {
  switch (name) {
    case 'OFFSET': return { label: 'offset', hint: 'a byte count: 4096, 0x1000 or 64MiB', count: true };
    case 'LENGTH': return { label: 'length', hint: 'a byte count: 4096, 0x1000 or 64MiB', count: true };
    case 'N': return { label: 'value', hint: 'a number: 16 or 0x10', count: true };
    case 'PATH': return { label: 'path', hint: 'the played file', count: false };
  }
  return { label: name.toLowerCase(), hint: 'one word, no spaces', count: false };
}

/**
 * Writes the line of form with the values filled in: placeholders by name (PATH is path), a
 * choice by its index's word, an optional keyword when its value is true. Numbers are written
 * decimal (byteCount reads 0x1000 and 64MiB).
 * @param {OpForm} form
 * @param {Array<string|boolean|undefined>} values one per arg, in order
 * @param {string} path the played file
 * @returns {{line: string, error: string, arg: number}} error "" when the line is whole; arg the
 *   index of the word that is wrong (-1 for none)
 */
export function formLine(form, values, path) {
  const words = [form.kind];
  for (let i = 0; i < form.args.length; i++) {
    const a = form.args[i];
    const v = values[i];
    if (a.name) {
      if (a.name === 'PATH') {
        if (!path || /\s/.test(path)) return { line: '', error: 'the ops language cannot name a path with spaces', arg: i };
        words.push(path);
        continue;
      }
      const p = placeholder(a.name);
      const s = String(v ?? '').trim();
      if (!s) {
        if (a.optional) continue;
        return { line: '', error: `${p.label}: ${p.hint}`, arg: i };
      }
      const w = p.count ? byteCount(s) : (/^\S+$/.test(s) ? s : '');
      if (!w) return { line: '', error: `${p.label}: ${p.hint}`, arg: i };
      words.push(w);
      continue;
    }
    const ws = a.words || [];
    if (ws.length === 1) {
      if (a.optional && !v) continue;
      words.push(ws[0]);
      continue;
    }
    const k = typeof v === 'string' ? ws.indexOf(v) : -1;
    if (k < 0) {
      if (a.optional) continue;
      return { line: '', error: `one of ${ws.join(', ')}`, arg: i };
    }
    words.push(ws[k]);
  }
  return { line: words.join(' '), error: '', arg: -1 };
}

/**
 * Reports whether a form names the file (a PATH placeholder): a write or fsync runs on the played
 * file, a sync or a tune on the mount.
 * @param {OpForm} form
 * @returns {boolean}
 */
export function onFile(form) {
  return form.args.some((a) => a.name === 'PATH');
}
