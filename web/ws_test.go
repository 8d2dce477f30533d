package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/player"
)

// wsClient is a test websocket client that decodes server messages.
type wsClient struct {
	tb testing.TB
	c  *websocket.Conn
}

// serverMsg holds any server message; fields are filled by type.
type serverMsg struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	// hello
	Run        runInfo             `json:"run"`
	TotalSteps int64               `json:"totalSteps"`
	Chunks     []player.Chunk      `json:"chunks"`
	Markers    []player.Marker     `json:"markers"`
	Stops      []wireStop          `json:"stops"`
	Outcome    player.Outcome      `json:"outcome"`
	Segments   []core.SegmentState `json:"segments"`
	Range      player.Range        `json:"range"`
	Initial    initialPageMsg      `json:"initial"`
	Room       *roomInfo           `json:"room"`
	Trace      *traceInfo          `json:"trace"`
	Kernel     *kernelCalls        `json:"kernel"`
	Hold       *quizHold           `json:"hold"` // hello, hold
	// frame and hello
	Step           int64              `json:"step"`
	Playing        bool               `json:"playing"`
	Pace           string             `json:"pace"`
	StepsPerSecond float64            `json:"stepsPerSecond"`
	TimeLeft       float64            `json:"timeLeft"`
	Full           bool               `json:"full"`
	Events         []json.RawMessage  `json:"events"`
	EventsDropped  int64              `json:"eventsDropped"`
	State          []player.ModeState `json:"state"`
	Changed        []core.Extent      `json:"changed"`
	// initial
	From    uint64        `json:"from"`
	Next    uint64        `json:"next"`
	Extents []core.Extent `json:"extents"`
	// quiz
	Stop    int    `json:"stop"`
	Correct bool   `json:"correct"`
	Answer  string `json:"answer"`
	Score   score  `json:"score"`
	// error
	Error  string `json:"error"`
	Status int    `json:"status"`
	Fatal  bool   `json:"fatal"`
}

// mode returns the state of mode in a hello or frame, or nil.
func (m *serverMsg) mode(name string) *player.ModeState {
	for i := range m.State {
		if m.State[i].Mode.String() == name {
			return &m.State[i]
		}
	}
	return nil
}

// dialWS opens /ws/run with query q.
func (ts *testServer) dialWS(tb testing.TB, q string) *wsClient {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(ts.ts.URL, "http") + "/ws/run?" + q
	c, res, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		code := 0
		if res != nil {
			code = res.StatusCode
		}
		tb.Fatalf("dial %s: %v (status %d)", u, err, code)
	}
	c.SetReadLimit(64 << 20)
	tb.Cleanup(func() { c.CloseNow() })
	return &wsClient{tb: tb, c: c}
}

// read returns the next server message.
func (w *wsClient) read() *serverMsg {
	w.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	typ, b, err := w.c.Read(ctx)
	if err != nil {
		w.tb.Fatalf("read: %v", err)
	}
	if typ != websocket.MessageText {
		w.tb.Fatalf("message type %v", typ)
	}
	var m serverMsg
	if err := json.Unmarshal(b, &m); err != nil {
		w.tb.Fatalf("decode %.200s: %v", b, err)
	}
	if m.V != protocolVersion {
		w.tb.Fatalf("message without v=%d: %.200s", protocolVersion, b)
	}
	return &m
}

// readType reads until a message of type typ arrives.
func (w *wsClient) readType(typ string) *serverMsg {
	w.tb.Helper()
	for {
		m := w.read()
		if m.Type == typ {
			return m
		}
		if m.Type == "error" {
			w.tb.Fatalf("error message while waiting for %s: %s", typ, m.Error)
		}
	}
}

// send writes a control message.
func (w *wsClient) send(v any) {
	w.tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		w.tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		w.tb.Fatalf("write: %v", err)
	}
}

// ctl is a control message for send.
type ctl map[string]any

// untilDone reads frames until every mode in the state is done.
func (w *wsClient) untilDone() *serverMsg {
	w.tb.Helper()
	for {
		m := w.readType("frame")
		done := len(m.State) > 0
		for _, st := range m.State {
			done = done && st.Done
		}
		if done {
			return m
		}
	}
}

const bench64 = "image=demo&path=/seed/bench64.bin"

// slotsOf reads the whole initial map of a hello's run, page by page through the socket, and lays
// changed over it: the slot map the client shows.
func (w *wsClient) slotsOf(h *serverMsg, changed []core.Extent) []string {
	w.tb.Helper()
	initial := append([]core.Extent{}, h.Initial.Extents...)
	for next := h.Initial.Next; next < h.Range.End; {
		w.send(ctl{"type": "initial", "from": next})
		m := w.readType("initial")
		if m.From != next || m.Next <= next {
			w.tb.Fatalf("initial page from %d: from %d next %d", next, m.From, m.Next)
		}
		initial, next = append(initial, m.Extents...), m.Next
	}
	out := expandExtents(initial, h.Range)
	for i, s := range expandExtents(changed, h.Range) {
		if s != "" {
			out[i] = s
		}
	}
	return out
}

