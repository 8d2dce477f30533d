// Canvas drawing for the player, one module per view: the slot strips
// (slotsview.js), the SIT maps (sitview.js) and the seek-bar markers
// (markersview.js). Drawing only: no fetch, no sockets, no DOM outside the
// canvases they are given. This module is what player.js imports.
export { LABEL_W, fontPx, SlotsView } from './slotsview.js';
export { SITView } from './sitview.js';
export { MarkersView } from './markersview.js';
