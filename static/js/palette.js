// The Okabe–Ito palette and the patterns that make every state readable
// without colour. css/app.css repeats these values for the legends.

/** Okabe–Ito colours by name. */
export const OI = Object.freeze({
  orange: '#e69f00',
  sky: '#56b4e9',
  green: '#009e73',
  yellow: '#f0e442',
  blue: '#0072b2',
  vermillion: '#d55e00',
  purple: '#cc79a7',
  black: '#000000',
});

/** Colours for addresses, cycled by segment number (vermillion and yellow
 * are kept for "invalid" and "just invalidated"). */
export const SEGMENT_HUES = Object.freeze([OI.blue, OI.green, OI.purple, OI.sky, OI.orange]);

/** Colours of the six log types (hot/warm/cold data, hot/warm/cold node). */
export const TYPE_COLOURS = Object.freeze([OI.orange, OI.sky, OI.blue, OI.purple, OI.green, OI.yellow]);

/** Names of the six log types. */
export const TYPE_NAMES = Object.freeze(['hot data', 'warm data', 'cold data', 'hot node', 'warm node', 'cold node']);

export const INK = '#1d232a';
export const INK2 = '#4a5561';
export const LINE = '#c3cbd3';
export const NULL_FILL = '#ffffff';
export const NEW_FILL = '#eef0f3';
export const NEW_LINE = '#6b7682';

/**
 * Returns the colour of a segment's addresses.
 * @param {number} segno
 * @returns {string}
 */
export function segmentHue(segno) {
  return SEGMENT_HUES[((segno % SEGMENT_HUES.length) + SEGMENT_HUES.length) % SEGMENT_HUES.length];
}

/**
 * Makes the diagonal hatch used for NEW_ADDR slots, for a context.
 * @param {CanvasRenderingContext2D} ctx
 * @param {number} dpr device pixel ratio, so lines stay crisp
 * @returns {CanvasPattern|string}
 */
export function hatch(ctx, dpr) {
  // One pattern per context and scale: made once, reused every frame.
  const cached = hatches.get(ctx);
  if (cached && cached.dpr === dpr) return cached.p;
  const p = makeHatch(ctx, dpr);
  hatches.set(ctx, { dpr, p });
  return p;
}

/** @type {WeakMap<CanvasRenderingContext2D, {dpr: number, p: CanvasPattern|string}>} */
const hatches = new WeakMap();

/**
 * @param {CanvasRenderingContext2D} ctx
 * @param {number} dpr
 * @returns {CanvasPattern|string}
 */
function makeHatch(ctx, dpr) {
  const s = Math.max(4, Math.round(5 * dpr));
  const c = new OffscreenCanvas(s, s);
  const g = c.getContext('2d');
  g.fillStyle = NEW_FILL;
  g.fillRect(0, 0, s, s);
  g.strokeStyle = NEW_LINE;
  g.lineWidth = Math.max(1, dpr * 0.9);
  g.beginPath();
  // Two strokes so the tile repeats without seams.
  g.moveTo(-1, s + 1); g.lineTo(s + 1, -1);
  g.moveTo(-1, 1); g.lineTo(1, -1);
  g.moveTo(s - 1, s + 1); g.lineTo(s + 1, s - 1);
  g.stroke();
  return ctx.createPattern(c, 'repeat') || NEW_FILL;
}

/**
 * Makes the dot pattern that marks node segments on the segment map.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string} base fill colour
 * @param {string} dot dot colour
 * @param {number} dpr
 * @returns {CanvasPattern|string}
 */
export function dots(ctx, base, dot, dpr) {
  const s = Math.max(4, Math.round(5 * dpr));
  const c = new OffscreenCanvas(s, s);
  const g = c.getContext('2d');
  g.fillStyle = base;
  g.fillRect(0, 0, s, s);
  g.fillStyle = dot;
  g.beginPath();
  g.arc(s / 2, s / 2, Math.max(0.8, dpr * 0.9), 0, Math.PI * 2);
  g.fill();
  return ctx.createPattern(c, 'repeat') || base;
}