func TestWSHelloAndEnd(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	w := ts.dialWS(t, bench64+"&mode=both")
	h := w.readType("hello")
	if h.Run.Mode != "both" || len(h.Run.Modes) != 2 || h.TotalSteps <= 0 || h.Step != 0 || len(h.State) != 2 {
		t.Fatalf("hello: mode %s modes %v total %d step %d", h.Run.Mode, h.Run.Modes, h.TotalSteps, h.Step)
	}
	if h.Run.Size != "67108864" || h.Run.Offset != "0" || h.Run.Length != "67108864" {
		t.Errorf("hello run %+v: sizes must be decimal strings", h.Run)
	}
	if len(h.Chunks) != 17 || h.Range != (player.Range{Start: 0, End: 16384}) {
		t.Errorf("hello: %d chunks, range %+v; want 17, [0,16384)", len(h.Chunks), h.Range)
	}
	if len(h.Initial.Extents) != 3 || h.Initial.Extents[1].Addr != 6144 || h.Initial.Next != 16384 {
		t.Errorf("hello initial = %+v", h.Initial)
	}
	// Paced by duration: the whole run in about 30 s, whatever its length.
	if h.Pace != "30" || h.StepsPerSecond < float64(h.TotalSteps)/31 || h.StepsPerSecond > float64(h.TotalSteps)/29 || h.TimeLeft < 29 || h.TimeLeft > 31 {
		t.Errorf("hello pace %q, %.1f steps/s, %.1f s left for %d steps", h.Pace, h.StepsPerSecond, h.TimeLeft, h.TotalSteps)
	}
	if len(h.Stops) < 5 || h.Stops[0].Kind != player.StopStart || h.Stops[len(h.Stops)-1].Step != h.TotalSteps {
		t.Errorf("hello stops %d", len(h.Stops))
	}
	for _, st := range h.Stops {
		if st.Question != nil && st.Question.Text == "" {
			t.Errorf("a question without text: %+v", st)
		}
	}
	w.send(ctl{"type": "end"})
	f := w.readType("frame")
	if f.Step != h.TotalSteps || !f.Full || f.TimeLeft != 0 {
		t.Fatalf("after end: step %d full %v time left %v; want %d, full, 0", f.Step, f.Full, f.TimeLeft, h.TotalSteps)
	}
	pb, bt := f.mode("per-block"), f.mode("batched")
	if pb == nil || bt == nil {
		t.Fatalf("states %+v", f.State)
	}
	// Kernel case 1: the whole 64 MiB file, 16,384 single-block calls upstream, 19 with the patch
	// (3 physical runs cut by 17 chunks).
	if pb.Counters.Calls != 16384 || bt.Counters.Calls != 19 || pb.Counters.BlocksInvalidated != 16384 || bt.Counters.BlocksInvalidated != 16384 {
		t.Fatalf("counters per-block %+v batched %+v", pb.Counters, bt.Counters)
	}
	if !pb.Done || !bt.Done || pb.Errno != "" || bt.Errno != "" {
		t.Fatalf("done/errno: %+v %+v", pb, bt)
	}
	// The outcome line the page shows at the end comes with the hello, in the server's words.
	if want := (player.Outcome{Returns: "f2fs_zero_range returns 0",
		Line: "f2fs_zero_range returns 0: 16,384 per-block calls against 19 batched, 862× fewer SIT lock holds, and the same slots and SIT at the end."}); h.Outcome != want {
		t.Errorf("hello outcome %+v, want %+v", h.Outcome, want)
	}
	if len(f.Changed) != 1 || f.Changed[0].State != "new" || f.Changed[0].Count != 16384 {
		t.Fatalf("slots changed at the end = %+v", f.Changed)
	}
	for _, sg := range pb.Segments {
		if sg.Class != core.SegPrefree && sg.Class != core.SegDirty && sg.Class != core.SegCurrent {
			t.Errorf("segment %d classed %s by the server", sg.Segno, sg.Class)
		}
	}
}

