package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Protocol constants (docs/protocol.md).
const (
	protocolVersion = 1
	maxControlSize  = 4096      // bytes of one client message
	maxBadControls  = 100       // malformed messages before the socket is closed
	minSpeed        = 0.25      // steps per second
	maxSpeed        = 1_000_000 // steps per second
	defaultSpeed    = 20
)

// Control types a client may send.
const (
	ctlPlay      = "play"
	ctlPause     = "pause"
	ctlStep      = "step"
	ctlSeek      = "seek"
	ctlSpeed     = "speed"
	ctlMode      = "mode"
	ctlNextFlush = "nextFlush"
	ctlEnd       = "end"
	ctlReset     = "reset"
)

// control is one decoded client message. Only the fields its Type uses are
// meaningful.
type control struct {
	Type  string
	N     int64   // step: how many (negative = back)
	Step  int64   // seek: target
	Speed float64 // speed: steps per second, already clamped
	Mode  string  // mode: "per-block", "batched" or "both"
}

// ControlError is a client message the server does not understand. It is
// reported to the client as a non-fatal error frame.
type ControlError struct{ Msg string }

func (e *ControlError) Error() string { return "bad control: " + e.Msg }

// wireControl is the JSON of a client message. Numbers are decoded as
// json.Number so a huge or fractional step count is refused rather than
// silently rounded.
type wireControl struct {
	Type           string       `json:"type"`
	N              *json.Number `json:"n"`
	Step           *json.Number `json:"step"`
	StepsPerSecond *json.Number `json:"stepsPerSecond"`
	Mode           *string      `json:"mode"`
}

// decodeControl parses and validates one client message. Every returned
// control is well formed: a known type with the fields it needs, integral
// step counts and a finite speed within [minSpeed, maxSpeed].
func decodeControl(b []byte) (control, error) {
	if len(b) > maxControlSize {
		return control{}, &ControlError{Msg: fmt.Sprintf("message of %d bytes (limit %d)", len(b), maxControlSize)}
	}
	var wc wireControl
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&wc); err != nil {
		return control{}, &ControlError{Msg: "not a JSON object: " + err.Error()}
	}
	if dec.More() {
		return control{}, &ControlError{Msg: "trailing data after the JSON object"}
	}
	c := control{Type: wc.Type}
	switch wc.Type {
	case ctlPlay, ctlPause, ctlNextFlush, ctlEnd, ctlReset:
	case ctlStep:
		c.N = 1
		if wc.N != nil {
			n, err := wc.N.Int64()
			if err != nil {
				return control{}, &ControlError{Msg: fmt.Sprintf("step: n %q is not an integer", wc.N.String())}
			}
			c.N = n
		}
	case ctlSeek:
		if wc.Step == nil {
			return control{}, &ControlError{Msg: "seek: missing step"}
		}
		n, err := wc.Step.Int64()
		if err != nil || n < 0 {
			return control{}, &ControlError{Msg: fmt.Sprintf("seek: step %q is not a non-negative integer", wc.Step.String())}
		}
		c.Step = n
	case ctlSpeed:
		if wc.StepsPerSecond == nil {
			return control{}, &ControlError{Msg: "speed: missing stepsPerSecond"}
		}
		f, err := wc.StepsPerSecond.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
			return control{}, &ControlError{Msg: fmt.Sprintf("speed: stepsPerSecond %q is not a positive number", wc.StepsPerSecond.String())}
		}
		c.Speed = min(max(f, minSpeed), maxSpeed)
	case ctlMode:
		if wc.Mode == nil {
			return control{}, &ControlError{Msg: "mode: missing mode"}
		}
		if _, err := parseModes(*wc.Mode); err != nil {
			return control{}, &ControlError{Msg: err.Error()}
		}
		c.Mode = *wc.Mode
	case "":
		return control{}, &ControlError{Msg: "missing type"}
	default:
		return control{}, &ControlError{Msg: fmt.Sprintf("unknown type %q", wc.Type)}
	}
	return c, nil
}

// wsWriteTimeout is how long one frame may take to reach a client before
// the client is considered too slow and dropped.
const wsWriteTimeout = 10 * time.Second

// frameInterval paces frames while playing: at most ~30 a second, however
// fast the run goes; a faster run packs more steps into each frame.
const frameInterval = time.Second / 30

// maxFrameEvents bounds the events in one frame; beyond it the frame is
// sent full (state and slots) and says how many events it left out.
const maxFrameEvents = 256

