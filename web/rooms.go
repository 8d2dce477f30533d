package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/zrviz/zrviz/player"
)

// A room lets a lecturer drive every student's screen: the presenter's player session publishes its
// frames to the room, which hands the same encoded bytes to every follower (newest wins, as for any
// client); a follower that missed a frame gets a full one, built once for all who need it from the
// room's own player. Followers may answer the presenter's quiz questions; the presenter sees how
// the answers spread before revealing. Rooms live in memory and end roomLinger after the presenter
// leaves. The room protocol is in docs/protocol.md.

// Room limits.
const (
	maxRooms          = 64
	maxRoomsPerClient = 4 // rooms one address may hold, so one client cannot take them all
	maxFollowers      = 1000
	roomLinger        = 5 * time.Minute
	unjoinedLinger    = 30 * time.Second // for a room nobody ever joined
	infoInterval      = 250 * time.Millisecond
	followerBytes     = 64 << 10 // what a follower holds besides its queue: a mailbox and two goroutines
	roomCodeBytes     = 5        // 40 random bits: 8 base32 letters
	roomTokenBytes    = 20
)

// code32 spells random bytes in lower-case base32 without padding (no 0/1/8 confusion with o/l/b:
// the standard alphabet has none of 0, 1, 8, 9).
var code32 = base32.StdEncoding.WithPadding(base32.NoPadding)

func randomCode(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return strings.ToLower(code32.EncodeToString(b))
}

// roomInfo is what a page knows of its room.
type roomInfo struct {
	Code      string `json:"code"`
	Role      string `json:"role"` // "presenter" or "follower"
	URL       string `json:"url"`  // the follow page
	Token     string `json:"token,omitempty"`
	Followers int    `json:"followers"`
	Presenter bool   `json:"presenter"` // the presenter is connected
	UI        roomUI `json:"ui"`
	Ended     bool   `json:"ended,omitempty"`
	// Left counts the followers who left while the open question was asked (a detach, a reload, a
	// closed tab): they cannot answer it when they come back (room.answer).
	Left int `json:"left"`
}

// roomUI is what the presenter shows besides the run, mirrored on the followers' pages.
type roomUI struct {
	Stop     int  `json:"stop"`     // open tour stop, -1 when none
	Quiz     bool `json:"quiz"`     // quiz mode
	Question int  `json:"question"` // the stop whose question is being asked, -1 when none
}

// roomMsg tells a page about its room.
type roomMsg struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	roomInfo
}

// answersMsg tells the presenter how the followers answered a question so far.
type answersMsg struct {
	V         int            `json:"v"`
	Type      string         `json:"type"`
	Stop      int            `json:"stop"`
	Counts    map[string]int `json:"counts"`
	Answered  int            `json:"answered"`
	Followers int            `json:"followers"`
}

// errNotPresenter is a follower trying to drive (a non-fatal error reply).
var errNotPresenter = controlError("only the presenter drives this room: detach to explore on your own")

// roomHub holds the rooms.
type roomHub struct {
	mu    sync.Mutex
	rooms map[string]*room
}

func newRoomHub() *roomHub { return &roomHub{rooms: map[string]*room{}} }

func (h *roomHub) get(code string) (*room, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.rooms[strings.ToLower(code)]
	return r, ok
}

// room is one presenter's audience. Its mutex guards its fields and is held only for bookkeeping:
// frames and hellos a follower needs are built by the room's builder goroutine, with the room's
// own player, outside it, so the presenter (who takes it about 30 times a second) never waits for
// an image read.
type room struct {
	hub    *roomHub
	s      *Server
	code   string
	token  string
	client string // the address that made it (maxRoomsPerClient)

	mu        sync.Mutex
	run       *roomRun // the run the room plays
	step      int64
	vs        viewState
	ui        roomUI
	presenter *session
	followers map[*follower]bool
	answers   map[int]map[*follower]string
	revealed  map[int]bool  // the questions the presenter revealed: with ui.Quiz, the room's hold
	holdGen   int           // counts the hold's moves: a hello built before one is built again
	seq       int64         // counts joins: a follower's joinSeq
	askedAt   map[int]int64 // question → seq when the presenter first asked it
	left      int           // followers gone while the open question was asked
	timer     *time.Timer
	joined    bool // somebody joined once: the room lingers the long time
	infoDue   bool // a coalesced room message is on its way
	ended     bool
	wake      chan struct{} // capacity 1: the builder has work
	done      chan struct{} // closed when the room ends
}

