package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
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
	maxRooms        = 64
	maxFollowers    = 1000
	roomLinger      = 5 * time.Minute
	followerBytes   = 64 << 10 // what a follower holds: a mailbox and two goroutines
	roomCodeBytes   = 5        // 40 random bits: 8 base32 letters
	roomTokenBytes  = 20
	maxAnswerLength = 40
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

// ErrRoomFull is a room at its follower limit, or a server at its room limit (503).
var ErrRoomFull = errors.New("the room is full")

// ErrNotPresenter is a follower trying to drive (a non-fatal error reply).
var ErrNotPresenter = &ControlError{Msg: "only the presenter drives this room: detach to explore on your own"}

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

// room is one presenter's audience.
type room struct {
	hub   *roomHub
	s     *Server
	code  string
	token string

	mu        sync.Mutex
	t         *runTarget
	o         *player.Outline
	p         *player.Player // the room's own player: at step when synced
	release   func()
	synced    bool
	step      int64
	vs        viewState
	ui        roomUI
	presenter *session
	followers map[*follower]bool
	answers   map[int]map[*follower]string
	timer     *time.Timer
	ended     bool
}

// follower is one follower's connection.
type follower struct {
	box      *mailbox
	needFull bool
	score    score
	answered map[int]string
	end      chan string // why the room closed it
}

// startRoom makes ss the presenter of a new room.
func (s *Server) startRoom(ss *session) (*room, error) {
	h := s.rooms
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.rooms) >= maxRooms {
		return nil, &BusyError{Msg: fmt.Sprintf("the server holds %d rooms, its limit; try again later", maxRooms), RetryAfter: time.Minute}
	}
	r := &room{hub: h, s: s, token: randomCode(roomTokenBytes), followers: map[*follower]bool{},
		answers: map[int]map[*follower]string{}, ui: roomUI{Stop: -1, Question: -1}}
	for {
		r.code = randomCode(roomCodeBytes)
		if _, taken := h.rooms[r.code]; !taken {
			break
		}
	}
	if err := r.setRun(ss.t, ss.o); err != nil {
		return nil, err
	}
	r.presenter = ss
	r.step, r.vs = ss.p.Step(), ss.view()
	h.rooms[r.code] = r
	s.log.Info("room started", "code", r.code, "image", ss.t.info.Image, "path", ss.t.info.Path)
	return r, nil
}

// reclaim makes ss the presenter of room code again (a reload of the presenter's page).
func (s *Server) reclaimRoom(ss *session, code, token string) (*room, error) {
	r, ok := s.rooms.get(code)
	if !ok {
		return nil, &NotFoundError{What: "room", Name: code}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if subtle.ConstantTimeCompare([]byte(token), []byte(r.token)) != 1 || r.ended {
		return nil, &NotFoundError{What: "room", Name: code}
	}
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if r.t.key() != ss.t.key() {
		if err := r.setRunLocked(ss.t, ss.o); err != nil {
			return nil, err
		}
		r.helloAllLocked()
	}
	r.presenter = ss
	r.step, r.vs, r.synced = ss.p.Step(), ss.view(), false
	r.broadcastInfoLocked()
	return r, nil
}

func (r *room) setRun(t *runTarget, o *player.Outline) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.setRunLocked(t, o)
}

// setRunLocked points the room at another run (the presenter changed mode): its own player is
// made anew, within the memory budget.
func (r *room) setRunLocked(t *runTarget, o *player.Outline) error {
	// The room holds its image (an upload is never evicted or deleted under it) and its player's
	// memory for as long as it plays that run.
	hold, err := t.acquire()
	if err != nil {
		return err
	}
	p, release, err := r.s.newPlayer(o, hold)
	if err != nil {
		return err
	}
	if r.release != nil {
		r.release()
	}
	r.t, r.o, r.p, r.release, r.synced = t, o, p, release, false
	r.answers = map[int]map[*follower]string{}
	return nil
}

// info describes the room for its presenter (with the token) or a follower.
func (r *room) info(presenter bool) *roomInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.infoLocked(presenter)
}