func TestWSPlayToEnd(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	w := ts.dialWS(t, bench64+"&mode=batched")
	h := w.readType("hello")
	w.send(ctl{"type": "speed", "stepsPerSecond": 1e6})
	w.send(ctl{"type": "play"})
	var calls int64
	var last *serverMsg
	for {
		m := w.readType("frame")
		for _, raw := range m.Events {
			var ev struct{ Kind, Mode string }
			json.Unmarshal(raw, &ev)
			if ev.Kind == "invalidate" && ev.Mode == "batched" {
				calls++
			}
		}
		last = m
		if st := m.mode("batched"); st != nil && st.Done {
			break
		}
	}
	if last.Step != h.TotalSteps || last.Playing {
		t.Fatalf("last frame: step %d/%d playing %v", last.Step, h.TotalSteps, last.Playing)
	}
	if got := last.mode("batched").Counters.Calls; got != 19 {
		t.Fatalf("batched calls = %d, want 19", got)
	}
	if last.EventsDropped == 0 && calls != 19 {
		t.Fatalf("saw %d invalidate events without drops, want 19", calls)
	}
}

func TestWSSeekStepBackMode(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	w := ts.dialWS(t, bench64+"&mode=per-block&step=100")
	h := w.readType("hello")
	if h.Step != 100 {
		t.Fatalf("hello at step %d, want 100 (from the URL)", h.Step)
	}
	w.send(ctl{"type": "step", "n": 1})
	f := w.readType("frame")
	if f.Step != 101 || len(f.Events) != 1 {
		t.Fatalf("step +1: step %d, %d events", f.Step, len(f.Events))
	}
	w.send(ctl{"type": "step", "n": -2})
	f = w.readType("frame")
	if f.Step != 99 || !f.Full || len(f.Changed) == 0 {
		t.Fatalf("step -2: step %d full %v", f.Step, f.Full)
	}
	w.send(ctl{"type": "seek", "step": 1 << 40})
	f = w.readType("frame")
	if f.Step != h.TotalSteps || f.mode("per-block").Counters.Calls != 16384 {
		t.Fatalf("seek past the end: step %d of %d, calls %d", f.Step, h.TotalSteps, f.mode("per-block").Counters.Calls)
	}
	w.send(ctl{"type": "seek", "step": 0})
	f = w.readType("frame")
	if f.Step != 0 || f.mode("per-block").Counters.Calls != 0 {
		t.Fatalf("seek 0: step %d calls %d", f.Step, f.mode("per-block").Counters.Calls)
	}
	// nextCall lands after the first call and its SIT update: counters and SIT agree.
	w.send(ctl{"type": "nextCall"})
	f = w.readType("frame")
	pb := f.mode("per-block")
	if pb.Counters.Calls != 1 || pb.Counters.BlocksInvalidated != 1 || pb.Counters.SITPieces != 1 {
		t.Fatalf("nextCall: counters %+v", pb.Counters)
	}
	// Mode switch: a new hello with both modes, at the same slot.
	cur := pb.Cursor
	w.send(ctl{"type": "mode", "mode": "both"})
	h2 := w.readType("hello")
	if h2.Run.Mode != "both" || len(h2.State) != 2 {
		t.Fatalf("after mode switch: mode %s, %d states", h2.Run.Mode, len(h2.State))
	}
	if c := h2.mode("batched").Cursor; c < cur {
		t.Fatalf("mode switch moved the cursor back: %d < %d", c, cur)
	}
	w.send(ctl{"type": "end"})
	f = w.readType("frame")
	if f.mode("batched").Counters.Calls != 19 || f.mode("per-block").Counters.Calls != 16384 {
		t.Fatalf("after mode switch and end: %+v / %+v", f.mode("per-block").Counters, f.mode("batched").Counters)
	}
	// Go to slot: the first step whose cursor reaches it.
	w.send(ctl{"type": "gotoSlot", "slot": 5000})
	f = w.readType("frame")
	if c := f.mode("per-block").Cursor; c < 5000 || c > 5001 {
		t.Fatalf("gotoSlot 5000: cursor %d", c)
	}
	// Reset goes back to 0.
	w.send(ctl{"type": "reset"})
	if f = w.readType("frame"); f.Step != 0 {
		t.Fatalf("reset: step %d", f.Step)
	}
	// Pace: one step a second, or the whole run in 10 s.
	w.send(ctl{"type": "pace", "pace": "step"})
	if f = w.readType("frame"); f.Pace != "step" || f.StepsPerSecond != 1 {
		t.Fatalf("pace step: %q %v", f.Pace, f.StepsPerSecond)
	}
	w.send(ctl{"type": "pace", "pace": "10"})
	if f = w.readType("frame"); f.Pace != "10" || f.TimeLeft < 9.9 || f.TimeLeft > 10.1 {
		t.Fatalf("pace 10: %q, %v s left", f.Pace, f.TimeLeft)
	}
	// A bad message gets a non-fatal error; the socket stays usable.
	w.send(ctl{"type": "jump"})
	if m := w.read(); m.Type != "error" || m.Fatal || m.Status != codes[EINVALID] || !strings.Contains(m.Error, "jump") {
		t.Fatalf("bad control answered with %+v", m)
	}
	w.send(ctl{"type": "step"})
	if f = w.readType("frame"); f.Step != 1 {
		t.Fatalf("step after an error: %d", f.Step)
	}
}

