// The Okabe–Ito palette and the patterns that make every state readable
// without colour. css/app.css repeats these values for the legends.
import { contract } from './contract.js';

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
 * are kept for "invalid" and "just invalidated"). The player and the file
 * page now colour by RUN_HUES, SEGMENT_TONES or TYPE_COLOURS instead. */
export const SEGMENT_HUES = Object.freeze([OI.blue, OI.green, OI.purple, OI.sky, OI.orange]);

/** Colours of physical runs, cycled so that neighbouring runs always differ:
 * Paul Tol's muted scheme (colour-blind safe), chosen apart from the
 * Okabe–Ito hues that mean log types on the image page, and from yellow
 * (just invalidated) and vermillion (invalid). A break between runs is also
 * drawn as a dark bar, so colour is never the only sign of it. */
export const RUN_HUES = Object.freeze(['#332288', '#44aa99', '#882255', '#999933']);

/** Colouring by segment: two slate tones that alternate from segment to
 * segment (segments are places, not categories: the tones mark where one
 * ends), never the log-type hues. */
export const SEGMENT_TONES = Object.freeze(['#34495e', '#8ea3b8']);

/** The fill of an address whose segment's log type is unknown. */
export const UNKNOWN_FILL = '#b8c0c8';

/** Colours of the six log types (hot/warm/cold data, hot/warm/cold node), by the SIT's type number. */
export const TYPE_COLOURS = Object.freeze([OI.orange, OI.sky, OI.blue, OI.purple, OI.green, OI.yellow]);

/** Names of the log types by the SIT's type number, as the page's contract sends them. */
export const TYPE_NAMES = contract().logTypes;

export const INK = '#1d232a';
export const INK2 = '#4a5561';
/** Muted text: 5.9:1 on white (the old #7a8591 was 3.7:1). */
export const INK3 = '#5b6672';
export const LINE = '#c3cbd3';
export const NULL_FILL = '#ffffff';
export const NEW_FILL = '#eef0f3';
export const NEW_LINE = '#6b7682';

/**
 * Returns the fills a colouring paints addresses with, by palette index
 * (colour.js colourIndex): runs cycle RUN_HUES, segments SEGMENT_TONES,
 * log types TYPE_COLOURS with UNKNOWN_FILL last.
 * @param {string} by "run", "segment" or "log"
 * @returns {readonly string[]}
 */
export function fillsFor(by) {
  if (by === 'plain') return PLAIN_FILLS;
  if (by === 'segment') return SEGMENT_TONES;
  if (by === 'log') return LOG_FILLS;
  return RUN_HUES;
}

const LOG_FILLS = Object.freeze([...TYPE_COLOURS, UNKNOWN_FILL]);

/** The one colour of every address while a quiz question withholds the colouring. */
const PLAIN_FILLS = Object.freeze([SEGMENT_TONES[0]]);

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

/**
 * Fills a legend element with the swatches and names of a colouring.
 * @param {Document} doc
 * @param {HTMLElement} el
 * @param {string} by "run", "segment" or "log"
 * @param {(text: string, slug: string) => Node|string} term names a glossary term (a popover
 *   button in the player, plain text elsewhere)
 */
export function legendColours(doc, el, by, term) {
  const fills = fillsFor(by);
  /** @type {(Node|string)[]} */
  const parts = [];
  const sw = (/** @type {string} */ c, /** @type {string} */ title) => {
    const s = doc.createElement('span');
    s.className = 'sw';
    s.style.background = c;
    s.setAttribute('aria-hidden', 'true');
    s.dataset.colour = c;
    if (title) s.title = title;
    return s;
  };
  if (by === 'log') {
    TYPE_NAMES.forEach((n, i) => { parts.push(sw(fills[i], n), `${n} `); });
    parts.push(sw(fills[TYPE_NAMES.length], 'unknown'), 'unknown ', term('log type', 'log-type'));
  } else if (by === 'segment') {
    for (const c of fills) parts.push(sw(c, ''));
    parts.push(term('segment', 'segment'), ' (tones alternate)');
  } else if (by === 'plain') {
    parts.push(sw(fills[0], ''), 'an address (the colouring is hidden until you answer)');
  } else {
    for (const c of fills) parts.push(sw(c, ''));
    parts.push(term('physical run', 'physical-run'));
  }
  el.replaceChildren(...parts);
  el.dataset.colourBy = by;
}
