package web

import (
	"bytes"
	"context"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
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
type callEntry core.Call

// MarshalJSON encodes the call as the array [start, len, reason].
func (c callEntry) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{c.Start, c.Len, c.Reason})
}

// UnmarshalJSON is the inverse of MarshalJSON.
func (c *callEntry) UnmarshalJSON(b []byte) error {
	var v [3]json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if err := json.Unmarshal(v[0], &c.Start); err != nil {
		return err
	}
	if err := json.Unmarshal(v[1], &c.Len); err != nil {
		return err
	}
	var reason string
	if err := json.Unmarshal(v[2], &reason); err != nil {
		return err
	}
	// core.Action has no UnmarshalText; its names are few.
	for a := core.Action(0); a < 64; a++ {
		if a.String() == reason {
			c.Reason = a
			return nil
		}
	}
	return fmt.Errorf("unknown call reason %q", reason)
}

// wireEvent is one engine event in a frame: core's event plus the player
// step, the mode and the narration.
type wireEvent struct {
	core.Event
	Step       int64  `json:"step"` // player step (shadows the engine's)
	EngineStep int64  `json:"engineStep"`
	Mode       string `json:"mode"`
	Text       string `json:"text"`
	Message    string `json:"message,omitempty"`
}

func makeWireEvent(ev core.Event, step int64, mode core.Mode) wireEvent {
	return wireEvent{Event: ev, Step: step, EngineStep: ev.Step, Mode: mode.String(),
		Text: ev.Narrate(), Message: ev.Message()}
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
	p       *player
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
		s.Error(w, r, errClosed)
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
// (c.CloseRead is for connections that never read; this one reads
// controls, and its reader loop likewise answers pings and notices a
// close.)
func (ss *session) run(srvCtx context.Context) {
	ctx, cancel := context.WithCancel(srvCtx)
	defer cancel()
	log := ss.s.log.With("image", ss.si.ID, "path", ss.params.Path, "mode", ss.params.ModeName)
	log.Debug("websocket run start")

	// The reader has its own context: cancelling a Read's context closes
	// the connection at once, and on shutdown the close handshake (1001)
	// must happen first.
	readCtx, readCancel := context.WithCancel(context.Background())
	defer readCancel()
	ctrl := make(chan []byte, 8)
	readDone := make(chan error, 1)
	go func() {
		var lim controlLimiter
		for {
			typ, b, err := ss.c.Read(readCtx)
			if err != nil {
				readDone <- err
				return
			}
			if typ != websocket.MessageText {
				b = nil // reported as a bad control
			}
			if err := lim.wait(readCtx); err != nil {
				readDone <- err
				return
			}
			select {
			case ctrl <- b:
			case <-readCtx.Done():
				readDone <- readCtx.Err()
				return
			}
		}
	}()
	writeDone := make(chan error, 1)
	go func() { writeDone <- ss.writeLoop(ctx) }()

	if err := ss.p.seek(ss.params.Step); err != nil {
		ss.fatal(err)
		cancel()
		readCancel()
		<-writeDone
		<-readDone
		return
	}
	ss.sendHello()

	// The ticker runs only while playing, so an idle player costs nothing.
	ticker := time.NewTicker(frameInterval)
	ticker.Stop()
	defer ticker.Stop()
	ticking := false
	var why string
loop:
	for {
		if ss.playing != ticking {
			if ticking = ss.playing; ticking {
				ticker.Reset(frameInterval)
			} else {
				ticker.Stop()
			}
		}
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
			if ctx.Err() != nil {
				// The writer stopped because the server is shutting down.
				why = "server shutting down"
			}
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
	var err error
	switch why {
	case "server shutting down":
		err = ss.c.Close(websocket.StatusGoingAway, why)
	case "too many bad messages":
		err = ss.c.Close(websocket.StatusPolicyViolation, why)
	default:
		err = ss.c.CloseNow()
	}
	log.Debug("websocket closed", "err", err)
	cancel()
	readCancel()
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
			// Not derived from ctx: cancelling a write's context closes the
			// connection, and shutdown must not cut a message in half
			// before the close handshake.
			wctx, cancel := context.WithTimeout(context.Background(), ss.s.writeTimeout())
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
		var dropped int64
		ss.evs, dropped = ss.p.forward(ss.p.total(), ss.evs, maxFrameEvents, true)
		ss.evsDropped += dropped
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
	ss.evs, dropped = ss.p.forward(n, ss.evs, maxFrameEvents, false)
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
	ss.queue(h, true)
	ss.evs, ss.evsDropped = ss.evs[:0], 0
}

// sendFrame queues a frame with the events since the last one. It is made
// full when asked, when events were left out, or when it replaces a frame
// the client never got (whose events would otherwise be lost).
func (ss *session) sendFrame(full bool) {
	full = full || ss.evsDropped > 0 || ss.box.pending()
	state, slots := ss.p.state(full)
	f := &frameMsg{V: protocolVersion, Type: "frame", Step: ss.p.step(), Playing: ss.playing,
		StepsPerSecond: ss.speed, Full: full, Events: ss.evs, EventsDropped: ss.evsDropped,
		State: state, Slots: slots}
	if f.Events == nil {
		f.Events = []wireEvent{}
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
func (ss *session) fatal(err error) {
	b, _ := json.Marshal(&errorMsg{V: protocolVersion, Type: "error", Error: err.Error(), Fatal: true})
	wctx, cancel := context.WithTimeout(context.Background(), ss.s.writeTimeout())
	ss.c.Write(wctx, websocket.MessageText, b)
	cancel()
	ss.c.Close(websocket.StatusInternalError, "run failed")
}

// cpEvery is the distance, in player steps, between the lockstep
// checkpoints of a both-mode run: a seek replays at most this many steps
// after core's own (per-chunk) seek.
const cpEvery = 1024

// maxMarkers bounds the markers of a hello (docs/protocol.md).
const maxMarkers = 4096

// maxHelloSegments bounds the touched segments whose initial SIT a hello
// carries.
const maxHelloSegments = 4096

// outline is what a run looks like from start to end, computed in one
// lockstep pass and shared (read-only) by every connection playing the
// same run.
type outline struct {
	total    int64
	chunks   []chunkInfo
	prefix   []uint64 // prefix[i] = slots of chunks before chunk i
	markers  []marker
	thinned  bool
	segments []segState // initial SIT of touched segments, first touch first
	cps      [][]int64  // engine steps at player step i*cpEvery (more than one mode)
}

// player is one connection's run: one or two core runs behind a single
// step counter. In both mode each step advances the engine whose next
// event concerns the lower slot (per-block first on ties), which keeps the
// engines in lockstep by slot. The session loop owns it.
type player struct {
	si     *StoredImage
	params runParams
	file   *imgio.File
	in     core.Input
	req    core.Request
	out    *outline
	runs   []*core.Run
	gstep  int64
	init   []slotExtent // slot states before the run, over [lo, hi)
	lo, hi uint64       // the slots core's snapshots cover when whole

	sentValid []map[uint32]int32 // per mode: valid count last sent per segment
}

// newPlayer prepares a run of params on si, using (or making) the cached
// outline.
func (s *Server) newPlayer(si *StoredImage, params runParams) (*player, error) {
	f, in, req, err := s.runInput(si, params)
	if err != nil {
		return nil, err
	}
	p := &player{si: si, params: params, file: f, in: in, req: req}
	for _, m := range params.Modes {
		r, err := core.NewRun(in, req, m)
		if err != nil {
			return nil, err
		}
		p.runs = append(p.runs, r)
		p.sentValid = append(p.sentValid, map[uint32]int32{})
	}
	key := outlineKey(si.ID, params, req)
	p.out, err = s.outlines.get(key, func() (*outline, error) { return p.makeOutline() })
	if err != nil {
		return nil, err
	}
	p.lo = uint64(max(req.Offset, 0)) >> 12
	p.hi = p.lo
	if req.Length > 0 && req.Offset >= 0 {
		p.hi = (uint64(req.Offset) + uint64(req.Length) + 4095) >> 12
	}
	if p.init, err = p.initialSlots(); err != nil {
		return nil, err
	}
	return p, nil
}

func outlineKey(id string, p runParams, req core.Request) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%t\x00%s", id, p.Path, req.Offset, req.Length, req.KeepSize, p.ModeName)
}

// pick returns the engine that takes the next step, or -1 at the end.
func (p *player) pick() int {
	best := -1
	var bestSlot uint64
	for i, r := range p.runs {
		if r.Done() || r.Err() != nil {
			continue
		}
		if s := r.NextSlot(); best < 0 || s < bestSlot {
			best, bestSlot = i, s
		}
	}
	return best
}

// makeOutline walks the whole run once, in lockstep, from fresh engines.
func (p *player) makeOutline() (*outline, error) {
	runs := make([]*core.Run, len(p.params.Modes))
	for i, m := range p.params.Modes {
		r, err := core.NewRun(p.in, p.req, m)
		if err != nil {
			return nil, err
		}
		runs[i] = r
	}
	saved := p.runs
	p.runs = runs
	defer func() { p.runs = saved }()

	o := &outline{}
	var flushes []marker // per-block calls: markers only when few
	seen := map[uint32]bool{}
	var touched []uint32
	var g int64
	for {
		if len(runs) > 1 && g%cpEvery == 0 && int64(len(o.cps)) == g/cpEvery {
			cp := make([]int64, len(runs))
			for i, r := range runs {
				cp[i] = r.Step()
			}
			o.cps = append(o.cps, cp)
		}
		i := p.pick()
		if i < 0 {
			break
		}
		ev, ok := runs[i].Next()
		if !ok {
			if err := runs[i].Err(); err != nil {
				return nil, err
			}
			continue
		}
		g++
		mode := p.params.Modes[i]
		switch ev.Kind {
		case core.EvChunkEnter:
			if i == 0 {
				o.chunks = append(o.chunks, chunkInfo{Start: ev.Slot, Len: ev.Count, Path: ev.Node})
				o.markers = append(o.markers, marker{Step: g, Kind: "chunk"})
			}
		case core.EvNodeAlloc:
			if i == 0 && len(o.chunks) > 0 {
				o.chunks[len(o.chunks)-1].Missing++
			}
		case core.EvInvalidate:
			m := marker{Step: g, Kind: "flush", Mode: mode.String()}
			if ev.Action == core.ActPerBlock {
				if len(flushes) <= maxMarkers {
					flushes = append(flushes, m)
				}
			} else {
				o.markers = append(o.markers, m)
			}
		case core.EvSITUpdate:
			if !seen[ev.Segno] {
				seen[ev.Segno] = true
				touched = append(touched, ev.Segno)
			}
		case core.EvError:
			o.markers = append(o.markers, marker{Step: g, Kind: "error", Mode: mode.String()})
		}
	}
	o.total = g
	if len(o.markers)+len(flushes) <= maxMarkers {
		o.markers = append(o.markers, flushes...)
		sort.Slice(o.markers, func(i, j int) bool { return o.markers[i].Step < o.markers[j].Step })
	} else {
		o.thinned = len(flushes) > 0
		if len(o.markers) > maxMarkers {
			o.markers = thinMarkers(o.markers, maxMarkers)
			o.thinned = true
		}
	}
	if o.markers == nil {
		o.markers = []marker{}
	}
	o.prefix = make([]uint64, len(o.chunks)+1)
	for i, c := range o.chunks {
		o.prefix[i+1] = o.prefix[i] + c.Len
		if d, err := p.file.Dnode(c.Start); err == nil {
			o.chunks[i].Kind, o.chunks[i].Nid = d.Kind, d.Nid
		} else if o.chunks[i].Kind = "direct"; c.Path == "inode" {
			o.chunks[i].Kind = "inode"
		}
	}
	if o.chunks == nil {
		o.chunks = []chunkInfo{}
	}
	o.segments = make([]segState, 0, min(len(touched), maxHelloSegments))
	for _, segno := range touched[:min(len(touched), maxHelloSegments)] {
		sg, err := p.si.Image.Segment(segno)
		if err != nil {
			return nil, err
		}
		o.segments = append(o.segments, segState{Segno: segno, Valid: sg.ValidBlocks, Type: sg.Type,
			Current: sg.Current, Map: hex.EncodeToString(sg.Map[:])})
	}
	return o, nil
}

// thinMarkers keeps chunk and error markers first, then spreads the rest.
func thinMarkers(ms []marker, limit int) []marker {
	var keep, rest []marker
	for _, m := range ms {
		if m.Kind != "flush" && len(keep) < limit {
			keep = append(keep, m)
		} else {
			rest = append(rest, m)
		}
	}
	if room := limit - len(keep); room > 0 && len(rest) > 0 {
		for k := 0; k < room; k++ {
			keep = append(keep, rest[k*len(rest)/room])
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].Step < keep[j].Step })
	return keep
}

// initialSlots returns the slot states of [lo, hi) before the run.
func (p *player) initialSlots() ([]slotExtent, error) {
	var out []slotExtent
	if p.hi <= p.lo {
		return []slotExtent{}, nil
	}
	ext, err := p.file.Extents()
	if err != nil {
		return nil, err
	}
	next := p.lo
	for _, e := range ext {
		a, b := max(e.Index, p.lo), min(e.Index+e.Count, p.hi)
		if a >= b {
			continue
		}
		if a > next {
			out = append(out, slotExtent{Index: next, Count: a - next, State: "null"})
		}
		x := slotExtent{Index: a, Count: b - a, State: e.State}
		if e.State == "addr" {
			x.Addr = e.Addr + uint32(a-e.Index)
		}
		out = append(out, x)
		next = b
	}
	if next < p.hi {
		out = append(out, slotExtent{Index: next, Count: p.hi - next, State: "null"})
	}
	return out, nil
}

func (p *player) total() int64 { return p.out.total }
func (p *player) step() int64  { return p.gstep }

// forward takes up to n steps (or, with toFlush, steps until just after
// the next invalidate call of the last mode), appending at most limit
// events to evs; it returns the events and how many it left out.
func (p *player) forward(n int64, evs []wireEvent, limit int, toFlush bool) ([]wireEvent, int64) {
	var dropped int64
	flushMode := len(p.runs) - 1
	for k := int64(0); k < n; k++ {
		i := p.pick()
		if i < 0 {
			break
		}
		ev, ok := p.runs[i].Next()
		if !ok {
			continue
		}
		p.gstep++
		if len(evs) < limit {
			evs = append(evs, makeWireEvent(ev, p.gstep, p.params.Modes[i]))
		} else {
			dropped++
		}
		if toFlush && i == flushMode && ev.Kind == core.EvInvalidate {
			break
		}
	}
	return evs, dropped
}

// seek moves to player step g (clamped to [0, total]).
func (p *player) seek(g int64) error {
	g = min(max(g, 0), p.out.total)
	if len(p.runs) == 1 {
		if err := p.runs[0].SeekTo(g); err != nil {
			return err
		}
		p.gstep = p.runs[0].Step()
		return nil
	}
	c := int(g / cpEvery)
	if c >= len(p.out.cps) {
		c = len(p.out.cps) - 1
	}
	for i, r := range p.runs {
		if err := r.SeekTo(p.out.cps[c][i]); err != nil {
			return err
		}
	}
	p.gstep = int64(c) * cpEvery
	p.forward(g-p.gstep, nil, 0, false)
	return nil
}

// cursor is the lowest next slot of the engines still running.
func (p *player) cursor() uint64 {
	var c uint64
	first := true
	for _, r := range p.runs {
		if s := r.NextSlot(); first || s < c {
			c, first = s, false
		}
	}
	return c
}

// seekSlot moves to the first step whose cursor is at or past slot.
func (p *player) seekSlot(slot uint64) error {
	lo, hi := int64(0), p.out.total
	for lo < hi {
		mid := lo + (hi-lo)/2
		if err := p.seek(mid); err != nil {
			return err
		}
		if p.cursor() >= slot {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return p.seek(lo)
}

// hello builds the hello message at the current step.
func (p *player) hello(playing bool, speed float64) *helloMsg {
	v := p.si.Image.Volume()
	in := p.file.Inode()
	modes := make([]string, len(p.params.Modes))
	for i, m := range p.params.Modes {
		modes[i] = m.String()
	}
	for i := range p.sentValid {
		p.sentValid[i] = map[uint32]int32{}
	}
	state, slots := p.state(true)
	return &helloMsg{V: protocolVersion, Type: "hello", Image: p.si.ID, Path: p.params.Path, Ino: in.Ino,
		Size: in.Size, Offset: p.req.Offset, Length: p.req.Length, KeepSize: p.req.KeepSize,
		Mode: p.params.ModeName, Modes: modes, TotalSteps: p.out.total, Step: p.gstep,
		Playing: playing, StepsPerSecond: speed,
		Geometry: geometry{BlockSize: v.BlockSize, BlocksPerSeg: blocksPerSeg(v),
			Segment0Blkaddr: v.Segment0Blkaddr, MainBlkaddr: v.MainBlkaddr, MaxBlkaddr: v.MaxBlkaddr},
		Range:  blockRange{Start: p.lo, End: p.hi},
		Chunks: p.out.chunks, Markers: p.out.markers, MarkersThinned: p.out.thinned,
		Slots: slots, Segments: p.out.segments, State: state}
}

// state returns each mode's state and, when full, the slot states of the
// whole range. Non-full states carry only segments whose valid count
// changed since the last call.
func (p *player) state(full bool) (map[string]*modeState, []slotExtent) {
	out := make(map[string]*modeState, len(p.runs))
	var slots []slotExtent
	for i, r := range p.runs {
		sn := r.Snapshot()
		ms := &modeState{Step: sn.Step, Done: sn.Done, Errno: sn.Errno, Cursor: sn.NextSlot,
			Chunk: int(sn.Chunk), Narration: sn.Narration,
			Counters: counters{Calls: int64(sn.Stats.Calls), SITLockAcquisitions: int64(sn.Stats.SITLockAcquisitions),
				BlocksInvalidated: int64(sn.Stats.BlocksInvalidated), DnodeChunks: int64(sn.Stats.DnodeChunks),
				SlotsVisited: int64(p.visited(&sn))}}
		if sn.Pending.Len > 0 {
			ms.Pending = &pendingRun{Start: sn.Pending.Start, Len: sn.Pending.Len}
		}
		ms.Segments = []segState{}
		sent := p.sentValid[i]
		if full {
			clear(sent)
		}
		for _, sg := range sn.Segments {
			if v, ok := sent[sg.Segno]; ok && v == sg.Valid && !full {
				continue
			}
			sent[sg.Segno] = sg.Valid
			ms.Segments = append(ms.Segments, segState{Segno: sg.Segno, Valid: uint32(max(sg.Valid, 0)),
				Status: sg.Class.String(), Current: sg.Class == core.SegCurrent, Map: mapHex(sg.Map)})
		}
		if full {
			ms.Calls = make([]callEntry, len(sn.LastCalls))
			for k, c := range sn.LastCalls {
				ms.Calls[k] = callEntry(c)
			}
			if i == 0 {
				slots = p.slotsNow(r)
			}
		}
		out[p.params.Modes[i].String()] = ms
	}
	return out, slots
}

// visited counts the slots pass 2 has finished with.
func (p *player) visited(sn *core.Snapshot) uint64 {
	c := int(sn.Chunk)
	if c < 0 || c >= len(p.out.chunks) {
		if sn.Done && c >= 0 {
			return p.out.prefix[len(p.out.chunks)]
		}
		return 0
	}
	if sn.InChunk {
		return p.out.prefix[c] + min(sn.NextSlot-min(sn.NextSlot, sn.ChunkStart), p.out.chunks[c].Len)
	}
	return p.out.prefix[c+1]
}

// slotsNow returns the run's slot states over [lo, hi).
func (p *player) slotsNow(r *core.Run) []slotExtent {
	ext, err := r.Slots(p.lo, p.hi)
	if err != nil {
		return p.init
	}
	out := make([]slotExtent, len(ext))
	for i, e := range ext {
		out[i] = slotExtent(e)
	}
	return out
}

// maxOutlines bounds the outline cache.
const maxOutlines = 16

// outlineCache keeps recent outlines so reconnects, mode switches and
// several viewers of one run pay for the pass once. Concurrent requests
// for the same key wait for one computation.
type outlineCache struct {
	mu    sync.Mutex
	m     map[string]*outlineEntry
	order []string // oldest first
}

type outlineEntry struct {
	done chan struct{}
	o    *outline
	err  error
}

func newOutlineCache() *outlineCache { return &outlineCache{m: map[string]*outlineEntry{}} }

func (c *outlineCache) get(key string, build func() (*outline, error)) (*outline, error) {
	c.mu.Lock()
	if e, ok := c.m[key]; ok {
		c.mu.Unlock()
		<-e.done
		return e.o, e.err
	}
	e := &outlineEntry{done: make(chan struct{})}
	c.m[key] = e
	c.order = append(c.order, key)
	if len(c.order) > maxOutlines {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()
	e.o, e.err = build()
	close(e.done)
	if e.err != nil {
		c.mu.Lock()
		if c.m[key] == e {
			delete(c.m, key)
		}
		c.mu.Unlock()
	}
	return e.o, e.err
}

// mapHex renders a segment valid map as 128 hex digits, whether core hands
// it over as text already or as the 64 bytes.
func mapHex(m any) string {
	switch v := m.(type) {
	case string:
		return v
	case [64]byte:
		return hex.EncodeToString(v[:])
	case encoding.TextMarshaler:
		b, err := v.MarshalText()
		if err == nil {
			return string(b)
		}
	}
	return ""
}

// Controls are taken at most controlRate a second after a burst of controlBurst: a seek costs up to a
// millisecond of engine time, and one client flooding seeks must not slow every other viewer. Excess
// controls wait unread in that client's socket, so TCP pushes back on it alone.
const (
	controlRate  = 50.0
	controlBurst = 50.0
)

// controlLimiter is a token bucket for one connection's controls; only its reader goroutine uses it.
type controlLimiter struct {
	tokens float64
	last   time.Time
}

// wait takes a token, sleeping until one is there.
func (l *controlLimiter) wait(ctx context.Context) error {
	now := time.Now()
	if l.last.IsZero() {
		l.tokens = controlBurst
	} else {
		l.tokens = min(controlBurst, l.tokens+now.Sub(l.last).Seconds()*controlRate)
	}
	l.last = now
	if l.tokens >= 1 {
		l.tokens--
		return nil
	}
	t := time.NewTimer(time.Duration((1 - l.tokens) / controlRate * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		l.tokens, l.last = 0, time.Now()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