// TestWSQuiz answers every question of a run, right and wrong, and checks the server's verdict,
// the score, and that the answer is revealed by playing up to it.
func TestWSQuiz(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	w := ts.dialWS(t, bench64+"&mode=both")
	h := w.readType("hello")
	asked := 0
	for k, st := range h.Stops {
		q := st.Question
		if q == nil {
			continue
		}
		w.send(ctl{"type": "seek", "step": q.Ask})
		// The seek's own frame (one sent before it, e.g. after the hello, may come first).
		for f := w.readType("frame"); f.Step != q.Ask; f = w.readType("frame") {
		}
		// A slip — no answer, not yes or no, not a choice, more than the run has slots — is
		// refused with an error and does not use the question up (issue 20). Frames and
		// follower counts may come between; a quiz reply would mean the slip counted.
		for _, slip := range []string{"", "maybe", "99999999"} {
			w.send(ctl{"type": "answer", "stop": k, "answer": slip})
			e := w.read()
			for e.Type != "error" && e.Type != "quiz" {
				e = w.read()
			}
			if e.Type != "error" || !strings.Contains(e.Error, "answer:") {
				t.Fatalf("slip %q: %+v, want an error", slip, e)
			}
		}
		// An answer the question takes: on every other question one that may be right, to learn
		// the answer from the reply and then give it (a stop is scored once); else a wrong one.
		right := asked%2 == 0
		guess := validGuess(q, right)
		w.send(ctl{"type": "answer", "stop": k, "answer": guess})
		m := w.readType("quiz")
		asked++
		if m.Answer == "" || m.Stop != k || m.Score.Asked != asked {
			t.Fatalf("quiz reply %+v", m)
		}
		if right {
			// Now give the answer it said.
			w.send(ctl{"type": "answer", "stop": k, "answer": m.Answer})
			if m2 := w.readType("quiz"); !m2.Correct || m2.Score.Asked != asked {
				t.Fatalf("the right answer %q was judged %+v (a stop is scored once)", m.Answer, m2)
			}
		} else if m.Correct && guess != m.Answer {
			t.Fatalf("%q judged right for %q (answer %q)", guess, q.Text, m.Answer)
		}
		f := w.readType("frame")
		if f.Step != q.Reveal {
			t.Fatalf("answer revealed at step %d, want %d", f.Step, q.Reveal)
		}
	}
	if asked < 3 {
		t.Fatalf("bench64 asked %d questions", asked)
	}
}

// validGuess is an answer q takes: its first choice, "no", or a small number (first) or a larger
// one, both within any run's slots.
func validGuess(q *wireQuestion, first bool) string {
	switch {
	case q.Kind == "choice" && len(q.Choices) > 0:
		if first {
			return q.Choices[0]
		}
		return q.Choices[len(q.Choices)-1]
	case q.Kind == "yesno" && first:
		return "no"
	case q.Kind == "yesno":
		return "yes"
	case first:
		return "0"
	}
	return "1"
}

// TestWSNotAnUpgrade: a plain GET of the websocket endpoint does no work and answers 426 in JSON.
func TestWSNotAnUpgrade(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	var body errorBody
	if code := ts.get(t, "/ws/run?"+bench64, &body); code != http.StatusUpgradeRequired || body.Error == "" {
		t.Fatalf("plain GET: %d %+v", code, body)
	}
	if n := len(ts.outlines.m); n != 0 {
		t.Fatalf("a plain GET built %d outlines", n)
	}
}

// TestWSRefusedBeforeUpgrade: a websocket request the server cannot serve gets the API's status and
// JSON error before the upgrade.
func TestWSRefusedBeforeUpgrade(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, tt := range []struct {
		q    string
		code int
		msg  string
	}{
		{"path=/seed/bench64.bin", 400, "image"},
		{"image=nope&path=/seed/bench64.bin", 404, "not found"},
		{"image=demo&path=/seed/bench64.bin&mode=x", 400, "mode"},
		{"image=demo&path=/nope", 404, "not found"},
		{"image=demo&path=/seed/bench64.bin&step=-1", 400, "step"},
		{"image=demo&path=/seed/bench64.bin&offset=1.5", 400, "offset"},
		{"image=demo&path=/seed/bench64.bin&before=zero+/seed/bench64.bin+0", 400, "before"},
		{"image=demo&path=/seed/bench64.bin&before=zero+/cases/holes.bin+0+4096", 400, "one file"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.ts.URL, "http")+"/ws/run?"+tt.q, nil)
		cancel()
		if err == nil {
			c.CloseNow()
			t.Errorf("%s: upgraded", tt.q)
			continue
		}
		if res == nil || res.StatusCode != tt.code {
			t.Errorf("%s: %v; want %d", tt.q, res, tt.code)
			continue
		}
		var body errorBody
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil || codes[body.Code] != tt.code || !strings.Contains(body.Error, tt.msg) {
			t.Errorf("%s: body %+v (%v); want an error naming %q", tt.q, body, err, tt.msg)
		}
	}
}