// roomRun is the run a room plays and its own player, used (under mu) to build the hellos and
// full frames followers need.
type roomRun struct {
	t       *runTarget
	o       *player.Outline
	mu      sync.Mutex
	p       *player.Player
	release func()
}

// follower is one follower's connection.
type follower struct {
	rm        *room
	c         *conn
	bad       int  // malformed or refused controls so far
	needHello bool // joined, or the run changed: the next message must be a hello
	needFull  bool // missed a frame: the next frame must be full
	score     score
	answered  map[int]string
	joinSeq   int64       // the room's seq when it joined: it answers only questions asked since
	end       chan string // why the room closed it
}

// newRoomRun makes the room's player for t, within the memory budget; the room holds t's image
// (an upload is never evicted or deleted under it) for as long as it plays it.
func (s *Server) newRoomRun(t *runTarget, o *player.Outline) (*roomRun, error) {
	hold, err := t.acquire()
	if err != nil {
		return nil, err
	}
	p, release, err := s.newPlayer(o, hold)
	if err != nil {
		return nil, err
	}
	return &roomRun{t: t, o: o, p: p, release: release}, nil
}

// retire gives a run's memory and image back once nobody builds with it.
func (rr *roomRun) retire() {
	go func() {
		rr.mu.Lock()
		defer rr.mu.Unlock()
		rr.release()
	}()
}

// startRoom makes ss the presenter of a new room.
func (s *Server) startRoom(ss *session) (*room, error) {
	rr, err := s.newRoomRun(ss.t, ss.o)
	if err != nil {
		return nil, err
	}
	h := s.rooms
	h.mu.Lock()
	defer h.mu.Unlock()
	mine := 0
	for _, r := range h.rooms {
		if r.client == ss.client {
			mine++
		}
	}
	if len(h.rooms) >= maxRooms || mine >= maxRoomsPerClient {
		rr.retire()
		limit := fmt.Sprintf("the server holds %d rooms, its limit", maxRooms)
		if mine >= maxRoomsPerClient {
			limit = fmt.Sprintf("this address holds %d rooms, the limit for one client", mine)
		}
		return nil, &Error{Code: EUNAVAILABLE, Message: limit + "; try again later", RetryAfter: time.Minute}
	}
	r := &room{hub: h, s: s, token: randomCode(roomTokenBytes), client: ss.client, run: rr,
		followers: map[*follower]bool{}, answers: map[int]map[*follower]string{}, ui: roomUI{Stop: -1, Question: -1, Quiz: ss.quiz},
		revealed: maps.Clone(ss.done), askedAt: map[int]int64{},
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	for {
		r.code = randomCode(roomCodeBytes)
		if _, taken := h.rooms[r.code]; !taken {
			break
		}
	}
	r.presenter = ss
	r.step, r.vs = ss.p.Step(), ss.view()
	h.rooms[r.code] = r
	go r.builder()
	s.log.Info("room started", "code", r.code, "image", ss.t.info.Image, "path", ss.t.info.Path)
	return r, nil
}

// reclaimRoom makes ss the presenter of room code again (a reload of the presenter's page).
func (s *Server) reclaimRoom(ss *session, code, token string) (*room, error) {
	r, ok := s.rooms.get(code)
	if !ok {
		return nil, notFound("room", code)
	}
	r.mu.Lock()
	same := r.run.t.key() == ss.t.key()
	valid := subtle.ConstantTimeCompare([]byte(token), []byte(r.token)) == 1 && !r.ended
	r.mu.Unlock()
	if !valid {
		return nil, notFound("room", code)
	}
	var rr *roomRun
	if !same {
		var err error
		if rr, err = s.newRoomRun(ss.t, ss.o); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		if rr != nil {
			rr.retire()
		}
		return nil, notFound("room", code)
	}
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if rr != nil {
		r.setRunLocked(rr)
	}
	r.presenter = ss
	r.step, r.vs = ss.p.Step(), ss.view()
	r.wakeLocked()
	r.broadcastInfoLocked()
	return r, nil
}

// setRunLocked points the room at another run (the presenter changed mode): every follower needs
// a new hello.
func (r *room) setRunLocked(rr *roomRun) {
	r.run.retire()
	r.run = rr
	r.answers = map[int]map[*follower]string{}
	r.revealed, r.askedAt, r.left = map[int]bool{}, map[int]int64{}, 0
	r.holdGen++
	for f := range r.followers {
		f.needHello = true
	}
	r.wakeLocked()
}

// info describes the room for its presenter (with the token) or a follower.
func (r *room) info(presenter bool) *roomInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.infoLocked(presenter)
}

