// The player page's entry module: starts the player (player.js) on the page.
import { initRun } from './player.js';

initRun(document);