// TestWSHugeOffset: an offset JavaScript cannot hold exactly reaches the engine exactly, which
// refuses it as the kernel does; the page and the socket agree, and nothing reconnects forever.
func TestWSHugeOffset(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	w := ts.dialWS(t, bench64+"&offset=9223372036854775807&length=1")
	h := w.readType("hello")
	if h.Run.Offset != "9223372036854775807" {
		t.Fatalf("offset came back as %q", h.Run.Offset)
	}
	w.send(ctl{"type": "end"})
	f := w.readType("frame")
	if st := f.mode("per-block"); st.Errno != "EFBIG" {
		t.Fatalf("errno %q, want EFBIG", st.Errno)
	}
}

// TestWSSlowClient: a client that never reads is dropped, and meanwhile another client plays to the
// end undisturbed.
func TestWSSlowClient(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	ts.wsWriteTimeout = 500 * time.Millisecond
	// A small receive buffer on the slow client's socket, so the server's writes back up after
	// little data.
	dialer := &net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(ts.ts.URL, "http") + "/ws/run?" + bench64 + "&mode=per-block"
	slow, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow()
	// Ask for big frames (256 events each) and pages of the initial map as fast as the server makes
	// them, and never read one.
	go func() {
		for i := 1; ; i++ {
			msg := `{"type":"step","n":256}`
			switch {
			case i%150 == 0:
				msg = `{"type":"reset"}`
			case i%3 == 0:
				msg = `{"type":"initial","from":0}`
			}
			if slow.Write(ctx, websocket.MessageText, []byte(msg)) != nil {
				return
			}
		}
	}()

	fast := ts.dialWS(t, bench64+"&mode=both")
	fast.readType("hello")
	fast.send(ctl{"type": "end"})
	f := fast.readType("frame")
	if f.mode("batched").Counters.Calls != 19 {
		t.Fatalf("fast client: %+v", f.mode("batched").Counters)
	}
	// The slow one is cut off: once its buffered data is read, reads fail.
	for {
		if _, _, err := slow.Read(ctx); err != nil {
			if ctx.Err() != nil {
				t.Fatal("slow client never dropped")
			}
			break
		}
	}
}

// TestWSDisconnectEndsRun: closing the socket mid-run ends the server's goroutines for it and gives
// its memory back to the budget.
func TestWSDisconnectEndsRun(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	// Warm up: one full connection so lazily started goroutines exist and the run's outline is
	// cached (the cache holds its Bytes of the budget until evicted).
	w := ts.dialWS(t, bench64+"&mode=both")
	w.readType("hello")
	w.c.Close(websocket.StatusNormalClosure, "")
	eventually(t, 10*time.Second, "the first viewer's connection goroutines ended", func() bool { return len(wsGoroutines()) == 0 })
	base := runtime.NumGoroutine()
	// The first viewer's reservation ends once its connection's goroutines have: then only the
	// cached outlines hold the budget.
	var cached int64
	eventually(t, 10*time.Second, "the first viewer's reservation released", func() bool {
		cached = ts.budget.inUse()
		return cached == ts.outlines.charged()
	})

	w = ts.dialWS(t, bench64+"&mode=both")
	w.readType("hello")
	if ts.budget.inUse() <= cached {
		t.Fatal("a viewer reserved nothing from the memory budget")
	}
	w.send(ctl{"type": "speed", "stepsPerSecond": 1000})
	w.send(ctl{"type": "play"})
	w.readType("frame")
	if n := runtime.NumGoroutine(); n <= base {
		t.Fatalf("goroutines while playing %d, before %d", n, base)
	}
	if len(wsGoroutines()) == 0 {
		t.Fatal("no goroutine serves the websocket while it plays: wsGoroutines looks for the wrong names")
	}
	w.c.CloseNow()
	eventually(t, 10*time.Second, "the viewer's connection goroutines ended", func() bool { return len(wsGoroutines()) == 0 })
	waitGoroutines(t, base)
	if u := ts.budget.inUse(); u != cached {
		t.Fatalf("%d bytes still reserved after the viewer left, want the cached outline's %d", u, cached)
	}
}