func (r *room) infoLocked(presenter bool) *roomInfo {
	ri := &roomInfo{Code: r.code, Role: "follower", URL: "/follow/" + r.code, Followers: len(r.followers),
		Presenter: r.presenter != nil, UI: r.ui, Ended: r.ended, Left: r.left}
	if presenter {
		ri.Role, ri.Token = "presenter", r.token
	}
	return ri
}

// publish hands a frame the presenter just made to every follower: the same bytes, or — for a
// follower that has not taken the previous one — a full frame the builder makes once for all of
// them. It does no more than that under the room's lock.
func (r *room) publish(ss *session, b []byte, step int64, full bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.presenter != ss {
		return
	}
	r.step, r.vs = step, ss.view()
	behind := false
	for f := range r.followers {
		switch {
		case f.needHello:
		case full:
			f.c.box.putFrame(b)
			f.needFull = false
		case f.needFull || f.c.box.pending():
			f.needFull, behind = true, true
		default:
			f.c.box.putFrame(b)
		}
	}
	if behind {
		r.wakeLocked()
	}
}

func (r *room) wakeLocked() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// builder makes the hellos and full frames followers need, at the presenter's newest step, with
// the room's own player and outside the room's lock; one encoding serves every follower that needs
// it. It runs until the room ends.
func (r *room) builder() {
	for {
		select {
		case <-r.done:
			return
		case <-r.wake:
		}
		for r.buildOnce() {
		}
	}
}

// buildOnce serves the followers waiting for a hello or a full frame, and reports whether some
// still wait (the presenter moved on meanwhile, the run changed, or a follower's score did). The
// room's lock is held only to copy what is needed (snapshotLocked) and to hand the bytes out
// (deliverLocked); the messages are built and encoded between, by buildRoom, which is given values
// only.
func (r *room) buildOnce() bool {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return false
	}
	sn := r.snapshotLocked()
	r.mu.Unlock()
	if !sn.hello && !sn.full {
		return false
	}

	built, err := buildRoom(sn)

	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		// The room's player failed where the presenter's did not (an image read): the followers
		// are told and let go rather than left waiting.
		r.s.log.Error("room", "code", r.code, "err", err)
		for f := range r.followers {
			if f.needHello || f.needFull {
				r.s.sendError(f.c, err, true)
				f.kick()
			}
		}
		return false
	}
	return r.deliverLocked(sn, built)
}

// roomSnap is what the builder copies from the room under its lock: the run at the presenter's step,
// the view, and what the followers wait for.
type roomSnap struct {
	rr      *roomRun
	step    int64
	vs      viewState
	info    roomInfo
	hello   bool      // some follower needs a hello
	full    bool      // some follower (with its hello) needs a full frame
	scores  []score   // the distinct scores of the followers waiting for a hello
	hold    *quizHold // the room's quiz hold (quizhold.go), nil for none
	holdGen int
}

// snapshotLocked copies what buildRoom needs (r.mu held).
func (r *room) snapshotLocked() roomSnap {
	sn := roomSnap{rr: r.run, step: r.step, vs: r.vs, info: *r.infoLocked(false), hold: r.holdLocked(), holdGen: r.holdGen}
	for f := range r.followers {
		if f.needHello {
			sn.hello = true
			if !slices.Contains(sn.scores, f.score) {
				sn.scores = append(sn.scores, f.score)
			}
		}
		sn.full = sn.full || f.needFull && !f.needHello
	}
	return sn
}

// roomBuilt is what buildRoom made: a hello encoded per score, and a full frame.
type roomBuilt struct {
	hellos map[score][]byte // nil when no hello was asked for
	frame  []byte           // nil when no full frame was asked for
}

