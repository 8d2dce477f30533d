// The tour and quiz as one page holds them: which stop is open and whether the user chose it, the
// questions answered, their verdicts, the score, the answer awaiting a verdict and why the last
// one was refused. It decides where n, p and an opened stop take the view and when playing must
// come back to a question; the socket and the panels only carry out and show what it says.
// No DOM, no socket: tested in static/jstest/tourquiz.test.js.
import { stopAt, stopStep, nextStop, prevStop, openQuestion, verdictText } from './tour.js';
import { tourAfterHello } from './modeswitch.js';
import { checkAnswer, verdictSpeech } from './quiz.js';
import { addScore } from './quizstore.js';

/** @typedef {import('./tour.js').Stop} Stop */

export class TourQuiz {
  constructor() {
    /** the open stop's index, -1 for none */
    this.open = -1;
    /** the user chose the open stop (n, p, an answer): the tour does not follow the step */
    this.sticky = false;
    /** @type {Set<number>} stops whose question is answered */
    this.answered = new Set();
    /** @type {Map<number, string>} stop → the verdict as shown ("correct", "wrong: 59", "answer sent: …") */
    this.verdicts = new Map();
    this.score = { right: 0, asked: 0 };
    /** the score earlier connections kept (a reload's, from sessionStorage; a reconnection's) */
    this.base = { right: 0, asked: 0 };
    /** the stop whose answer awaits its verdict, -1 for none */
    this.waiting = -1;
    /** what the live region says of the last verdict: it and the right answer */
    this.speech = '';
    /** why the last answer was not sent, until the next one */
    this.hint = '';
    /**
     * The page drives its own run, so the quiz holds the view at an unanswered question (see
     * hold); off while a follower mirrors its presenter, whose frames the page cannot refuse.
     */
    this.held = true;
    /** the step a hold has asked the server for and not yet seen, -1 for none */
    this.holding = -1;
    /** not held (a follower): the question the presenter's page has open, -1 for none */
    this.asked = -1;
  }

  /**
   * Takes a hello: another mode brings other stops, so the open stop and the verdicts (kept by
   * stop index) start over; the same mode (a reconnect) keeps them.
   * @param {string|null} before the mode shown before the hello (null: none yet)
   * @param {string} mode the hello's mode
   * @param {Stop[]} stops
   * @param {number} step
   * @param {{right: number, asked: number}} [score] the hello's score
   */
  hello(before, mode, stops, step, score) {
    ({ open: this.open, sticky: this.sticky } = tourAfterHello(before, mode, stops, step, this.open, this.sticky));
    if (before !== null && before !== mode) {
      this.verdicts.clear();
      this.answered.clear();
      this.waiting = -1;
    }
    this.score = score ? addScore(this.base, score) : this.score;
    this.holding = -1;
  }

  /** A new connection starts: its server counts from 0, so what is shown so far is the base. */
  newConnection() {
    this.base = { ...this.score };
  }

  /**
   * Takes the server's hold (web/quizhold.go): the questions before the one it holds at are done
   * there (answered, revealed, or behind a mode change), so they are here too, without a verdict;
   * with the socket's quiz on and nothing held, every question is (another mode's tour once the quiz
   * is over), and the page holds at none.
   * @param {Stop[]} stops
   * @param {{stop: number}|null} hold
   * @param {boolean} [socketQuiz] the socket was opened with quiz=1
   */
  heldBy(stops, hold, socketQuiz = false) {
    if (!hold && !socketQuiz) return;
    const upTo = hold ? hold.stop : stops.length;
    for (let k = 0; k < upTo && k < stops.length; k++) {
      if (stops[k].question) this.answered.add(k);
    }
  }

  /**
   * Takes a quiz message: a verdict (the stop opens on it, answered), or in a room a follower's
   * answer sent and awaiting the presenter.
   * @param {{stop: number, correct?: boolean, answer?: string, pending?: boolean, score?: {right: number, asked: number}}} m
   * @param {boolean} presenter the page presents a room: it did not answer itself
   */
  verdict(m, presenter) {
    if (m.score) this.score = addScore(this.base, m.score);
    if (m.pending) {
      this.verdicts.set(m.stop, 'answer sent: the presenter reveals it');
      return;
    }
    const v = /** @type {{correct: boolean, answer: string}} */ (m);
    this.answered.add(m.stop);
    this.verdicts.set(m.stop, verdictText(v));
    this.speech = verdictSpeech(v, presenter);
    if (this.waiting === m.stop) this.waiting = -1;
    this.open = m.stop;
    this.sticky = true;
  }