// player is one connection's run as the websocket loop drives it: one or
// two engines behind a single step counter (see docs/protocol.md, Steps).
// The loop owns it; it is never used from two goroutines.
type player interface {
	// hello returns the hello message for the run at its current step.
	hello(playing bool, speed float64) *helloMsg
	total() int64
	step() int64
	// forward takes up to n steps, appending at most limit events to evs; it
	// returns the events and how many it left out.
	forward(n int64, evs []wireEvent, limit int) ([]wireEvent, int64)
	// seek moves to step (clamped to [0,total]).
	seek(step int64) error
	// nextFlush returns the step just after the next invalidate call, or
	// total when there is none.
	nextFlush() int64
	// state returns each mode's state; full includes every touched segment
	// and the call tail, otherwise only segments changed since the last call.
	state(full bool) map[string]*modeState
	// slots returns the slot states of the range at the current step.
	slots() []slotExtent
	// cursor returns the slot index the run is at (the lowest cursor of its
	// engines).
	cursor() uint64
	// seekSlot moves to the first step whose cursor is at or past slot.
	seekSlot(slot uint64) error
}

// mailbox hands messages from the run loop to the writer. A frame not yet
// written is replaced by a newer one (newest wins), so a slow client costs
// the server nothing; hello and error messages are queued and never
// replaced (there are few: one per connect or mode switch, and at most
// maxBadControls errors).
type mailbox struct {
	mu    sync.Mutex
	queue [][]byte
	frame []byte
	ready chan struct{} // capacity 1: "something to send"
}

func newMailbox() *mailbox { return &mailbox{ready: make(chan struct{}, 1)} }

// putMsg queues a message that is never replaced. With dropFrame (a new
// hello) an unsent frame, which belongs to the previous outline, is dropped.
func (m *mailbox) putMsg(b []byte, dropFrame bool) {
	m.mu.Lock()
	m.queue = append(m.queue, b)
	if dropFrame {
		m.frame = nil
	}
	m.mu.Unlock()
	m.signal()
}

// putFrame stores b as the next frame and reports whether it replaced an
// unsent one (whose events are then lost to the client).
func (m *mailbox) putFrame(b []byte) (replaced bool) {
	m.mu.Lock()
	replaced = m.frame != nil
	m.frame = b
	m.mu.Unlock()
	m.signal()
	return replaced
}

// pending reports whether a frame is waiting to be written.
func (m *mailbox) pending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.frame != nil
}

func (m *mailbox) signal() {
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// take returns the next message to write, queued messages first, or nil.
func (m *mailbox) take() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queue) > 0 {
		b := m.queue[0]
		m.queue = m.queue[1:]
		if len(m.queue) > 0 || m.frame != nil {
			m.signalLocked()
		}
		return b
	}
	b := m.frame
	m.frame = nil
	return b
}