// buildRoom makes the hellos and the full frame sn asks for with the room's own player (under the
// run's lock, not the room's). It takes the snapshot by value and no room, so no hello or frame is
// encoded under the room's lock: the presenter, who takes that lock about 30 times a second, never
// waits for an encoding. One encoding serves every follower with the same score (followers who
// joined have none; after a mode change most share one).
func buildRoom(sn roomSnap) (roomBuilt, error) {
	rr := sn.rr
	rr.mu.Lock()
	defer rr.mu.Unlock()
	var out roomBuilt
	if err := rr.p.Goto(sn.step); err != nil {
		return out, err
	}
	if sn.hello {
		h, err := buildHello(rr.t, rr.o, rr.p, &player.Tracker{}, sn.vs)
		if err != nil {
			return out, err
		}
		h.Room = &sn.info
		withholdHello(h, rr.o, sn.hold)
		if out.hellos, err = encodeHellos(h, sn.scores); err != nil {
			return out, err
		}
	}
	if sn.full {
		vs := sn.vs
		st := rr.p.State(&player.Tracker{}, true)
		veilNarration(st, rr.p.Step(), sn.hold)
		b, err := json.Marshal(&frameMsg{V: protocolVersion, Type: "frame", Step: rr.p.Step(), Playing: vs.playing,
			Pace: vs.pace, StepsPerSecond: vs.speed, TimeLeft: vs.timeLeft, Full: true, Events: []wireEvent{},
			State: st, Changed: rr.p.Changed(rr.o.Range.Start, rr.o.Range.End)})
		if err != nil {
			return out, fmt.Errorf("web: room frame: %w", err)
		}
		out.frame = b
	}
	return out, nil
}

// encodeHellos encodes h once for each of scores (h.Score is set to each in turn).
func encodeHellos(h *helloMsg, scores []score) (map[score][]byte, error) {
	out := make(map[score][]byte, len(scores))
	for _, sc := range scores {
		h.Score = sc
		b, err := json.Marshal(h)
		if err != nil {
			return nil, fmt.Errorf("web: room hello: %w", err)
		}
		out[sc] = b
	}
	return out, nil
}

// deliverLocked hands what buildRoom made to the followers waiting for it (r.mu held) and reports
// whether some still wait: the presenter moved on, the run changed, or a follower joined or was
// scored since the snapshot (no hello of its score was made).
func (r *room) deliverLocked(sn roomSnap, built roomBuilt) bool {
	if r.ended || r.run != sn.rr || r.holdGen != sn.holdGen {
		return !r.ended
	}
	again := false
	for f := range r.followers {
		switch {
		case f.needHello && built.hellos != nil:
			b, ok := built.hellos[f.score]
			if !ok {
				break
			}
			f.c.sendBytes(b, true) // a full queue kicks the follower
			f.needHello = false
			f.needFull = r.step != sn.step
		case f.needFull && !f.needHello && built.frame != nil:
			f.c.box.putFrame(built.frame)
			f.needFull = r.step != sn.step
		}
		again = again || f.needHello || f.needFull
	}
	return again
}

// kick ends a follower's connection as too slow (or failed).
func (f *follower) kick() { f.c.box.kickClient() }

// newRun follows the presenter to another run (a mode change).
func (r *room) newRun(ss *session) {
	rr, err := r.s.newRoomRun(ss.t, ss.o)
	if err != nil {
		r.s.log.Warn("room: the new run does not fit the budget; followers stay on the old one", "code", r.code, "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.presenter != ss || r.ended {
		rr.retire()
		return
	}
	r.setRunLocked(rr)
	r.revealed = maps.Clone(ss.done) // the presenter's: its frames are the followers'
	r.step, r.vs = ss.p.Step(), ss.view()
}

// setUI mirrors the presenter's open stop and quiz on the followers' pages.
func (r *room) setUI(ss *session, ui roomUI) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.presenter != ss {
		return
	}
	if ui.Question != r.ui.Question {
		r.left = 0
	}
	if _, asked := r.askedAt[ui.Question]; ui.Question >= 0 && !asked {
		r.askedAt[ui.Question] = r.seq
	}
	quiz := r.ui.Quiz
	r.ui = ui
	if quiz != ui.Quiz {
		r.holdMovedLocked()
	}
	r.broadcastInfoLocked()
}

// holdLocked is where the room's quiz holds its views: at the first question the presenter has
// not revealed (r.mu held).
func (r *room) holdLocked() *quizHold { return holdOf(r.run.o, r.ui.Quiz, r.revealed) }

// quizState is the room's quiz and the questions revealed, for a presenter taking the room back.
func (r *room) quizState() (bool, map[int]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ui.Quiz, maps.Clone(r.revealed)
}

// holdMovedLocked tells every follower with its hello what the room's moved hold gives it (or
// takes back); a hello being built is built again (r.mu held).
func (r *room) holdMovedLocked() {
	r.holdGen++
	b, err := json.Marshal(newHoldMsg(r.run.o, r.holdLocked()))
	if err != nil {
		r.s.log.Error("room hold", "code", r.code, "err", err)
		return
	}
	for f := range r.followers {
		if !f.needHello {
			f.c.sendBytes(b, false)
		}
	}
	r.wakeLocked()
}