  /**
   * The question open at step, or -1 (none, or no quiz).
   * @param {Stop[]} stops
   * @param {number} step
   * @param {boolean} quiz
   * @returns {number}
   */
  question(stops, step, quiz) {
    if (!quiz) return -1;
    // A follower's page cannot hold the view, but its presenter's does: the question the
    // presenter has open stays open here, whatever step its frames show on their way back to it
    // (an End pressed there), until this page has its verdict.
    const a = this.asked;
    const aq = !this.held && a >= 0 && !this.answered.has(a) ? stops[a]?.question : undefined;
    if (aq && aq.ask <= step) return a;
    return openQuestion(stops, step, this.answered, this.held);
  }

  /**
   * After a frame or a hello, or the quiz turned on: a quiz holds the view at an unanswered
   * question (player.WithholdLater). A view past one — played, stepped, sought, End, a permalink
   * at the end, a mode's new stops — goes back to where it is asked, and a view playing onto it
   * stops there. The question opens.
   * @param {Stop[]} stops
   * @param {number} step the step shown
   * @param {boolean} quiz
   * @param {boolean} playing
   * @returns {number} the step to seek to, or -1 (none, or that seek is already on its way)
   */
  hold(stops, step, quiz, playing) {
    if (this.holding === step) this.holding = -1;
    const k = this.question(stops, step, quiz);
    if (k < 0 || !this.held) return -1;
    const ask = /** @type {import('./tour.js').Question} */ (stops[k].question).ask;
    if (step < ask || (step === ask && !playing)) return -1;
    this.open = k;
    this.sticky = true;
    if (this.holding === ask && step !== ask) return -1;
    this.holding = ask;
    return ask;
  }

  /**
   * Before a draw: the open question opens its stop; otherwise the tour follows the step unless
   * the user opened a stop.
   * @param {Stop[]} stops
   * @param {number} step
   * @param {boolean} quiz
   * @returns {number} the open question's stop, or -1
   */
  follow(stops, step, quiz) {
    const q = this.question(stops, step, quiz);
    if (q >= 0) this.open = q;
    else if (!this.sticky) this.open = stopAt(stops, step);
    return q;
  }

  /**
   * Opens stop k and returns the step the view goes to (in a quiz, where its question is asked).
   * @param {Stop[]} stops
   * @param {number} k
   * @param {boolean} quiz
   * @returns {number} the step, or -1 when there is no stop k
   */
  openStop(stops, k, quiz) {
    if (k < 0 || k >= stops.length) return -1;
    this.open = k;
    this.sticky = true;
    return stopStep(stops[k], quiz && !this.answered.has(k));
  }

  /**
   * Returns the stop n opens: the next one; in a quiz, an unanswered question asked on the way to
   * it comes first, so that n stops at every question (the one asked earliest).
   * @param {Stop[]} stops
   * @param {number} [step] the step shown
   * @param {boolean} [quiz]
   * @returns {number}
   */
  nextStop(stops, step = 0, quiz = false) {
    const k = nextStop(stops, this.open);
    if (!quiz || k < 0) return k;
    const to = stopStep(stops[k], !this.answered.has(k));
    let best = -1;
    for (let j = 0; j < stops.length; j++) {
      const q = stops[j].question;
      if (j === k || j === this.open || !q || this.answered.has(j) || q.ask <= step || q.ask > to) continue;
      if (best < 0 || q.ask < /** @type {import('./tour.js').Question} */ (stops[best].question).ask) best = j;
    }
    return best >= 0 ? best : k;
  }

  /** @param {Stop[]} stops @returns {number} the stop p opens */
  prevStop(stops) { return prevStop(stops, this.open); }

  /** The user moved the view by hand: the tour follows the step again. */
  unstick() { this.sticky = false; }

  /**
   * Checks an answer to the question open at step and returns the message that sends it, or null
   * (no question, or an answer the question cannot take: hint says why).
   * @param {Stop[]} stops
   * @param {number} step
   * @param {string} raw
   * @param {number} max the largest number an answer may be (the range's slots)
   * @returns {{type: 'answer', stop: number, answer: string}|null}
   */
  answer(stops, step, raw, max) {
    const k = openQuestion(stops, step, this.answered, this.held);
    if (k < 0) return null;
    const c = checkAnswer(/** @type {import('./tour.js').Question} */ (stops[k].question), raw, max);
    if (!c.ok) {
      this.hint = c.hint;
      return null;
    }
    this.hint = '';
    this.waiting = k;
    return { type: 'answer', stop: k, answer: c.value };
  }
}
