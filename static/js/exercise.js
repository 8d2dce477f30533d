// The exercise page: each answer is in a <details> element (keyboard and
// screen-reader friendly without script); this module adds "reveal all".

/**
 * Wires the exercise page.
 * @param {Document} doc
 */
export function initExercise(doc) {
  const all = doc.getElementById('ex-reveal-all');
  if (!all) return;
  all.addEventListener('click', () => {
    for (const d of doc.querySelectorAll('[data-testid="exercise-reveal"]')) {
      /** @type {HTMLDetailsElement} */ (d).open = true;
    }
  });
}

initExercise(document);