// broadcastInfoLocked tells every page of the room how it stands, at once (the presenter acted).
// The followers' message is encoded once and replaces any not yet sent.
func (r *room) broadcastInfoLocked() {
	b, err := json.Marshal(&roomMsg{V: protocolVersion, Type: "room", roomInfo: *r.infoLocked(false)})
	if err != nil {
		r.s.log.Error("room message", "code", r.code, "err", err)
		return
	}
	for f := range r.followers {
		f.c.box.putInfo(b)
	}
	// A presenter that reclaimed the room is not connected yet (c is nil): its hello carries the room.
	if r.presenter != nil && r.presenter.c != nil {
		if b, err := json.Marshal(&roomMsg{V: protocolVersion, Type: "room", roomInfo: *r.infoLocked(true)}); err == nil {
			r.presenter.c.box.putInfo(b)
		}
	}
}

// countChangedLocked sends the follower count soon: joins and leaves are coalesced to at most one
// room message per infoInterval (newest wins), so a burst of n joins costs O(n) messages, not O(n²).
func (r *room) countChangedLocked() {
	if r.infoDue || r.ended {
		return
	}
	r.infoDue = true
	time.AfterFunc(infoInterval, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.infoDue = false
		if !r.ended {
			r.broadcastInfoLocked()
		}
	})
}

// join adds a follower; the builder makes its hello.
func (r *room) join(f *follower) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return notFound("room", r.code)
	}
	if len(r.followers) >= maxFollowers {
		return &Error{Code: EUNAVAILABLE, Message: fmt.Sprintf("room %s has %d followers, its limit", r.code, maxFollowers), RetryAfter: time.Minute}
	}
	f.needHello = true
	r.followers[f] = true
	r.seq++
	f.joinSeq = r.seq
	r.joined = true
	r.wakeLocked()
	r.countChangedLocked()
	return nil
}

func (r *room) leave(f *follower) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.followers[f] {
		return
	}
	delete(r.followers, f)
	for _, a := range r.answers {
		delete(a, f)
	}
	if q := r.ui.Question; r.ui.Quiz && q >= 0 && !r.revealed[q] {
		r.left++
		r.broadcastInfoLocked()
	}
	r.countChangedLocked()
}

// answer records a follower's answer to stop k's question (once) and tells the presenter how the
// answers spread; the verdict waits for the presenter's reveal.
func (r *room) answer(f *follower, k int, ans string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.run.o
	if k < 0 || k >= len(o.Stops) || o.Stops[k].Question == nil {
		return controlError("answer: that stop has no question")
	}
	// A slip does not use the question up, in a room either (web/quizcheck.go).
	// The answer counts in the form the question's Answer is written in, so that answers meaning
	// the same count together and the presenter's page finds the right one's count by the Answer.
	norm, err := checkAnswer(o.Stops[k].Question, ans, o.Range.End-o.Range.Start)
	if err != nil {
		return controlError("answer: " + err.Error())
	}
	// A follower who came (back) while the question was open may have seen its answer elsewhere
	// (a detached view, another tab): its answer is refused, not merely flagged.
	if at, asked := r.askedAt[k]; asked && f.joinSeq > at {
		return controlError("answer: you joined the room while this question was open: the next question counts")
	}
	if r.revealed[k] {
		return controlError("answer: the presenter has revealed this question's answer")
	}
	a := r.answers[k]
	if a == nil {
		a = map[*follower]string{}
		r.answers[k] = a
	}
	if _, done := a[f]; !done {
		a[f] = norm
	}
	f.c.send(&quizMsg{V: protocolVersion, Type: "quiz", Stop: k, Pending: true, Score: f.score}, false)
	r.spreadLocked(k)
	return nil
}

// spreadLocked sends the presenter the answers to stop k so far.
func (r *room) spreadLocked(k int) {
	if r.presenter == nil {
		return
	}
	counts := map[string]int{}
	for _, a := range r.answers[k] {
		counts[a]++
	}
	r.presenter.queue(&answersMsg{V: protocolVersion, Type: "answers", Stop: k, Counts: counts,
		Answered: len(r.answers[k]), Followers: len(r.followers)}, false)
}

