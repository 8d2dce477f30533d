package web

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/player"
	"github.com/zrviz/zrviz/request"
)

// wsWriteTimeout is how long one message may take to reach a client before the client is
// considered too slow and dropped.
const wsWriteTimeout = 10 * time.Second

// frameInterval paces frames while playing: at most ~30 a second, however fast the run goes; a
// faster run packs more steps into each frame.
const frameInterval = time.Second / 30

// maxFrameEvents bounds the events in one frame; beyond it the frame is sent full and says how many
// events it left out.
const maxFrameEvents = 256

// maxTickSeconds bounds the time one tick may account for after a stall (GC, a slow machine): the
// clock then slips rather than bursting.
const maxTickSeconds = 0.25

// session is one websocket connection's player loop.
type session struct {
	s       *Server
	c       *conn  // set once the upgrade is accepted
	client  string // the client's address (rooms per client)
	t       *runTarget
	o       *player.Outline
	p       *player.Player
	tr      player.Tracker
	playing bool
	pace    string  // a pacePresets value, or "" for a speed set in steps per second
	speed   float64 // steps per second
	acc     float64 // fractional steps owed by the play clock
	last    time.Time
	bad     int // malformed controls so far
	score   score
	done    map[int]bool // quiz stops answered (solo) or revealed (a room's presenter)
	quiz    bool         // the quiz is on: the view is held at the first question not done (quizhold.go)
	release func()       // gives the viewer's memory back to the budget
	room    *room        // the room this session presents, or nil
	trace   *traceView   // an attached kernel trace, or nil
	query   url.Values   // the connection's query (the trace fields, for a mode change)

	evs        []wireEvent // events since the last frame
	evsDropped int64       // events since the last frame not in evs
	spanLo     uint64      // slots the events since the last frame may have changed: [spanLo, spanHi)
	spanHi     uint64

	ticker  *time.Ticker // the play clock, running while ticking
	ticking bool
}