func (m *mailbox) signalLocked() {
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// helloMsg is the first message of a connection (docs/protocol.md).
type helloMsg struct {
	V              int                   `json:"v"`
	Type           string                `json:"type"`
	Image          string                `json:"image"`
	Path           string                `json:"path"`
	Ino            uint32                `json:"ino"`
	Size           int64                 `json:"size"`
	Offset         int64                 `json:"offset"`
	Length         int64                 `json:"length"`
	KeepSize       bool                  `json:"keepSize"`
	Mode           string                `json:"mode"`
	Modes          []string              `json:"modes"`
	TotalSteps     int64                 `json:"totalSteps"`
	Step           int64                 `json:"step"`
	Playing        bool                  `json:"playing"`
	StepsPerSecond float64               `json:"stepsPerSecond"`
	Geometry       geometry              `json:"geometry"`
	Range          blockRange            `json:"range"`
	Chunks         []chunkInfo           `json:"chunks"`
	Markers        []marker              `json:"markers"`
	MarkersThinned bool                  `json:"markersThinned"`
	Slots          []slotExtent          `json:"slots"`
	Segments       []segState            `json:"segments"`
	State          map[string]*modeState `json:"state"`
}

type geometry struct {
	BlockSize       uint32 `json:"blockSize"`
	BlocksPerSeg    uint32 `json:"blocksPerSeg"`
	Segment0Blkaddr uint32 `json:"segment0Blkaddr"`
	MainBlkaddr     uint32 `json:"mainBlkaddr"`
	MaxBlkaddr      uint32 `json:"maxBlkaddr"`
}

// blockRange is [Start, End) in file block indices.
type blockRange struct {
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
}

// chunkInfo is one dnode chunk of the range.
type chunkInfo struct {
	Start   uint64 `json:"start"`
	Len     uint64 `json:"len"`
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	Nid     uint32 `json:"nid"`
	Missing int    `json:"missing"`
}

// marker is a tick on the seek slider.
type marker struct {
	Step int64  `json:"step"`
	Kind string `json:"kind"` // "chunk", "flush", "error"
	Mode string `json:"mode,omitempty"`
}

// slotExtent is a run of slots in one state, like imgio.Extent.
type slotExtent struct {
	Index uint64 `json:"index"`
	Count uint64 `json:"count"`
	State string `json:"state"` // "addr", "null", "new", "compress"
	Addr  uint32 `json:"addr,omitempty"`
}

// segState is one touched segment's SIT entry.
type segState struct {
	Segno   uint32 `json:"segno"`
	Valid   uint32 `json:"valid"`
	Type    int    `json:"type"`
	Current bool   `json:"current"`
	Status  string `json:"status,omitempty"` // "clean", "dirty", "prefree", "current"
	Map     string `json:"map"`              // 128 hex digits, byte 0 first
}

// counters are the per-mode numbers the player compares.
type counters struct {
	Calls               int64 `json:"calls"`
	SITLockAcquisitions int64 `json:"sitLockAcquisitions"`
	BlocksInvalidated   int64 `json:"blocksInvalidated"`
	SlotsVisited        int64 `json:"slotsVisited"`
	DnodeChunks         int64 `json:"dnodeChunks"`
}

// pendingRun is the batched mode's (blkstart, blklen).
type pendingRun struct {
	Start uint32 `json:"start"`
	Len   uint32 `json:"len"`
}

// modeState is one engine's state in a frame.
type modeState struct {
	Step      int64       `json:"step"`
	Done      bool        `json:"done"`
	Errno     string      `json:"errno"`
	Cursor    uint64      `json:"cursor"`
	Chunk     int         `json:"chunk"`
	Pending   *pendingRun `json:"pending"`
	Counters  counters    `json:"counters"`
	Segments  []segState  `json:"segments"`
	Calls     []callEntry `json:"calls,omitempty"`
	Narration string      `json:"narration"`
}

// callEntry is one f2fs_invalidate_blocks(start, len) call and why it
// happened; JSON [start, len, reason].
type callEntry struct {
	Start  uint32
	Len    uint32
	Reason string
}

// MarshalJSON encodes the call as the array [start, len, reason].
func (c callEntry) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{c.Start, c.Len, c.Reason})
}

// wireEvent is one engine event in a frame.
type wireEvent struct {
	Step   int64   `json:"step"`
	Mode   string  `json:"mode"`
	Kind   string  `json:"kind"`
	Slot   *uint64 `json:"slot,omitempty"`
	Addr   *uint32 `json:"addr,omitempty"`
	After  any     `json:"after,omitempty"` // "new", "null" or an address
	Start  *uint32 `json:"start,omitempty"`
	Len    *uint32 `json:"len,omitempty"`
	Segno  *uint32 `json:"segno,omitempty"`
	Reason string  `json:"reason,omitempty"`
	Errno  string  `json:"errno,omitempty"`
	Text   string  `json:"text"`
}

// frameMsg is a frame (docs/protocol.md).
type frameMsg struct {
	V              int                   `json:"v"`
	Type           string                `json:"type"`
	Step           int64                 `json:"step"`
	Playing        bool                  `json:"playing"`
	StepsPerSecond float64               `json:"stepsPerSecond"`
	Full           bool                  `json:"full"`
	Events         []wireEvent           `json:"events"`
	EventsDropped  int64                 `json:"eventsDropped"`
	State          map[string]*modeState `json:"state"`
	Slots          []slotExtent          `json:"slots,omitempty"`
}

// errorMsg is an error message to the client.
type errorMsg struct {
	V     int    `json:"v"`
	Type  string `json:"type"`
	Error string `json:"error"`
	Fatal bool   `json:"fatal"`
}

// session is one websocket connection's player loop.
type session struct {
	s       *Server
	c       *websocket.Conn
	si      *StoredImage
	params  runParams
	p       player
	box     *mailbox
	playing bool
	speed   float64
	acc     float64 // fractional steps owed by the play clock
	last    time.Time
	bad     int // malformed controls so far

	evs        []wireEvent // events since the last frame
	evsDropped int64       // events since the last frame not in evs
}

