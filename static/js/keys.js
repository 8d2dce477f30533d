// The player's keyboard: which key does what (the key help in the template lists the same), which
// keys a focused control keeps for itself, and which keys a follower's page ignores while it
// mirrors a presenter. keyAction is pure (static/jstest/keys.test.js); player.js carries the
// actions out.

/** Keys that drive the run: a follower's page ignores them while it mirrors a presenter. */
export const DRIVE_KEYS = new Set([' ', 'ArrowRight', 'ArrowLeft', 'Home', 'End', 'PageDown', 'PageUp', 'n', 'p', '[', ']', 'b', 'B', 'q', 'g']);

/**
 * Reports whether a key on target t belongs to t (typing, a select's arrows, a checkbox's space).
 * @param {{tagName?: string, type?: string}|null} t
 * @param {string} k
 * @returns {boolean}
 */
export function ownsKey(t, k) {
  const tag = t && t.tagName;
  if (tag === 'SELECT' || tag === 'TEXTAREA') return true;
  if (tag !== 'INPUT') return false;
  const type = /** @type {{type?: string}} */ (t).type;
  if (type === 'checkbox') return k === ' ';
  return type !== 'range';
}

/**
 * The actions keys ask for.
 * @typedef {'play'|'step'|'flush'|'back'|'reset'|'end'|'next-stop'|'prev-stop'|'present'|'slower'|'faster'
 *   |'mode'|'colour'|'quiz'|'goto'|'zoom-in'|'zoom-out'|'slots-up'|'slots-down'|'sit-up'|'sit-down'} Action
 */

/**
 * Returns the action a key press asks for, or null when the page leaves the key alone.
 * @param {{key: string, shiftKey?: boolean, ctrlKey?: boolean, metaKey?: boolean, altKey?: boolean}} e
 * @param {{target: {tagName?: string, type?: string}|null, driving: boolean, onSlots: boolean, onSIT: boolean}} where
 *   the key's target, whether the page drives the run, whether the target is the slots or SIT canvas
 * @returns {Action|null}
 */
export function keyAction(e, where) {
  if (ownsKey(where.target, e.key)) return null;
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  if (!where.driving && DRIVE_KEYS.has(e.key)) return null;
  switch (e.key) {
    case ' ': return 'play';
    case 'ArrowRight': return e.shiftKey ? 'flush' : 'step';
    case 'ArrowLeft': return 'back';
    case 'ArrowUp':
      if (where.onSlots) return 'slots-up';
      return where.onSIT ? 'sit-up' : null;
    case 'ArrowDown':
      if (where.onSlots) return 'slots-down';
      return where.onSIT ? 'sit-down' : null;
    case 'Home': return 'reset';
    case 'End': return 'end';
    case 'PageDown': case 'n': return 'next-stop';
    case 'PageUp': case 'p': return 'prev-stop';
    case 'P': return 'present';
    case '[': return 'slower';
    case ']': return 'faster';
    case 'b': case 'B': return 'mode';
    case 'c': return 'colour';
    case 'q': return 'quiz';
    // g moves the focus on keyup: moved now, the key's character would land in the box.
    case 'g': return 'goto';
    case '+': case '=': return 'zoom-in';
    case '-': return 'zoom-out';
    // Enter on a focused button is the button's; every other key is the browser's.
    default: return null;
  }
}
