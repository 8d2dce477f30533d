// The exercise page: each answer is in a <details> element (keyboard and
// screen-reader friendly without script); this module adds "reveal all"
// and shows the image choice only for kind file.

/**
 * Wires the exercise page.
 * @param {Document} doc
 */
export function initExercise(doc) {
  // The image matters only for kind file.
  const kind = /** @type {HTMLSelectElement|null} */ (doc.getElementById('ex-kind'));
  const field = doc.getElementById('ex-image-field');
  const image = /** @type {HTMLSelectElement|null} */ (doc.getElementById('ex-image'));
  if (kind && field && image) {
    kind.addEventListener('change', () => {
      field.hidden = image.disabled = kind.value !== 'file';
    });
  }
  const all = doc.getElementById('ex-reveal-all');
  if (!all) return;
  all.addEventListener('click', () => {
    for (const d of doc.querySelectorAll('[data-testid="exercise-reveal"]')) {
      /** @type {HTMLDetailsElement} */ (d).open = true;
    }
  });
}

initExercise(document);