// handleWSRun upgrades to a websocket and plays one run for the client.
// Everything that can be refused is checked before the upgrade, so the
// client gets the API's status codes and JSON errors.
func (s *Server) handleWSRun(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("image")
	if id == "" {
		s.Error(w, r, &ParamError{Name: "image", Msg: "missing"})
		return
	}
	si, err := s.image(id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	params, err := parseRunParams(q)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	p, err := s.newPlayer(si, params)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if !s.startRun() {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "server shutting down"})
		return
	}
	defer s.runs.Done()
	// With no OriginPatterns, Accept allows only an Origin whose host is the
	// request's Host (or no Origin: not a browser) and answers 403
	// otherwise: a page on another site cannot drive a run here.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{})
	if err != nil {
		s.log.Debug("websocket refused", "err", err, "origin", r.Header.Get("Origin"))
		return
	}
	c.SetReadLimit(maxControlSize)
	ss := &session{s: s, c: c, si: si, params: params, p: p, box: newMailbox(), speed: defaultSpeed}
	// r.Context() is not used from here on: the connection is hijacked and
	// lives until the client leaves or srvCtx ends.
	ss.run(s.srvCtx)
}

// startRun registers a websocket run unless the server is closing.
func (s *Server) startRun() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.runs.Add(1)
	return true
}

// run is the connection's life: a reader goroutine feeds controls, a
// writer goroutine drains the mailbox, and this goroutine owns the player.
func (ss *session) run(srvCtx context.Context) {
	ctx, cancel := context.WithCancel(srvCtx)
	defer cancel()
	log := ss.s.log.With("image", ss.si.ID, "path", ss.params.Path, "mode", ss.params.ModeName)
	log.Debug("websocket run start")

	ctrl := make(chan []byte, 8)
	readDone := make(chan error, 1)
	go func() {
		for {
			typ, b, err := ss.c.Read(ctx)
			if err != nil {
				readDone <- err
				return
			}
			if typ != websocket.MessageText {
				b = nil // reported as a bad control below
			}
			select {
			case ctrl <- b:
			case <-ctx.Done():
				readDone <- ctx.Err()
				return
			}
		}
	}()
	writeDone := make(chan error, 1)
	go func() { writeDone <- ss.writeLoop(ctx) }()

	if err := ss.p.seek(ss.params.Step); err != nil {
		ss.fatal(ctx, err)
		cancel()
		<-writeDone
		<-readDone
		return
	}
	ss.sendHello()

	ticker := time.NewTicker(frameInterval)
	defer ticker.Stop()
	var why string
loop:
	for {
		select {
		case <-ctx.Done():
			why = "server shutting down"
			break loop
		case err := <-readDone:
			readDone <- err // for the cleanup below
			why = "client gone"
			break loop
		case err := <-writeDone:
			writeDone <- err
			why = "client too slow"
			break loop
		case b := <-ctrl:
			if !ss.handleControl(b) {
				why = "too many bad messages"
				break loop
			}
		case now := <-ticker.C:
			if ss.playing {
				ss.tick(now)
			}
		}
	}
	log.Debug("websocket run end", "why", why, "step", ss.p.step())
	switch why {
	case "server shutting down":
		ss.c.Close(websocket.StatusGoingAway, why)
	case "too many bad messages":
		ss.c.Close(websocket.StatusPolicyViolation, why)
	default:
		ss.c.CloseNow()
	}
	cancel()
	<-writeDone
	<-readDone
}

// writeLoop writes what the mailbox holds, each write with its own
// timeout; it returns when ctx ends or a write fails.
func (ss *session) writeLoop(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ss.box.ready:
		}
		for {
			b := ss.box.take()
			if b == nil {
				break
			}
			wctx, cancel := context.WithTimeout(ctx, ss.s.writeTimeout())
			err := ss.c.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				return err
			}
		}
	}
}

// writeTimeout returns the per-write timeout (shortened by tests).
func (s *Server) writeTimeout() time.Duration {
	if s.wsWriteTimeout > 0 {
		return s.wsWriteTimeout
	}
	return wsWriteTimeout
}

// handleControl applies one client message and answers it. It returns
// false when the client has sent too many bad messages.
func (ss *session) handleControl(b []byte) bool {
	c, err := decodeControl(b)
	if b == nil {
		err = &ControlError{Msg: "binary messages are not supported"}
	}
	if err != nil {
		ss.bad++
		ss.sendError(err, false)
		return ss.bad < maxBadControls
	}
	full := true
	switch c.Type {
	case ctlPlay:
		if ss.p.step() >= ss.p.total() {
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
			ss.seek(ss.p.step() + c.N)
		}
	case ctlSeek:
		ss.playing = false
		ss.seek(c.Step)
	case ctlSpeed:
		ss.speed = c.Speed
		full = false
	case ctlMode:
		ss.playing = false
		if err := ss.switchMode(c.Mode); err != nil {
			ss.sendError(err, false)
		}
		return true
	case ctlNextFlush:
		ss.playing = false
		target := ss.p.nextFlush()
		ss.forward(target - ss.p.step())
		full = ss.evsDropped > 0
	case ctlEnd:
		ss.playing = false
		ss.seek(ss.p.total())
	case ctlReset:
		ss.playing = false
		ss.seek(0)
	}
	ss.sendFrame(full)
	return true
}

