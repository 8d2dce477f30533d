// The run form's call choice (templates/run.templ imageRunForm): each option of the call menu says
// which fields its call takes (data-range: offset and length, data-keep-size: the KEEP_SIZE box,
// data-size: truncate's size); the others are hidden and disabled, so the query the form sends
// names only what request.Parse reads for that call. No op name is spelt here: the server's
// options carry them.

/**
 * @typedef {object} OpFields the fields a call takes
 * @property {boolean} range offset and length (and the range presets)
 * @property {boolean} keepSize the KEEP_SIZE box
 * @property {boolean} size truncate's new size
 */

/**
 * Reads the fields an option of the call menu takes from its data attributes.
 * @param {{dataset: Record<string, string|undefined>}|null|undefined} opt
 * @returns {OpFields}
 */
export function opFields(opt) {
  const ds = opt ? opt.dataset : {};
  return { range: ds.range === 'true', keepSize: ds.keepSize === 'true', size: ds.size === 'true' };
}

/**
 * Shows and enables the fields of f, hides and disables the rest.
 * @param {Document} doc
 * @param {OpFields} f
 */
export function showFields(doc, f) {
  /** @type {Array<[string, boolean, string[]]>} the group, whether shown, its form controls */
  const groups = [
    ['f-range', f.range, ['preset', 'f-offset', 'f-length']],
    ['f-size-field', f.size, ['f-size']],
    ['f-keep-label', f.keepSize, ['f-keep']],
  ];
  for (const [group, on, controls] of groups) {
    const g = doc.getElementById(group);
    if (g) g.hidden = !on;
    for (const id of controls) {
      const c = /** @type {HTMLInputElement|null} */ (doc.getElementById(id));
      if (c) c.disabled = !on;
    }
  }
}

/**
 * Wires the call menu of the page's run form (none on a sandbox or follower page).
 * @param {Document} doc
 */
export function initRunForm(doc) {
  const sel = /** @type {HTMLSelectElement|null} */ (doc.getElementById('f-op'));
  if (!sel) return;
  const apply = () => showFields(doc, opFields(/** @type {any} */ (sel.selectedOptions[0])));
  sel.addEventListener('change', apply);
  apply();
}