// TestWSBudget: past the memory budget a new viewer is refused with 503 and Retry-After before the
// upgrade, and the ones already in play go on.
func TestWSBudget(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{MaxMemory: 4 << 20})
	a := ts.dialWS(t, bench64+"&mode=both")
	a.readType("hello")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(ts.ts.URL, "http") + "/ws/run?" + bench64 + "&mode=both"
	var res *http.Response
	for range 40 {
		var c *websocket.Conn
		var err error
		if c, res, err = websocket.Dial(ctx, u, nil); err != nil {
			break
		}
		defer c.CloseNow()
	}
	if res == nil || res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Fatalf("over the budget: %v; want 503 with Retry-After", res)
	}
	a.send(ctl{"type": "end"})
	if f := a.readType("frame"); f.mode("batched").Counters.Calls != 19 {
		t.Fatalf("the viewer in play: %+v", f.mode("batched").Counters)
	}
}

// wsGoroutines returns the stacks of the goroutines serving a websocket: a run's handler, its
// session, its connection's reader and writer, the websocket library's.
func wsGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, m := range []string{"web.(*Server).handleWS", "web.(*session)", "web.(*conn)", "coder/websocket."} {
			if strings.Contains(g, m) && !strings.Contains(g, "web.wsGoroutines") && !strings.Contains(g, "_test.go") {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// waitGoroutines waits until at most want goroutines run, failing after 10 s with their stacks.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines: %d, want ≤ %d\n%s", runtime.NumGoroutine(), want, buf)
		}
		time.Sleep(20 * time.Millisecond) // the poll's interval: the count is the state waited for
	}
}

// TestWSCloseClosesSockets: Server.Close closes open websockets with 1001.
func TestWSCloseClosesSockets(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	w := ts.dialWS(t, bench64)
	w.readType("hello")
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for {
			if _, _, err := w.c.Read(ctx); err != nil {
				done <- err
				return
			}
		}
	}()
	if err := ts.Server.Close(); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("after Close the client read %v; want close status 1001", err)
	}
}

// kernelCase is one single-operation case of core/testdata/kernel-cases:
// what Linux 6.12 did, with and without the batched patch.
type kernelCase struct {
	n              int
	path           string
	offset, length int64
	keepSize       bool
	errno          string // "" for OK
	perBlockCalls  int
	batchedCalls   [][2]uint32
}

// loadKernelCases reads the fixtures, skipping multi-operation cases.
func loadKernelCases(t *testing.T) []kernelCase {
	t.Helper()
	dir := "../core/testdata/kernel-cases"
	var out []kernelCase
	for n := 1; ; n++ {
		ops, err := os.ReadFile(fmt.Sprintf("%s/%d.ops", dir, n))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(ops)), "\n")
		if len(lines) != 1 {
			continue
		}
		f := strings.Fields(lines[0])
		kc := kernelCase{n: n, path: f[1], keepSize: len(f) > 4 && f[4] == "keep_size"}
		kc.offset, _ = strconv.ParseInt(f[2], 10, 64)
		kc.length, _ = strconv.ParseInt(f[3], 10, 64)
		res, _ := os.ReadFile(fmt.Sprintf("%s/%d.result", dir, n))
		if r := strings.TrimSpace(string(res)); r != "OK" {
			kc.errno = r
		}
		trace, _ := os.ReadFile(fmt.Sprintf("%s/%d.trace", dir, n))
		kc.perBlockCalls = len(strings.Fields(string(trace)))
		batched, _ := os.ReadFile(fmt.Sprintf("%s/%d.trace.batched", dir, n))
		for _, l := range strings.Split(strings.TrimSpace(string(batched)), "\n") {
			var s, n uint32
			if _, err := fmt.Sscan(l, &s, &n); err == nil {
				kc.batchedCalls = append(kc.batchedCalls, [2]uint32{s, n})
			}
		}
		out = append(out, kc)
	}
	if len(out) < 8 {
		t.Fatalf("only %d kernel cases found in %s", len(out), dir)
	}
	return out
}

