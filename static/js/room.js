// Rooms (issue 10, "Follow a presenter"; docs/protocol.md, "Rooms: a class follows a presenter").
// A presenter's page starts a room ({"type":"room"}), shows its code, follow link and audience,
// keeps the presenter token in sessionStorage only (the page URL names the room, so a reload takes
// it back with &room=CODE&token=TOKEN on the socket), mirrors its open tour stop and quiz to the
// followers ({"type":"ui"}) and, in a quiz, sees how the followers answered before revealing. A
// follower's page (/follow/{code}) plays the presenter's frames, applies the room's ui, and may
// detach (an ordinary socket for the same run, at the same step) and rejoin with one key.

import { int } from './fmt.js';
import { followPage } from './links.js';
import { contract } from './contract.js';

/** sessionStorage key of the presenter token of room code. */
export function tokenKey(/** @type {string} */ code) { return `zrviz.room.${code}.token`; }

/** Bars shown in the answer distribution; the rest are summed in one line. */
export const MAX_BARS = 6;

/**
 * @typedef {object} Bar one answer's bar
 * @property {string} answer
 * @property {number} count
 * @property {number} frac its share of the answers, 0..1
 * @property {boolean} right it is the right answer (known after the reveal)
 */

/**
 * Orders the answers for the presenter: most given first (ties: numbers by value, then text),
 * at most max bars, the right answer among them once known, the rest summed.
 * @param {Record<string, number>} counts answer → followers who gave it; the server counts each
 *   answer in the form the question's answer is written in (player.Question.Normalise), so the
 *   right answer is looked up as it is
 * @param {string} [right] the right answer, once revealed (the question's answer, as the server sends it)
 * @param {number} [max]
 * @returns {{bars: Bar[], other: {answers: number, count: number}|null, total: number}}
 */
export function answerBars(counts, right = '', max = MAX_BARS) {
  const r = right || '';
  const all = Object.entries(counts || {}).filter(([, n]) => n > 0).map(([answer, count]) => ({ answer, count }));
  const num = (/** @type {string} */ s) => (/^\d+$/.test(s) ? Number(s) : NaN);
  all.sort((a, b) => b.count - a.count || cmpAnswer(a.answer, b.answer, num));
  const total = all.reduce((s, x) => s + x.count, 0);
  let shown = all.slice(0, max);
  if (r && !shown.some((x) => x.answer === r)) {
    const hit = all.find((x) => x.answer === r);
    if (hit) shown = [...shown.slice(0, max - 1), hit];
  }
  const rest = all.filter((x) => !shown.includes(x));
  return {
    bars: shown.map((x) => ({ answer: x.answer, count: x.count, frac: total ? x.count / total : 0, right: !!r && x.answer === r })),
    other: rest.length ? { answers: rest.length, count: rest.reduce((s, x) => s + x.count, 0) } : null,
    total,
  };
}

/**
 * @param {string} a
 * @param {string} b
 * @param {(s: string) => number} num
 * @returns {number}
 */