func (r *room) infoLocked(presenter bool) *roomInfo {
	ri := &roomInfo{Code: r.code, Role: "follower", URL: "/follow/" + r.code, Followers: len(r.followers),
		Presenter: r.presenter != nil, UI: r.ui, Ended: r.ended}
	if presenter {
		ri.Role, ri.Token = "presenter", r.token
	}
	return ri
}

// publish hands a frame the presenter just made to every follower: the same bytes, or — for a
// follower that has not taken the previous one — a full frame built once for all of them.
func (r *room) publish(ss *session, b []byte, step int64, full bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.presenter != ss {
		return
	}
	r.step, r.vs, r.synced = step, ss.view(), false
	var fullFrame []byte
	for f := range r.followers {
		if !full && (f.needFull || f.box.pending()) {
			if fullFrame == nil {
				fullFrame = r.fullFrameLocked()
			}
			f.box.putFrame(fullFrame)
			f.needFull = false
			continue
		}
		f.box.putFrame(b)
	}
}

// syncLocked brings the room's player to the presenter's step.
func (r *room) syncLocked() error {
	if r.synced {
		return nil
	}
	if err := r.p.Goto(r.step); err != nil {
		return err
	}
	r.synced = true
	return nil
}

// fullFrameLocked encodes a full frame at the room's step.
func (r *room) fullFrameLocked() []byte {
	if err := r.syncLocked(); err != nil {
		r.s.log.Error("room", "code", r.code, "err", err)
		return nil
	}
	f := &frameMsg{V: protocolVersion, Type: "frame", Step: r.p.Step(), Playing: r.vs.playing, Pace: r.vs.pace,
		StepsPerSecond: r.vs.speed, TimeLeft: r.vs.timeLeft, Full: true, Events: []wireEvent{},
		State: r.p.State(&player.Tracker{}, true), Changed: r.p.Changed(r.o.Range.Start, r.o.Range.End)}
	b, err := json.Marshal(f)
	if err != nil {
		r.s.log.Error("room frame", "err", err)
		return nil
	}
	return b
}

// helloLocked encodes the hello a follower gets: the room's run at the presenter's step.
func (r *room) helloLocked(f *follower) []byte {
	if err := r.syncLocked(); err != nil {
		r.s.log.Error("room", "code", r.code, "err", err)
		return nil
	}
	h, err := buildHello(r.t, r.o, r.p, &player.Tracker{}, r.vs)
	if err != nil {
		r.s.log.Error("room hello", "code", r.code, "err", err)
		return nil
	}
	h.Score = f.score
	h.Room = r.infoLocked(false)
	b, _ := json.Marshal(h)
	return b
}

// helloAllLocked sends every follower a new hello (the presenter's run changed).
func (r *room) helloAllLocked() {
	for f := range r.followers {
		if b := r.helloLocked(f); b != nil {
			f.box.putMsg(b, true)
		}
		f.needFull = false
	}
}

// newRun follows the presenter to another run (a mode change).
func (r *room) newRun(ss *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.presenter != ss {
		return
	}
	if err := r.setRunLocked(ss.t, ss.o); err != nil {
		r.s.log.Warn("room: the new run does not fit the budget; followers stay on the old one", "code", r.code, "err", err)
		return
	}
	r.step, r.vs = ss.p.Step(), ss.view()
	r.helloAllLocked()
}

// setUI mirrors the presenter's open stop and quiz on the followers' pages.
func (r *room) setUI(ss *session, ui roomUI) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.presenter != ss {
		return
	}
	r.ui = ui
	r.broadcastInfoLocked()
}

// broadcastInfoLocked tells every page of the room how it stands.
func (r *room) broadcastInfoLocked() {
	for f := range r.followers {
		queueJSON(f.box, &roomMsg{V: protocolVersion, Type: "room", roomInfo: *r.infoLocked(false)})
	}
	if r.presenter != nil {
		r.presenter.queue(&roomMsg{V: protocolVersion, Type: "room", roomInfo: *r.infoLocked(true)}, false)
	}
}