// TestKernelCases plays every single-operation kernel case through the
// websocket and the run API and compares with what the kernel did.
func TestKernelCases(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, kc := range loadKernelCases(t) {
		t.Run(strconv.Itoa(kc.n), func(t *testing.T) {
			t.Parallel()
			q := fmt.Sprintf("path=%s&offset=%d&length=%d&keepSize=%t&mode=both", url.QueryEscape(kc.path), kc.offset, kc.length, kc.keepSize)
			var run struct {
				Results []struct {
					Mode  string      `json:"mode"`
					Errno string      `json:"errno"`
					Calls [][2]uint32 `json:"calls"`
				} `json:"results"`
			}
			if code := ts.get(t, "/api/images/demo/run?"+q, &run); code != 200 || len(run.Results) != 2 {
				t.Fatalf("run API: %d, %d results", code, len(run.Results))
			}
			pb, bt := run.Results[0], run.Results[1]
			if pb.Mode != "per-block" || bt.Mode != "batched" {
				t.Fatalf("result modes %s, %s", pb.Mode, bt.Mode)
			}
			if pb.Errno != kc.errno || bt.Errno != kc.errno || len(pb.Calls) != kc.perBlockCalls ||
				fmt.Sprint(bt.Calls) != fmt.Sprint(kc.batchedCalls) {
				t.Fatalf("run API: errno %q/%q, %d per-block calls, batched %v; kernel: %q, %d, %v",
					pb.Errno, bt.Errno, len(pb.Calls), bt.Calls, kc.errno, kc.perBlockCalls, kc.batchedCalls)
			}

			w := ts.dialWS(t, "image=demo&"+q)
			h := w.readType("hello")
			w.send(ctl{"type": "end"})
			f := w.readType("frame")
			if f.Step != h.TotalSteps {
				t.Fatalf("end: step %d of %d", f.Step, h.TotalSteps)
			}
			for mode, want := range map[string]int{"per-block": kc.perBlockCalls, "batched": len(kc.batchedCalls)} {
				st := f.mode(mode)
				if st == nil || !st.Done || st.Errno != kc.errno || st.Counters.Calls != uint64(want) {
					t.Fatalf("websocket %s: %+v; want done, errno %q, %d calls", mode, st, kc.errno, want)
				}
			}
		})
	}
}

// TestWSPlayFrames plays at a speed that needs many frames and checks that
// the events of successive frames are every step, in order, without gaps.
func TestWSPlayFrames(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	w := ts.dialWS(t, "image=demo&path=/cases/fragmented.bin&mode=both")
	h := w.readType("hello")
	// 64 runs of 4 blocks: 256 per-block calls, 64 batched.
	speed := float64(h.TotalSteps) * 2 // half a second: about 15 frames
	w.send(ctl{"type": "speed", "stepsPerSecond": speed})
	w.send(ctl{"type": "play"})
	var next int64 = 1
	frames, calls := 0, map[string]int{}
	resynced := false
	var last *serverMsg
	for {
		f := w.readType("frame")
		frames++
		if f.Full {
			// The client was late (a loaded machine) and a frame was
			// replaced: resynchronise; the counts below then come from the
			// state only.
			if f.Step != next-1 {
				t.Logf("full frame at step %d skips events", f.Step)
				resynced = true
				next = f.Step + 1
			}
			continue
		}
		for _, raw := range f.Events {
			var ev struct {
				Step int64
				Kind string
				Mode string
			}
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Step != next {
				t.Fatalf("event step %d, want %d", ev.Step, next)
			}
			next++
			if ev.Kind == "invalidate" {
				calls[ev.Mode]++
			}
		}
		if len(f.Events) > 0 && f.Step != next-1 {
			t.Fatalf("frame step %d after events up to %d", f.Step, next-1)
		}
		if last = f; !f.Playing && f.Step == h.TotalSteps {
			break
		}
	}
	if pb, bt := last.mode("per-block").Counters.Calls, last.mode("batched").Counters.Calls; pb != 256 || bt != 64 {
		t.Fatalf("counters at the end: %d per-block, %d batched calls", pb, bt)
	}
	if !resynced && (next-1 != h.TotalSteps || calls["per-block"] != 256 || calls["batched"] != 64) {
		t.Fatalf("played %d of %d steps in %d frames; calls %v, want 256 per-block and 64 batched", next-1, h.TotalSteps, frames, calls)
	}
	if frames < 3 {
		t.Fatalf("the whole run came in %d frames", frames)
	}
}

// TestWSSeekMatchesStepping: in both mode a seek (lockstep checkpoints)
// lands on the same state as stepping there from the start.
func TestWSSeekMatchesStepping(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	w := ts.dialWS(t, "image=demo&path=/cases/rewritten.bin&mode=both")
	h := w.readType("hello")
	const cp = 1024 // the player's lockstep checkpoint spacing
	for _, g := range []int64{1, cp - 1, cp, cp + 1, h.TotalSteps/2 + 3, h.TotalSteps - 1} {
		w.send(ctl{"type": "seek", "step": g})
		a := w.readType("frame")
		w.send(ctl{"type": "reset"})
		w.readType("frame")
		w.send(ctl{"type": "step", "n": g})
		b := w.readType("frame")
		if a.Step != g || b.Step != g {
			t.Fatalf("seek %d: at %d; stepping: at %d", g, a.Step, b.Step)
		}
		for _, m := range []string{"per-block", "batched"} {
			sa, sb := a.mode(m), b.mode(m)
			if sa.Step != sb.Step || sa.Cursor != sb.Cursor || sa.Counters != sb.Counters || fmt.Sprint(sa.Pending) != fmt.Sprint(sb.Pending) {
				t.Fatalf("step %d %s: seek gives %+v, stepping %+v", g, m, sa, sb)
			}
		}
	}
}