function cmpAnswer(a, b, num) {
  const x = num(a);
  const y = num(b);
  if (!Number.isNaN(x) && !Number.isNaN(y)) return x - y;
  if (!Number.isNaN(x)) return -1;
  if (!Number.isNaN(y)) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * "1 follower", "12 followers".
 * @param {number} n
 * @returns {string}
 */
export function followersText(n) {
  return `${int(n)} follower${n === 1 ? '' : 's'}`;
}

/**
 * How many answered: "3 of 5 followers answered".
 * @param {number} answered
 * @param {number} followers
 * @returns {string}
 */
export function answeredText(answered, followers) {
  return `${int(answered)} of ${followersText(followers)} answered`;
}

/**
 * @typedef {object} RoomInfo the room object of hello and room messages
 * @property {string} code
 * @property {string} role "presenter" or "follower"
 * @property {string} url
 * @property {string} [token]
 * @property {number} followers
 * @property {boolean} presenter the presenter is connected
 * @property {{stop: number, quiz: boolean, question: number}} ui
 * @property {boolean} [ended]
 * @property {number} [left] followers who left while the open question was asked
 */

/**
 * Why a follower may not detach now, or "": while the room's quiz is on, a detached view of its
 * own could pass the questions the presenter has not revealed (and its answer there would come
 * back to the room), so the page keeps the follower in the room until the presenter turns it off.
 * @param {RoomInfo|null} info
 * @returns {string}
 */
export function detachRefusal(info) {
  if (!info || info.ended || !info.ui || !info.ui.quiz) return '';
  return info.ui.question >= 0
    ? 'a question is open: you can detach when the presenter turns the quiz off'
    : 'the room\'s quiz is on: you can detach when the presenter turns it off';
}

/**
 * The presenter's line on followers who left while the open question was asked.
 * @param {RoomInfo|null} info
 * @returns {string}
 */
export function leftText(info) {
  const n = info && info.left ? info.left : 0;
  if (!n) return '';
  return `${int(n)} left during this question (their answers to it no longer count)`;
}

/**
 * What a follower's page says of its room.
 * @param {RoomInfo|null} info
 * @param {boolean} detached
 * @returns {string}
 */
export function followerStatus(info, detached) {
  if (info && info.ended) return 'the room has ended';
  const away = info && !info.presenter ? 'the presenter has left' : '';
  if (detached) return away ? `detached · ${away}` : 'detached: exploring on your own';
  if (away) return `${away}: the room waits 5 minutes for them`;
  return info ? 'following the presenter' : 'connecting';
}

/**
 * The room the page URL names, with the token this tab kept for it: a reloaded presenter page
 * takes its room back. A room that has gone (or a link without the token) is dropped from the URL.
 * @param {Document} doc
 * @returns {Promise<{room?: string, token?: string}>}
 */
export async function presenterRoomParams(doc) {
  const q = new URLSearchParams(location.search);
  const code = q.get('room') || '';
  if (!code) return {};
  let token = '';
  try { token = sessionStorage.getItem(tokenKey(code)) || ''; } catch { /* storage refused */ }
  let alive = false;
  if (token) {
    try { alive = (await fetch(followPage(code), { method: 'HEAD' })).ok; } catch { /* offline */ }
  }
  if (!alive) {
    q.delete('room');
    history.replaceState(null, '', `${location.pathname}${String(q) ? `?${q}` : ''}${location.hash}`);
    try { sessionStorage.removeItem(tokenKey(code)); } catch { /* storage refused */ }
    if (token) doc.body.dataset.roomGone = code;
    return {};
  }
  return { room: code, token };
}

/**
 * The page's room: a presenter's (start, code, link, followers, answers, reveal) or a
 * follower's (status, detach, rejoin).
 */
export class RoomUI {
  /**
   * @param {Document} doc
   * @param {string} follow the room's code on a follower's page, "" on a presenter's
   */
  constructor(doc, follow) {
    this.doc = doc;
    this.follow = follow;
    /** @type {import('./player.js').PlayerController|null} */
    this.ctl = null;
    /** @type {RoomInfo|null} */
    this.info = null;
    this.detached = false;
    /** the ui last sent to the room (presenter) */
    this.sentUI = '';
    this.queued = false;
    /** @type {Map<number, {counts: Record<string, number>, answered: number, followers: number}>} */
    this.answers = new Map();
    /** stop → the right answer, once revealed */
    /** @type {Map<number, string>} */
    this.right = new Map();
    /** @type {any} the run of the last hello (a detached follower opens it) */
    this.run = null;
    /** a room was asked for and has not come */
    this.starting = false;
  }

  /** @param {string} id */
  $(id) { return /** @type {HTMLElement} */ (this.doc.getElementById(id)); }

  /**
   * Wires the page's room controls to the player.
   * @param {import('./player.js').PlayerController} ctl
   */
  attach(ctl) {
    this.ctl = ctl;
    const doc = this.doc;
    if (this.follow) {
      ctl.setDriving(false);
      this.$('room-detach').addEventListener('click', () => this.detach());
      this.$('room-rejoin').addEventListener('click', () => this.rejoin());
      doc.addEventListener('keydown', (e) => {
        if (e.key !== 'f' || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
        e.preventDefault();
        if (this.detached) this.rejoin(); else this.detach();
      });
      this.render();
      return;
    }
    const gone = doc.body.dataset.roomGone;
    if (gone) this.status(`room ${gone} has ended; start another`);
    this.$('room-start').addEventListener('click', () => {
      this.starting = true;
      this.status('starting a room…');
      ctl.send({ type: 'room' });
    });
    this.$('room-copy').addEventListener('click', () => this.copy());
    this.$('room-reveal').addEventListener('click', () => {
      const k = this.shownStop();
      if (k >= 0) ctl.send({ type: 'reveal', stop: k });
    });
    ctl.onPresenterChange(() => this.schedule());
  }

  /** @param {string} s */
  status(s) {
    const el = this.$('room-status');
    if (el && el.textContent !== s) el.textContent = s;
  }

  /** @param {any} h a hello */
  hello(h) {
    this.run = h.run;
    if (h.room) this.take(h.room);
    else if (!this.follow && this.info) this.info = null; // reconnected without the room
    this.sentUI = '';
    this.schedule();
  }

  /** A frame: the presenter's open stop may have moved with the step. */
  frame() {
    if (this.info && !this.follow) this.schedule();
  }

  /** @param {any} m a message the player does not handle ("room", "answers", quiz verdicts) */
  message(m) {
    if (m.type === 'error') {
      // The answer to a room control that failed (the server's room limit, its memory budget).
      if (this.starting && !this.info) {
        this.starting = false;
        this.status(`no room: ${m.error || 'the server refused'}`);
      }
      return;
    }
    if (m.type === 'room') { this.starting = false; this.take(m); }
    else if (m.type === 'answers') {
      this.answers.set(m.stop, { counts: m.counts || {}, answered: m.answered || 0, followers: m.followers || 0 });
      this.schedule();
    } else if (m.type === 'quiz' && !this.follow && this.info && !m.pending && typeof m.answer === 'string') {
      this.right.set(m.stop, m.answer);
      this.schedule();
    }
  }

  /**
   * Takes what the server says of the room.
   * @param {RoomInfo} r
   */
  take(r) {
    if (this.follow && this.detached && !r.ended) {
      // A detached follower's socket is no longer the room's; an old message changes nothing.
      this.info = { ...r };
      this.render();
      return;
    }
    this.info = { ...r };
    if (r.role === 'presenter' && r.token) {
      try { sessionStorage.setItem(tokenKey(r.code), r.token); } catch { /* storage refused */ }
      // The token reconnects this page's socket and a reload of it; the URL names only the room.
      this.ctl?.params({ room: r.code, token: r.token });
      const q = new URLSearchParams(location.search);
      if (q.get('room') !== r.code) {
        q.set('room', r.code);
        history.replaceState(null, '', `${location.pathname}?${q}${location.hash}`);
      }
    }
    if (this.follow && !this.detached && r.ui && this.ctl) {
      this.ctl.applyPresenterState({ stop: r.ui.stop, quiz: r.ui.quiz, question: r.ui.question });
    }
    // A presenter's new room learns the page's tour stop and quiz at once.
    this.schedule();
  }

  /** Follower: explore the same run on its own, from the step shown. */
  detach() {
    if (!this.ctl || this.detached || !this.run) return;
    const no = detachRefusal(this.info);
    if (no) {
      this.status(no);
      return;
    }
    const r = this.run;
    const pace = this.ctl.presenterState().pace;
    this.detached = true;
    this.ctl.params({
      follow: '', image: r.image || '', path: r.path || '', offset: String(r.offset ?? '0'), length: String(r.length ?? ''),
      keepSize: !!r.keepSize, before: r.before || [], mode: r.mode || contract().modes.both, sandbox: r.sandbox || '',
      pace: ['10', '30', '60', '180', 'step'].includes(pace) ? pace : '',
    });
    this.ctl.reconnect();
    this.ctl.setDriving(true);
    this.render();
    const b = this.$('room-rejoin');
    if (this.doc.activeElement === this.$('room-detach') || this.doc.activeElement === this.doc.body) b.focus();
  }

  /** Follower: follow the presenter again (the hello brings the presenter's step). */
  rejoin() {
    if (!this.ctl || !this.detached || (this.info && this.info.ended)) return;
    this.detached = false;
    this.ctl.params({ follow: this.follow });
    this.ctl.reconnect();
    this.ctl.setDriving(false);
    this.render();
    const b = this.$('room-detach');
    if (this.doc.activeElement === this.$('room-rejoin') || this.doc.activeElement === this.doc.body) b.focus();
  }

  /** Copies the follow link. */
  async copy() {
    if (!this.info) return;
    const link = new URL(this.info.url, location.href).href;
    try {
      await navigator.clipboard.writeText(link);
      this.status('link copied');
    } catch {
      // No clipboard (an insecure origin): select the link for Ctrl+C.
      const a = this.$('room-url');
      const sel = getSelection();
      const range = this.doc.createRange();
      range.selectNodeContents(a);
      sel?.removeAllRanges();
      sel?.addRange(range);
      this.status('press Ctrl+C to copy the selected link');
    }
  }

  /** Renders and (presenter) sends the ui once the player has drawn the current state. */
  schedule() {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => {
      this.queued = false;
      this.sendUI();
      this.render();
    });
  }

  /** Presenter: tells the room the open stop, quiz and question when they changed. */
  sendUI() {
    if (this.follow || !this.info || !this.ctl || this.info.role !== 'presenter') return;
    const s = this.ctl.presenterState();
    const ui = { stop: s.stop, quiz: s.quiz, question: s.question };
    const key = JSON.stringify(ui);
    if (key === this.sentUI) return;
    this.sentUI = key;
    this.ctl.send({ type: 'ui', ...ui });
  }

  /** The stop whose answers the presenter sees: the open question, or the stop shown. */
  shownStop() {
    if (!this.ctl) return -1;
    const s = this.ctl.presenterState();
    if (!s.quiz) return -1;
    const k = s.question >= 0 ? s.question : s.stop;
    const stop = this.ctl.state.stops[k];
    return stop && stop.question ? k : -1;
  }

  render() {
    const doc = this.doc;
    const info = this.info;
    doc.body.classList.toggle('room-presenter', !!info && !this.follow && info.role === 'presenter');
    doc.body.classList.toggle('room-follower', !!this.follow && !this.detached);
    if (this.follow) {
      this.status(followerStatus(info, this.detached));
      const ended = !!(info && info.ended);
      const d = /** @type {HTMLButtonElement} */ (this.$('room-detach'));
      d.hidden = this.detached;
      const no = this.detached ? '' : detachRefusal(info);
      d.disabled = !!no;
      d.title = no || 'explore this run on your own (f); rejoin at any time';
      const rj = /** @type {HTMLButtonElement} */ (this.$('room-rejoin'));
      rj.hidden = !this.detached;
      rj.disabled = ended;
      const f = this.$('room-followers');
      const t = info && !this.detached ? `· ${followersText(info.followers)}` : '';
      if (f.textContent !== t) f.textContent = t;
      this.$('room-box').dataset.state = ended ? 'ended' : this.detached ? 'detached' : info ? 'following' : 'connecting';
      return;
    }
    const on = !!info && info.role === 'presenter';
    this.$('room-start').hidden = on;
    this.$('room-on').hidden = !on;
    this.$('room-box').dataset.role = on ? 'presenter' : 'none';
    if (on && info) {
      const code = this.$('room-code');
      if (code.textContent !== info.code) code.textContent = info.code;
      const a = /** @type {HTMLAnchorElement} */ (this.$('room-url'));
      const href = new URL(info.url, location.href).href;
      if (a.href !== href) { a.href = href; a.textContent = href; }
      const f = this.$('room-followers');
      const lt = leftText(info);
      const t = followersText(info.followers) + (lt ? ` · ${lt}` : '');
      if (f.textContent !== t) f.textContent = t;
      const st = this.$('room-status').textContent || '';
      if (/^(starting|room .* has ended)/.test(st)) this.status('');
    }
    this.renderAnswers();
  }

  /** Presenter: the distribution of the followers' answers to the question shown. */
  renderAnswers() {
    const box = this.$('room-answers');
    if (!box) return;
    const k = this.info && !this.follow ? this.shownStop() : -1;
    box.hidden = k < 0;
    if (k < 0) return;
    const a = this.answers.get(k) || { counts: {}, answered: 0, followers: this.info ? this.info.followers : 0 };
    const right = this.right.get(k) || '';
    const key = `${k}:${JSON.stringify(a)}:${right}`;
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.dataset.stop = String(k);
    const { bars, other, total } = answerBars(a.counts, right);
    let head = answeredText(a.answered, Math.max(a.followers, a.answered));
    if (right) {
      const n = a.counts[right] || 0;
      head += ` · the answer is ${right}: ${int(n)} right`;
    }
    this.$('room-answered').textContent = head;
    const reveal = /** @type {HTMLButtonElement} */ (this.$('room-reveal'));
    reveal.disabled = !!right;
    reveal.textContent = right ? 'revealed' : 'reveal';
    const ol = this.$('answer-bars');
    const rows = bars.map((b) => bar(this.doc, b.answer, b.count, total, b.right));
    if (other) rows.push(bar(this.doc, `${int(other.answers)} other answer${other.answers === 1 ? '' : 's'}`, other.count, total, false));
    if (!rows.length) {
      const li = this.doc.createElement('li');
      li.className = 'none';
      li.textContent = 'no answers yet';
      rows.push(li);
    }
    ol.replaceChildren(...rows);
  }
}

/**
 * One answer's bar: the answer, a bar as long as its share, the count.
 * @param {Document} doc
 * @param {string} answer
 * @param {number} count
 * @param {number} total
 * @param {boolean} right
 * @returns {HTMLLIElement}
 */
function bar(doc, answer, count, total, right) {
  const li = doc.createElement('li');
  li.dataset.testid = 'answer-bar';
  li.dataset.answer = answer;
  li.dataset.count = String(count);
  if (right) li.className = 'right';
  const label = doc.createElement('span');
  label.className = 'ans';
  label.textContent = right ? `✓ ${answer}` : answer;
  const track = doc.createElement('span');
  track.className = 'track';
  const fill = doc.createElement('span');
  fill.className = 'fill';
  // CSSOM, not a style attribute: the CSP allows it.
  fill.style.width = `${total ? Math.round((count / total) * 100) : 0}%`;
  track.append(fill);
  const n = doc.createElement('span');
  n.className = 'n';
  n.textContent = int(count);
  li.append(label, track, n);
  li.setAttribute('aria-label', `${answer}: ${count} of ${total}${right ? ', the right answer' : ''}`);
  return li;
}

/**
 * Reports whether a key event's target takes typing.
 * @param {EventTarget|null} t
 * @returns {boolean}
 */
function typing(t) {
  const el = /** @type {HTMLElement|null} */ (t);
  if (!el || !el.tagName) return false;
  if (el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable) return true;
  return el.tagName === 'INPUT' && !['checkbox', 'radio', 'range', 'button', 'submit'].includes(/** @type {HTMLInputElement} */ (el).type);
}