// join adds a follower and queues its hello.
func (r *room) join(f *follower) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return &NotFoundError{What: "room", Name: r.code}
	}
	if len(r.followers) >= maxFollowers {
		return &BusyError{Msg: fmt.Sprintf("room %s has %d followers, its limit", r.code, maxFollowers), RetryAfter: time.Minute}
	}
	b := r.helloLocked(f)
	if b == nil {
		return errors.New("web: room hello failed")
	}
	f.box.putMsg(b, true)
	r.followers[f] = true
	r.broadcastInfoLocked()
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
	if !r.ended {
		r.broadcastInfoLocked()
	}
}

// answer records a follower's answer to stop k's question (once) and tells the presenter how the
// answers spread; the verdict waits for the presenter's reveal.
func (r *room) answer(f *follower, k int, ans string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k < 0 || k >= len(r.o.Stops) || r.o.Stops[k].Question == nil {
		return &ControlError{Msg: "answer: that stop has no question"}
	}
	// A slip does not use the question up, in a room either (web/quizcheck.go).
	if err := checkAnswer(r.o.Stops[k].Question, ans, r.o.Range.End-r.o.Range.Start); err != nil {
		return &ControlError{Msg: "answer: " + err.Error()}
	}
	a := r.answers[k]
	if a == nil {
		a = map[*follower]string{}
		r.answers[k] = a
	}
	if _, done := a[f]; !done {
		a[f] = normaliseAnswer(ans)
	}
	queueJSON(f.box, &quizMsg{V: protocolVersion, Type: "quiz", Stop: k, Pending: true, Score: f.score})
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
	if r.presenter != ss || k < 0 || k >= len(r.o.Stops) || r.o.Stops[k].Question == nil {
		return
	}
	q := r.o.Stops[k].Question
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
		}
		m.Score = f.score
		queueJSON(f.box, m)
	}
	r.spreadLocked(k)
}

// presenterGone starts the room's end clock; the presenter may come back with its token.
func (r *room) presenterGone(ss *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.presenter != ss {
		return
	}
	r.presenter = nil
	r.vs.playing = false
	r.broadcastInfoLocked()
	r.timer = time.AfterFunc(r.s.roomLinger(), r.end)
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
	for f := range r.followers {
		queueJSON(f.box, &roomMsg{V: protocolVersion, Type: "room", roomInfo: *r.infoLocked(false)})
		select {
		case f.end <- "the room has ended":
		default:
		}
	}
	if r.release != nil {
		r.release()
	}
	r.s.log.Info("room ended", "code", r.code)
}

// roomLinger is how long a room outlives its presenter (shortened by tests).
func (s *Server) roomLinger() time.Duration {
	if s.roomLingerFor > 0 {
		return s.roomLingerFor
	}
	return roomLinger
}

// normaliseAnswer makes answers that mean the same count together: trimmed, lower case, numbers
// without separators, bounded in length.
func normaliseAnswer(a string) string {
	a = strings.ToLower(strings.TrimSpace(a))
	if d := strings.NewReplacer(",", "", "_", "", " ", "").Replace(a); d != "" && strings.Trim(d, "0123456789") == "" {
		a = strings.TrimLeft(d, "0")
		if a == "" {
			a = "0"
		}
	}
	switch a {
	case "y":
		a = "yes"
	case "n":
		a = "no"
	}
	if len(a) > maxAnswerLength {
		a = a[:maxAnswerLength]
	}
	return a
}

func queueJSON(box *mailbox, v any) {
	if b, err := json.Marshal(v); err == nil {
		box.putMsg(b, false)
	}
}

// handleWSFollow is a follower's websocket: /ws/follow?code=C.
func (s *Server) handleWSFollow(w http.ResponseWriter, r *http.Request) {
	if !isUpgrade(r) {
		w.Header().Set("Upgrade", "websocket")
		s.Error(w, r, ErrNotUpgrade)
		return
	}
	code := r.URL.Query().Get("code")
	rm, ok := s.rooms.get(code)
	if !ok {
		s.Error(w, r, &NotFoundError{What: "room", Name: code})
		return
	}
	release, err := s.budget.reserve(followerBytes)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer release()
	if !s.startRun() {
		s.Error(w, r, errClosed)
		return
	}
	defer s.runs.Done()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{})
	if err != nil {
		return
	}
	c.SetReadLimit(maxControlSize)
	f := &follower{box: newMailbox(), answered: map[int]string{}, end: make(chan string, 1)}
	if err := rm.join(f); err != nil {
		code, msg := s.errorStatus(err)
		b, _ := json.Marshal(&errorMsg{V: protocolVersion, Type: "error", Error: msg, Status: code, Fatal: true})
		wctx, cancel := context.WithTimeout(context.Background(), s.writeTimeout())
		c.Write(wctx, websocket.MessageText, b)
		cancel()
		c.Close(websocket.StatusTryAgainLater, "room unavailable")
		return
	}
	defer rm.leave(f)
	s.follow(c, rm, f)
}