// TestWSSlotsAtEnd: the slot map a client builds (the initial map, paged, with the final frame's
// changes laid over it) equals the engine's after-state, for ranges of every shape.
func TestWSSlotsAtEnd(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, q := range []string{
		"path=/seed/bench64.bin&offset=1000&length=60000000",
		"path=/cases/sparse-9g.bin",
		"path=/cases/sparse-9g.bin&offset=9000000000&length=700000000",
		"path=/cases/holes.bin&offset=4095&length=600000",
		"path=/cases/rewritten.bin",
		"path=/cases/tiny.txt&length=4096",
	} {
		t.Run(q, func(t *testing.T) {
			var run struct {
				Results []struct {
					After struct{ Extents []core.Extent } `json:"after"`
				} `json:"results"`
			}
			if code := ts.get(t, "/api/images/demo/run?mode=per-block&"+q, &run); code != 200 {
				t.Fatalf("run API: %d", code)
			}
			w := ts.dialWS(t, "image=demo&mode=per-block&"+q)
			h := w.readType("hello")
			w.send(ctl{"type": "end"})
			f := w.readType("frame")
			got := w.slotsOf(h, f.Changed)
			want := expandExtents(run.Results[0].After.Extents, h.Range)
			for i := range got {
				// Where no extent says, a slot is NULL (the engine's map leaves out NULL past EOF).
				if got[i] == "" {
					got[i] = "null"
				}
				if want[i] == "" {
					want[i] = "null"
				}
				if got[i] != want[i] {
					t.Fatalf("slot %d: the client would show %q, the engine says %q (range %+v)", h.Range.Start+uint64(i), got[i], want[i], h.Range)
				}
			}
		})
	}
}

// expandExtents lists the state of each slot of r ("" where no extent says; addresses spelled out).
func expandExtents(ext []core.Extent, r player.Range) []string {
	out := make([]string, r.End-r.Start)
	for _, e := range ext {
		for k := uint64(0); k < e.Count; k++ {
			i := e.Index + k
			if i < r.Start || i >= r.End {
				continue
			}
			s := e.State
			if s == "addr" {
				s = strconv.FormatUint(uint64(e.Addr)+k, 10)
			}
			out[i-r.Start] = s
		}
	}
	return out
}

// TestWSSandbox plays a sandbox slot list in the player (the route /sandbox/run opens) and checks
// its calls against POST /api/sandbox, for lists with a chunk boundary, NEW slots inside a run, and
// a repeated address.
func TestWSSandbox(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, list := range []string{
		"34304-34815 NEW*3 34816 | 6144-6200 NULL 9000",
		"7200 7201 7200",
		"4096-5119",
	} {
		var api struct {
			Results []struct {
				Mode  string `json:"mode"`
				Errno string `json:"errno"`
				Stats struct {
					Calls uint64 `json:"calls"`
				} `json:"stats"`
			} `json:"results"`
		}
		res, err := http.Post(ts.ts.URL+"/api/sandbox", "application/json", strings.NewReader(`{"slots":`+strconv.Quote(list)+`,"mode":"both"}`))
		if err != nil {
			t.Fatal(err)
		}
		if code := decode(t, res, &api); code != 200 || len(api.Results) != 2 {
			t.Fatalf("%s: POST /api/sandbox %d", list, code)
		}
		w := ts.dialWS(t, "mode=both&sandbox="+url.QueryEscape(list))
		h := w.readType("hello")
		if h.Run.Sandbox == "" || h.Run.Image != "" || len(h.Chunks) == 0 {
			t.Fatalf("%s: hello run %+v", list, h.Run)
		}
		w.send(ctl{"type": "end"})
		f := w.readType("frame")
		for i, r := range api.Results {
			st := f.mode(r.Mode)
			if st == nil || st.Counters.Calls != r.Stats.Calls || st.Errno != r.Errno || !st.Done {
				t.Fatalf("%s %s: player %+v, API %d calls %q", list, api.Results[i].Mode, st, r.Stats.Calls, r.Errno)
			}
		}
		doc, code := ts.getPage(t, "/sandbox/run?mode=both&slots="+url.QueryEscape(list))
		if code != 200 {
			t.Fatalf("%s: page %d", list, code)
		}
		if got, _ := doc.Find(testid("player")).Attr("data-sandbox"); got != h.Run.Sandbox {
			t.Fatalf("%s: data-sandbox %q, want %q", list, got, h.Run.Sandbox)
		}
	}
	if _, code := ts.getPage(t, "/sandbox/run?slots=NEW*x"); code != 400 {
		t.Fatalf("a bad list: %d", code)
	}
}