// maxTickSeconds bounds the time one tick may account for after a stall
// (GC, a slow machine): the clock then slips rather than bursting.
const maxTickSeconds = 0.25

// tick advances a playing run by the steps the clock owes and sends a frame.
func (ss *session) tick(now time.Time) {
	dt := now.Sub(ss.last).Seconds()
	ss.last = now
	ss.acc += ss.speed * min(max(dt, 0), maxTickSeconds)
	n := int64(ss.acc)
	if n <= 0 {
		return
	}
	ss.acc -= float64(n)
	ss.forward(n)
	if ss.p.step() >= ss.p.total() {
		ss.playing = false
	}
	ss.sendFrame(ss.evsDropped > 0)
}

// forward takes up to n steps, collecting events for the next frame.
func (ss *session) forward(n int64) {
	if n <= 0 {
		return
	}
	var dropped int64
	ss.evs, dropped = ss.p.forward(n, ss.evs, maxFrameEvents)
	ss.evsDropped += dropped
}

// seek jumps to step (clamped); the next frame must be full.
func (ss *session) seek(step int64) {
	step = min(max(step, 0), ss.p.total())
	if err := ss.p.seek(step); err != nil {
		ss.sendError(err, false)
	}
	ss.evs, ss.evsDropped = ss.evs[:0], 0
}

// switchMode replaces the player with one for mode, keeping the slot
// cursor, and sends a new hello.
func (ss *session) switchMode(mode string) error {
	if mode == ss.params.ModeName {
		ss.sendFrame(true)
		return nil
	}
	params := ss.params
	modes, err := parseModes(mode)
	if err != nil {
		return err
	}
	params.Modes, params.ModeName = modes, modesName(modes)
	p, err := ss.s.newPlayer(ss.si, params)
	if err != nil {
		return err
	}
	if err := p.seekSlot(ss.p.cursor()); err != nil {
		return err
	}
	ss.p, ss.params = p, params
	ss.evs, ss.evsDropped = ss.evs[:0], 0
	ss.sendHello()
	return nil
}

// sendHello queues the hello for the player's current outline and step.
func (ss *session) sendHello() {
	h := ss.p.hello(ss.playing, ss.speed)
	h.V, h.Type, h.Image = protocolVersion, "hello", ss.si.ID
	ss.queue(h, true)
	ss.evs, ss.evsDropped = ss.evs[:0], 0
}

// sendFrame queues a frame with the events since the last one. It is made
// full when asked, when events were left out, or when it replaces a frame
// the client never got (whose events would otherwise be lost).
func (ss *session) sendFrame(full bool) {
	full = full || ss.evsDropped > 0 || ss.box.pending()
	f := &frameMsg{V: protocolVersion, Type: "frame", Step: ss.p.step(), Playing: ss.playing,
		StepsPerSecond: ss.speed, Full: full, Events: ss.evs, EventsDropped: ss.evsDropped,
		State: ss.p.state(full)}
	if f.Events == nil {
		f.Events = []wireEvent{}
	}
	if full {
		f.Slots = ss.p.slots()
	}
	b, err := json.Marshal(f)
	if err != nil {
		ss.s.log.Error("websocket frame", "err", err)
		return
	}
	ss.box.putFrame(b)
	ss.evs, ss.evsDropped = ss.evs[:0], 0
}

// sendError queues an error message for the client.
func (ss *session) sendError(err error, fatal bool) {
	ss.queue(&errorMsg{V: protocolVersion, Type: "error", Error: err.Error(), Fatal: fatal}, false)
}

// queue marshals v and queues it ahead of any frame.
func (ss *session) queue(v any, dropFrame bool) {
	b, err := json.Marshal(v)
	if err != nil {
		ss.s.log.Error("websocket message", "err", err)
		return
	}
	ss.box.putMsg(b, dropFrame)
}

// fatal reports err to the client and closes the connection.
func (ss *session) fatal(ctx context.Context, err error) {
	b, _ := json.Marshal(&errorMsg{V: protocolVersion, Type: "error", Error: err.Error(), Fatal: true})
	wctx, cancel := context.WithTimeout(ctx, ss.s.writeTimeout())
	ss.c.Write(wctx, websocket.MessageText, b)
	cancel()
	ss.c.Close(websocket.StatusInternalError, "run failed")
}