// follow is a follower connection's life: controls in (initial pages, answers), room messages out.
func (s *Server) follow(c *websocket.Conn, rm *room, f *follower) {
	ctx, cancel := context.WithCancel(s.srvCtx)
	defer cancel()
	readCtx, readCancel := context.WithCancel(context.Background())
	defer readCancel()
	ctrl := make(chan []byte, 8)
	readDone := make(chan error, 1)
	go readControls(readCtx, c, ctrl, readDone)
	writeDone := make(chan error, 1)
	go func() { writeDone <- writeMailbox(ctx, c, f.box, s.writeTimeout()) }()
	bad := 0
	var why string
loop:
	for {
		select {
		case <-ctx.Done():
			why = "server shutting down"
			break loop
		case err := <-readDone:
			readDone <- err
			why = "client gone"
			break loop
		case err := <-writeDone:
			writeDone <- err
			why = "client too slow"
			break loop
		case why = <-f.end:
			break loop
		case b := <-ctrl:
			c, err := decodeControl(b)
			if b == nil {
				err = &ControlError{Msg: "binary messages are not supported"}
			}
			switch {
			case err != nil:
			case c.Type == ctlInitial:
				rm.mu.Lock()
				o := rm.o
				rm.mu.Unlock()
				ext, next, ierr := o.InitialSlots(c.Slot, initialPage)
				if err = ierr; err == nil {
					if !f.box.putMsg(mustJSON(&initialMsg{V: protocolVersion, Type: "initial",
						initialPageMsg: initialPageMsg{From: max(c.Slot, o.Range.Start), Next: next, Extents: ext}}), false) {
						why = "client too slow"
						break loop
					}
				}
			case c.Type == ctlAnswer:
				err = rm.answer(f, c.Stop, c.Answer)
			default:
				err = ErrNotPresenter
			}
			if err != nil {
				code, msg := s.errorStatus(err)
				queueJSON(f.box, &errorMsg{V: protocolVersion, Type: "error", Error: msg, Status: code})
				if bad++; bad >= maxBadControls {
					why = "too many bad messages"
					break loop
				}
			}
		}
	}
	switch why {
	case "server shutting down":
		c.Close(websocket.StatusGoingAway, why)
	case "the room has ended":
		drainBox(ctx, f.box, s.writeTimeout())
		c.Close(websocket.StatusNormalClosure, why)
	case "too many bad messages":
		drainBox(ctx, f.box, s.writeTimeout())
		c.Close(websocket.StatusPolicyViolation, why)
	default:
		c.CloseNow()
	}
	cancel()
	readCancel()
	<-writeDone
	<-readDone
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// drainBox waits (briefly) until a mailbox's writer has sent everything queued.
func drainBox(ctx context.Context, box *mailbox, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		box.mu.Lock()
		empty := len(box.queue) == 0 && box.frame == nil && !box.writing
		box.mu.Unlock()
		if empty {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// handleFollowPage serves /follow/{code}: the player page of the room's run, in follower mode.
func (s *Server) handleFollowPage(w http.ResponseWriter, r *http.Request) {
	code := chi.URLParam(r, "code")
	rm, ok := s.rooms.get(code)
	if !ok {
		s.pageError(w, r, &NotFoundError{What: "room", Name: code})
		return
	}
	rm.mu.Lock()
	t, step := rm.t, rm.step
	rm.mu.Unlock()
	s.renderRunPage(w, r, t, step, rm.code)
}