// reveal gives every follower the verdict on stop k's question (scored once per stop).
func (r *room) reveal(ss *session, k int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.run.o
	if r.presenter != ss || k < 0 || k >= len(o.Stops) || o.Stops[k].Question == nil {
		return
	}
	q := o.Stops[k].Question
	if !r.revealed[k] {
		r.revealed[k] = true
		r.holdMovedLocked()
	}
	for f := range r.followers {
		m := &quizMsg{V: protocolVersion, Type: "quiz", Stop: k, Answer: q.Answer}
		if a, ok := r.answers[k][f]; ok {
			m.Correct = q.Check(a)
			if _, scored := f.answered[k]; !scored {
				f.answered[k] = a
				f.score.Asked++
				if m.Correct {
					f.score.Right++
				}
			}
		} else {
			m.Unanswered = true
		}
		m.Score = f.score
		f.c.send(m, false)
	}
	r.spreadLocked(k)
}

// presenterGone starts the room's end clock; the presenter may come back with its token. A room
// nobody joined ends soon: it holds one of the server's rooms for no one.
func (r *room) presenterGone(ss *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.presenter != ss {
		return
	}
	r.presenter = nil
	r.vs.playing = false
	r.broadcastInfoLocked()
	linger := r.s.roomLinger()
	if !r.joined {
		linger = min(linger, unjoinedLinger)
	}
	r.timer = time.AfterFunc(linger, r.end)
}

// end closes the room: its followers are told and let go.
func (r *room) end() {
	r.hub.mu.Lock()
	if r.hub.rooms[r.code] == r {
		delete(r.hub.rooms, r.code)
	}
	r.hub.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	r.ended = true
	close(r.done)
	r.broadcastInfoLocked() // Ended: true, replacing any room message not yet sent
	for f := range r.followers {
		select {
		case f.end <- whyEnded:
		default:
		}
	}
	r.run.retire()
	r.s.log.Info("room ended", "code", r.code)
}

// roomLinger is how long a room outlives its presenter (shortened by tests).
func (s *Server) roomLinger() time.Duration {
	if d := time.Duration(s.roomLingerFor.Load()); d > 0 {
		return d
	}
	return roomLinger
}

// handleWSFollow is a follower's websocket: /ws/follow?code=C (checkWS has checked the upgrade
// and the Origin).
func (s *Server) handleWSFollow(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	rm, ok := s.rooms.get(code)
	if !ok {
		s.Error(w, r, notFound("room", code))
		return
	}
	release, err := s.budget.reserve(followerBytes)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer release()
	f := &follower{rm: rm, answered: map[int]string{}, end: make(chan string, 1)}
	s.serveWS(w, r, s.log.With("room", rm.code), f)
}

// start joins the room once the connection is up (connOwner); the builder makes the hello.
func (f *follower) start(c *conn) error {
	f.c = c // before join: once in the room, f is read under the room's lock
	return f.rm.join(f)
}

// stop leaves the room (connOwner).
func (f *follower) stop() { f.rm.leave(f) }

// ended yields why the room let the follower go (connOwner).
func (f *follower) ended() <-chan string { return f.end }

// timer is nil: a follower's frames are the presenter's, nothing is timed here (connOwner).
func (f *follower) timer() <-chan time.Time { return nil }

func (f *follower) tick(time.Time) {}

// control answers a follower's message (connOwner): pages of the initial map and quiz answers; any
// other control is the presenter's.
func (f *follower) control(b []byte) string {
	rm, c := f.rm, f.c
	ctl, err := decodeControl(b)
	if b == nil {
		err = controlError("binary messages are not supported")
	}
	switch {
	case err != nil:
	case ctl.Type == ctlInitial:
		rm.mu.Lock()
		o := rm.run.o
		rm.mu.Unlock()
		var m *initialMsg
		if m, err = initialReply(o, ctl.Slot); err == nil {
			c.send(m, false) // a full queue kicks the follower
		}
	case ctl.Type == ctlAnswer:
		err = rm.answer(f, ctl.Stop, ctl.Answer)
	default:
		err = errNotPresenter
	}
	if err != nil {
		rm.s.sendError(c, err, false)
		if f.bad++; f.bad >= maxBadControls {
			return whyBad
		}
	}
	return ""
}

// handleFollowPage serves /follow/{code}: the player page of the room's run, in follower mode.
func (s *Server) handleFollowPage(w http.ResponseWriter, r *http.Request) {
	code := chi.URLParam(r, "code")
	rm, ok := s.rooms.get(code)
	if !ok {
		s.pageError(w, r, notFound("room", code))
		return
	}
	rm.mu.Lock()
	t, step := rm.run.t, rm.step
	rm.mu.Unlock()
	s.renderRunPage(w, r, t, step, rm.code)
}