// isUpgrade reports whether r asks for a websocket, checked before any work is done for it.
func isUpgrade(r *http.Request) bool {
	return headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket")
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// errNotUpgrade is a plain HTTP request to the websocket endpoint (426).
var errNotUpgrade = &Error{Code: EUPGRADE, Message: "this endpoint speaks websocket only: send Connection: Upgrade and Upgrade: websocket"}

// handleWSRun upgrades to a websocket and plays one run for the client. The upgrade is checked
// before anything else, and everything that can be refused is refused before it, so the client gets
// the API's status codes and JSON errors; the work before the upgrade ends with the request.
func (s *Server) handleWSRun(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	t, err := s.resolvePlayerRun(r.Context(), q)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	step, err := stepParam(q)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	pace := q.Get("pace")
	if pace == "" {
		pace = strings.TrimSuffix(strings.TrimSuffix(q.Get("p"), "s"), "S")
	}
	if _, ok := findPace(pace); !ok {
		pace = defaultPace
	}
	ss := &session{s: s, t: t, pace: pace, done: map[int]bool{}, client: clientIP(r), quiz: q.Get("quiz") == "1"}
	if err := ss.open(r.Context(), t); err != nil {
		s.Error(w, r, err)
		return
	}
	defer func() { ss.release() }()
	ss.done = parseAnswered(q.Get("answered"), ss.o)
	if err := ss.p.Goto(step); err != nil {
		s.Error(w, r, err)
		return
	}
	ss.query = q
	if ss.trace, err = s.attachTrace(q, t, ss.o); err != nil {
		s.Error(w, r, err)
		return
	}
	if code := q.Get("room"); code != "" {
		// The presenter's page, reloaded: it takes its room back with the token it kept (which
		// never appears in a follow URL).
		rm, err := s.reclaimRoom(ss, code, q.Get("token"))
		if err != nil {
			s.Error(w, r, err)
			return
		}
		ss.room = rm
		ss.quiz, ss.done = rm.quizState()
	}
	defer func() {
		if ss.room != nil {
			ss.room.presenterGone(ss)
		}
	}()
	s.serveWS(w, r, s.log.With("image", t.info.Image, "path", t.info.Path, "mode", t.info.Mode), ss)
}

// viewerBytes is what a viewer of o reserves from the budget.
func viewerBytes(o *player.Outline) int64 { return o.ViewerBytes() }

// open builds (or finds) the outline of t and a player on it, within the memory budget.
func (ss *session) open(ctx context.Context, t *runTarget) error {
	o, err := ss.s.outline(ctx, t)
	if err != nil {
		return err
	}
	p, release, err := ss.s.newPlayer(o, func() {})
	if err != nil {
		return err
	}
	if ss.release != nil {
		ss.release()
	}
	ss.t, ss.o, ss.p, ss.release, ss.tr = t, o, p, release, player.Tracker{}
	ss.setPace(ss.pace)
	return nil
}

// newPlayer makes a player of o within the memory budget; release gives its memory back and then
// calls also (what else the caller held for it).
func (s *Server) newPlayer(o *player.Outline, also func()) (p *player.Player, release func(), err error) {
	mem, err := s.budget.reserve(viewerBytes(o))
	if err != nil {
		also()
		return nil, nil, err
	}
	release = func() { mem(); also() }
	if p, err = player.New(o); err != nil {
		release()
		return nil, nil, err
	}
	return p, release, nil
}

// setPace sets the play speed from a pace: the run plays to its end in that many seconds, however
// long it is (at least one step a second... slower only for "step"), or one step a second.
func (ss *session) setPace(pace string) {
	ss.pace = pace
	p, ok := findPace(pace)
	switch {
	case !ok: // "": a speed set in steps per second
	case p.Seconds == 0:
		ss.speed = 1
	default:
		ss.speed = min(max(float64(ss.o.Total)/p.Seconds, minSpeed), maxSpeed)
	}
}

// timeLeft is how long the rest of the run plays at the current speed, in seconds.
func (ss *session) timeLeft() float64 {
	if ss.speed <= 0 {
		return 0
	}
	return float64(ss.o.Total-ss.p.Step()) / ss.speed
}

// start is the connection's first act (connOwner): the hello. The ticker that paces play runs only
// while playing, so an idle player costs nothing.
func (ss *session) start(c *conn) error {
	if ss.room != nil {
		// A presenter that reclaimed its room is in it already: the room reads ss.c under its lock.
		ss.room.mu.Lock()
		ss.c = c
		ss.room.mu.Unlock()
	} else {
		ss.c = c
	}
	ss.ticker = time.NewTicker(frameInterval)
	ss.ticker.Stop()
	c.log.Debug("websocket run start")
	ss.sendHello()
	return nil
}

// stop ends the play clock (connOwner).
func (ss *session) stop() {
	ss.ticker.Stop()
	ss.c.log.Debug("websocket run end", "step", ss.p.Step())
}

// control applies one client message (connOwner).
func (ss *session) control(b []byte) string { return ss.handleControl(b) }

// timer is the play clock while playing, else nil (connOwner).
func (ss *session) timer() <-chan time.Time {
	if ss.playing != ss.ticking {
		if ss.ticking = ss.playing; ss.ticking {
			ss.ticker.Reset(frameInterval)
		} else {
			ss.ticker.Stop()
		}
	}
	if !ss.ticking {
		return nil
	}
	return ss.ticker.C
}

// ended is nil: only the client, the server or a slow write end a player (connOwner).
func (ss *session) ended() <-chan string { return nil }

// writeTimeout returns the per-write timeout (shortened by tests).
func (s *Server) writeTimeout() time.Duration {
	if s.wsWriteTimeout > 0 {
		return s.wsWriteTimeout
	}
	return wsWriteTimeout
}

// handleControl applies one client message and answers it. It returns why the connection must
// end, or "".
func (ss *session) handleControl(b []byte) string {
	c, err := decodeControl(b)
	if b == nil {
		err = controlError("binary messages are not supported")
	}
	if err != nil {
		ss.bad++
		ss.sendError(err, false)
		if ss.bad >= maxBadControls {
			return whyBad
		}
		return ""
	}
	full := true
	switch c.Type {
	case ctlPlay:
		if ss.p.Done() {
			// Play at the end starts over, as a media player does.
			ss.seek(0)
		}
		ss.playing, ss.acc, ss.last = true, 0, time.Now()
		full = false
	case ctlPause:
		ss.playing = false
		full = false
	case ctlStep:
		ss.playing = false
		if c.N > 0 {
			ss.forward(c.N)
			full = ss.evsDropped > 0
		} else {
			ss.seek(ss.p.Step() + c.N)
		}
	case ctlSeek:
		ss.playing = false
		ss.seek(c.Step)
	case ctlSpeed:
		ss.speed, ss.pace = c.Speed, ""
		full = false
	case ctlPace:
		ss.setPace(c.Pace)
		full = false
	case ctlMode:
		ss.playing = false
		if ss.hold() != nil {
			// Another mode's view at the same point would show what the open question and the
			// later ones ask (its chunks' calls, its end), and back here they would be asked again.
			ss.sendError(errQuizMode, false)
			return ""
		}
		if err := ss.switchMode(c.Mode); err != nil {
			ss.sendError(err, false)
		}
		return ""
	case ctlNextCall:
		ss.playing = false
		_, err := ss.p.NextCall(ss.collect)
		if err != nil {
			ss.sendError(err, false)
		}
		full = ss.evsDropped > 0
	case ctlEnd:
		ss.playing = false
		ss.seek(ss.o.Total)
	case ctlReset:
		ss.playing = false
		ss.seek(0)
	case ctlGotoSlot:
		ss.playing = false
		if err := ss.p.GotoSlot(c.Slot); err != nil {
			ss.sendError(err, false)
		}
		ss.resetEvents()
	case ctlInitial:
		m, err := initialReply(ss.o, c.Slot)
		if err != nil {
			ss.sendError(err, false)
			return ""
		}
		if ss.queue(m, false) != nil {
			return whySlow
		}
		return ""
	case ctlAnswer:
		ss.playing = false
		if !ss.answer(c.Stop, c.Answer) {
			return ""
		}
	case ctlRoom:
		if ss.room == nil && ss.s.cfg.Static {
			ss.sendError(Errorf(ESERVERONLY, "rooms need the zrviz server (zrviz serve): this is the static site, "+
				"which runs in your browser and cannot reach another's"), false)
			return ""
		}
		if ss.room == nil {
			rm, err := ss.s.startRoom(ss)
			if err != nil {
				ss.sendError(err, false)
				return ""
			}
			ss.room = rm
		}
		ss.queue(&roomMsg{V: protocolVersion, Type: "room", roomInfo: *ss.room.info(true)}, false)
		return ""
	case ctlUI:
		if ss.room == nil {
			ss.sendError(controlError("ui: not in a room"), false)
			return ""
		}
		ss.room.setUI(ss, c.UI)
		if c.UI.Quiz != ss.quiz {
			// The room's quiz holds the presenter's view, and so every follower's.
			ss.quiz = c.UI.Quiz
			ss.holdMoved()
		} else {
			return ""
		}
	case ctlReveal:
		ss.playing = false
		if ss.room == nil || c.Stop >= len(ss.o.Stops) || ss.o.Stops[c.Stop].Question == nil {
			ss.sendError(controlError("reveal: not in a room, or that stop has no question"), false)
			return ""
		}
		ss.room.reveal(ss, c.Stop)
		q := ss.o.Stops[c.Stop].Question
		ss.queue(&quizMsg{V: protocolVersion, Type: "quiz", Stop: c.Stop, Answer: q.Answer, Score: ss.score}, false)
		if !ss.done[c.Stop] {
			ss.done[c.Stop] = true
			ss.holdMoved()
		}
		ss.seek(q.Reveal)
	}
	ss.sendFrame(full)
	return ""
}

// initialReply is the answer to an "initial" control, a player's or a follower's: the page of o's
// initial slot map from file block index from.
func initialReply(o *player.Outline, from uint64) (*initialMsg, error) {
	ext, next, err := o.InitialSlots(from, initialPage)
	if err != nil {
		return nil, err
	}
	return &initialMsg{V: protocolVersion, Type: "initial",
		initialPageMsg: initialPageMsg{From: max(from, o.Range.Start), Next: next, Extents: ext}}, nil
}

// answer checks a quiz answer for stop k, tells the client, and moves to the step that reveals it.
func (ss *session) answer(k int, ans string) bool {
	if k >= len(ss.o.Stops) || ss.o.Stops[k].Question == nil {
		ss.sendError(controlError("answer: that stop has no question"), false)
		return false
	}
	q := ss.o.Stops[k].Question
	// A slip ("abc" for a segment number) does not use the question up (web/quizcheck.go).
	if _, err := checkAnswer(q, ans, ss.o.Range.End-ss.o.Range.Start); err != nil {
		ss.sendError(controlError("answer: "+err.Error()), false)
		return false
	}
	ok := q.Check(ans)
	first := !ss.done[k]
	if first {
		ss.done[k] = true
		ss.score.Asked++
		if ok {
			ss.score.Right++
		}
	}
	ss.queue(&quizMsg{V: protocolVersion, Type: "quiz", Stop: k, Correct: ok, Answer: q.Answer, Score: ss.score}, false)
	if first {
		if ss.room != nil {
			// A presenter's own answer passes the question for the whole room: its frames are
			// the followers'.
			ss.room.reveal(ss, k)
		}
		ss.holdMoved()
	}
	if ss.p.Step() <= q.Reveal {
		ss.forward(q.Reveal - ss.p.Step())
	} else {
		ss.seek(q.Reveal)
	}
	return true
}

// playClock is how many seconds of play one second of the wall clock makes: 1, or more under
// the tests that shorten plays (playClockScale).
func (s *Server) playClock() float64 {
	if f := math.Float64frombits(s.playClockScale.Load()); f > 1 {
		return f
	}
	return 1
}

// tick advances a playing run by the steps the clock owes and sends a frame (connOwner).
func (ss *session) tick(now time.Time) {
	if !ss.playing {
		return
	}
	dt := now.Sub(ss.last).Seconds()
	ss.last = now
	ss.acc += ss.speed * min(max(dt, 0), maxTickSeconds) * ss.s.playClock()
	n := int64(ss.acc)
	if n <= 0 {
		return
	}
	ss.acc -= float64(n)
	ss.forward(n)
	if h := ss.hold(); ss.p.Done() || h != nil && ss.p.Step() >= h.Ask {
		ss.playing = false
	}
	ss.sendFrame(ss.evsDropped > 0)
}

// collect keeps an event for the next frame and widens the span of slots it may have changed.
func (ss *session) collect(ev player.Event) bool {
	if len(ss.evs) < maxFrameEvents {
		ss.evs = append(ss.evs, makeWireEvent(ev))
	} else {
		ss.evsDropped++
	}
	lo, hi := ev.Slot, ev.Slot+1
	switch {
	case ev.Kind == core.EvInlineConvert:
		lo, hi = 0, 1
	case ev.Kind == core.EvFillZero:
	case ev.Chunk >= 0 && int(ev.Chunk) < len(ss.o.Chunks):
		c := ss.o.Chunks[ev.Chunk]
		lo, hi = c.Start, c.Start+c.Len
	}
	if ss.spanHi <= ss.spanLo {
		ss.spanLo, ss.spanHi = lo, hi
	} else {
		ss.spanLo, ss.spanHi = min(ss.spanLo, lo), max(ss.spanHi, hi)
	}
	return true
}

// forward takes up to n steps, collecting events for the next frame.
func (ss *session) forward(n int64) {
	if h := ss.hold(); h != nil {
		n = min(n, h.Ask-ss.p.Step())
	}
	if n <= 0 {
		return
	}
	if _, err := ss.p.Forward(n, ss.collect); err != nil {
		ss.sendError(err, false)
	}
}

// seek jumps to step (clamped); the next frame must be full.
func (ss *session) seek(step int64) {
	if err := ss.p.Goto(step); err != nil {
		ss.sendError(err, false)
	}
	ss.resetEvents()
}

func (ss *session) resetEvents() {
	ss.evs, ss.evsDropped, ss.spanLo, ss.spanHi = ss.evs[:0], 0, 0, 0
}

// switchMode replaces the player with one for mode at the same point of the run (player.Follow), and
// sends a new hello.
func (ss *session) switchMode(mode string) error {
	modes, err := request.ParseModes(mode)
	if err != nil {
		return err
	}
	if request.ModesName(modes) == ss.t.info.Mode {
		ss.sendFrame(true)
		return nil
	}
	from := ss.p
	old := *ss
	ctx, cancel := context.WithTimeout(ss.s.srvCtx, outlineTimeout)
	defer cancel()
	if err := ss.open(ctx, ss.t.withModes(modes)); err != nil {
		ss.t, ss.o, ss.p, ss.release, ss.tr = old.t, old.o, old.p, old.release, old.tr
		return err
	}
	if err := ss.p.Follow(from); err != nil {
		return err
	}
	// Another mode's tour has other stops. A mode changes only with nothing held (see ctlMode):
	// with the quiz on, the view has shown all of the run, so none of the new tour's questions is
	// asked; with it off, the ones asked before the view's step are behind it (turning the quiz
	// on asks from here).
	ss.done = allQuestions(ss.o)
	if !ss.quiz {
		ss.done = pastQuestions(ss.o, ss.p.Step())
	}
	if ss.trace != nil {
		if ss.trace, err = ss.s.attachTrace(ss.query, ss.t, ss.o); err != nil {
			return err
		}
	}
	ss.sendHello()
	if ss.room != nil {
		ss.room.newRun(ss)
	}
	return nil
}

// sendHello queues the hello for the player's current outline and step.
func (ss *session) sendHello() {
	hold := ss.hold()
	ss.clamp(hold)
	h, err := buildHello(ss.t, ss.o, ss.p, &ss.tr, ss.view())
	if err != nil {
		ss.sendError(err, true)
		return
	}
	if ss.room != nil {
		h.Room = ss.room.info(true)
	}
	if ss.trace != nil {
		h.Trace, h.Kernel = &ss.trace.info, ss.trace.kernelBeside(h.State)
	}
	withholdHello(h, ss.o, hold)
	ss.queue(h, true)
	ss.resetEvents()
}

// viewState is what a hello says about the view besides the run: play state and quiz score.
type viewState struct {
	playing  bool
	pace     string
	speed    float64
	timeLeft float64
	score    score
}

// buildHello makes the hello of run t at player p's step (tr starts over: the hello is full).
func buildHello(t *runTarget, o *player.Outline, p *player.Player, tr *player.Tracker, vs viewState) (*helloMsg, error) {
	ext, next, err := o.InitialSlots(o.Range.Start, helloInitial)
	if err != nil {
		return nil, err
	}
	segTypes := make(map[string]int, len(o.SegTypes))
	for k, ty := range o.SegTypes {
		segTypes[i64s(int64(k))] = ty
	}
	return &helloMsg{V: protocolVersion, Type: "hello", Run: t.info, TotalSteps: o.Total, Step: p.Step(),
		Playing: vs.playing, Pace: vs.pace, StepsPerSecond: vs.speed, TimeLeft: vs.timeLeft,
		Geometry: t.geom,
		Range:    o.Range, Chunks: o.Chunks, Markers: o.Markers, MarkersThinned: o.Thinned, Stops: wireStops(o.Stops),
		Outcome: o.Outcome(), Segments: o.Segments, SegTypes: segTypes,
		Initial: initialPageMsg{From: o.Range.Start, Next: next, Extents: ext},
		Changed: p.Changed(o.Range.Start, o.Range.End), State: p.State(tr, true), Score: vs.score}, nil
}

// sendFrame queues a frame with the events since the last one. It is made full when asked, when
// events were left out, or when it replaces a frame the client never got (whose events and slot
// changes would otherwise be lost).
func (ss *session) sendFrame(full bool) {
	h := ss.hold()
	if ss.clamp(h) {
		full = true
	}
	full = full || ss.evsDropped > 0 || ss.c.box.pending()
	f := &frameMsg{V: protocolVersion, Type: "frame", Step: ss.p.Step(), Playing: ss.playing, Pace: ss.pace,
		StepsPerSecond: ss.speed, TimeLeft: ss.timeLeft(), Full: full, Events: ss.evs, EventsDropped: ss.evsDropped,
		State: ss.p.State(&ss.tr, full)}
	switch {
	case full:
		f.Changed = ss.p.Changed(ss.o.Range.Start, ss.o.Range.End)
	case ss.spanHi > ss.spanLo:
		f.Changed = ss.p.Changed(ss.spanLo, ss.spanHi)
	default:
		f.Changed = []core.Extent{}
	}
	if f.Events == nil {
		f.Events = []wireEvent{}
	}
	if h == nil {
		f.Kernel = ss.trace.kernelBeside(f.State)
	}
	veilNarration(f.State, f.Step, h)
	b, err := json.Marshal(f)
	if err != nil {
		ss.c.log.Error("websocket frame", "err", err)
		ss.resetEvents()
		return
	}
	ss.c.box.putFrame(b)
	if ss.room != nil {
		ss.room.publish(ss, b, f.Step, f.Full)
	}
	ss.resetEvents()
}

// hold is where the quiz holds this view, or nil.
func (ss *session) hold() *quizHold { return holdOf(ss.o, ss.quiz, ss.done) }

// clamp brings a view past hold h back to its ask step (the events past it are dropped) and
// reports whether it moved.
func (ss *session) clamp(h *quizHold) bool {
	if h == nil || ss.p.Step() <= h.Ask {
		return false
	}
	ss.playing = false
	ss.seek(h.Ask)
	return true
}

// holdMoved tells the client what a moved hold gives it (or takes back): the stops, chunks,
// markers and outcome it may now see.
func (ss *session) holdMoved() {
	h := ss.hold()
	if h == nil && ss.trace != nil {
		// Nothing held any more: an attached trace comes back with a hello (the hold message
		// carries no trace).
		ss.sendHello()
		return
	}
	ss.queue(newHoldMsg(ss.o, h), false)
}

// view is the play state a hello or a room's frames carry.
func (ss *session) view() viewState {
	return viewState{playing: ss.playing, pace: ss.pace, speed: ss.speed, timeLeft: ss.timeLeft(), score: ss.score}
}

// sendError queues an error message, worded and classed as the HTTP API would answer it.
func (ss *session) sendError(err error, fatal bool) { ss.s.sendError(ss.c, err, fatal) }

// queue marshals v and queues it ahead of any frame; see conn.send. A presenter reclaiming its room
// is in the room before its upgrade: what the room tells it then is in the hello it gets first.
func (ss *session) queue(v any, dropFrame bool) error {
	if ss.c == nil {
		return nil
	}
	return ss.c.send(v, dropFrame)
}
