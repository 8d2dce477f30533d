package web

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// roomReply is a room or answers message.
type roomReply struct {
	roomInfo
	Type       string         `json:"type"`
	Stop       int            `json:"stop"`
	Counts     map[string]int `json:"counts"`
	Answered   int            `json:"answered"`
	Pending    bool           `json:"pending"`
	Unanswered bool           `json:"unanswered"`
	Correct    bool           `json:"correct"`
	Answer     string         `json:"answer"`
	Score      score          `json:"score"`
	Room       *roomInfo      `json:"room"`
	Step       int64          `json:"step"`
	Error      string         `json:"error"`
	Status     int            `json:"status"`
	Run        runInfo        `json:"run"`
}

// readRaw reads messages until one of type typ and decodes it as a roomReply.
func (w *wsClient) readRoom(typ string) *roomReply {
	w.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		_, b, err := w.c.Read(ctx)
		if err != nil {
			w.tb.Fatalf("read (waiting for %s): %v", typ, err)
		}
		var m roomReply
		if err := json.Unmarshal(b, &m); err != nil {
			w.tb.Fatal(err)
		}
		if m.Type == typ {
			return &m
		}
	}
}

func (ts *testServer) dialFollow(tb testing.TB, code string) *wsClient {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.ts.URL, "http")+"/ws/follow?code="+code, nil)
	if err != nil {
		st := 0
		if res != nil {
			st = res.StatusCode
		}
		tb.Fatalf("follow %s: %v (%d)", code, err, st)
	}
	c.SetReadLimit(64 << 20)
	tb.Cleanup(func() { c.CloseNow() })
	return &wsClient{tb: tb, c: c}
}

// startRoom opens a presenter on q and starts a room.
func startRoom(t *testing.T, ts *testServer, q string) (*wsClient, *serverMsg, *roomReply) {
	t.Helper()
	p := ts.dialWS(t, q)
	h := p.readType("hello")
	p.send(ctl{"type": "room"})
	r := p.readRoom("room")
	if len(r.Code) < 6 || r.Token == "" || r.Role != "presenter" || r.URL != "/follow/"+r.Code || strings.Contains(r.URL, r.Token) {
		t.Fatalf("room: %+v", r.roomInfo)
	}
	return p, h, r
}

// TestRoom drives a presenter and two followers through a room: late joining, mirrored seeks and
// mode changes, followers refused the controls, a quiz with the spread of answers and the reveal,
// the presenter leaving and coming back with its token, and the room's end.
func TestRoom(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	ts.roomLingerFor.Store(int64(2 * time.Second))
	p, h, r := startRoom(t, ts, bench64+"&mode=both")

	p.send(ctl{"type": "seek", "step": 5000})
	p.readType("frame")
	// A late joiner starts at the presenter's step.
	a := ts.dialFollow(t, r.Code)
	ha := a.readType("hello")
	if ha.Step != 5000 || ha.TotalSteps != h.TotalSteps {
		t.Fatalf("late joiner's hello at step %d of %d, want 5000 of %d", ha.Step, ha.TotalSteps, h.TotalSteps)
	}
	b := ts.dialFollow(t, r.Code)
	b.readType("hello")
	// Follower counts are coalesced (newest wins): read until the count arrives.
	for p.readRoom("room").Followers < 2 {
	}
	// The presenter drives; both follow.
	p.send(ctl{"type": "seek", "step": 12345})
	p.readType("frame")
	for _, f := range []*wsClient{a, b} {
		if fr := f.readType("frame"); fr.Step != 12345 || len(fr.State) != 2 {
			t.Fatalf("follower at %d, want 12345", fr.Step)
		}
	}
	// A follower cannot drive.
	a.send(ctl{"type": "seek", "step": 0})
	if e := a.readRoom("error"); e.Status != codes[EINVALID] || !strings.Contains(e.Error, "presenter") {
		t.Fatalf("a follower's seek answered %+v", e)
	}
	// A follower pages the initial map itself.
	a.send(ctl{"type": "initial", "from": 0})
	if m := a.readType("initial"); m.Next != 16384 {
		t.Fatalf("follower's initial page: next %d", m.Next)
	}

	// The quiz: the presenter asks, the followers answer, the presenter sees the spread, reveals.
	// The room's quiz holds every view at the first question the presenter has not revealed
	// (quizhold.go): that is the one asked.
	var k = -1
	for i, st := range h.Stops {
		if st.Question != nil {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatal("bench64 has no question")
	}
	q := h.Stops[k].Question
	ans := map[string][2]string{"number": {"1", "12,345"}, "yesno": {"yes", "no"}}[q.Kind]
	norm := map[string][2]string{"number": {"1", "12345"}, "yesno": {"yes", "no"}}[q.Kind]
	if q.Kind == "choice" {
		ans, norm = [2]string{q.Choices[0], q.Choices[1]}, [2]string{q.Choices[0], q.Choices[1]}
	}
	// c follows the quiz and gives no answer.
	c := ts.dialFollow(t, r.Code)
	c.readType("hello")
	p.send(ctl{"type": "seek", "step": q.Ask})
	p.readType("frame")
	p.send(ctl{"type": "ui", "stop": k, "quiz": true, "question": k})
	// A room message sent before the UI changed (a coalesced count) may come first.
	for _, f := range []*wsClient{a, b} {
		for m := f.readRoom("room"); m.UI.Question != k || !m.UI.Quiz; m = f.readRoom("room") {
		}
	}
	a.send(ctl{"type": "answer", "stop": k, "answer": ans[0]})
	b.send(ctl{"type": "answer", "stop": k, "answer": ans[1]})
	for _, f := range []*wsClient{a, b} {
		if m := f.readRoom("quiz"); !m.Pending || m.Answer != "" {
			t.Fatalf("a follower's answer was judged before the reveal: %+v", m)
		}
	}
	var spread *roomReply
	for spread == nil || spread.Answered < 2 {
		spread = p.readRoom("answers")
	}
	if spread.Counts[norm[0]] != 1 || spread.Counts[norm[1]] != 1 {
		t.Fatalf("spread %+v", spread.Counts)
	}
	p.send(ctl{"type": "reveal", "stop": k})
	right := p.readRoom("quiz").Answer
	for i, f := range []*wsClient{a, b} {
		m := f.readRoom("quiz")
		want := norm[i] == right
		if m.Answer != right || m.Correct != want || m.Unanswered || m.Score.Asked != 1 {
			t.Fatalf("follower %d verdict %+v (right answer %q)", i, m, right)
		}
		if fr := f.readType("frame"); fr.Step != q.Reveal {
			t.Fatalf("follower %d at %d after the reveal, want %d", i, fr.Step, q.Reveal)
		}
	}

	// The silent follower is told the answer, not judged: its page says "not answered", not
	// "wrong", and its score is still 0/0.
	if m := c.readRoom("quiz"); m.Answer != right || m.Correct || !m.Unanswered || m.Score.Asked != 0 {
		t.Fatalf("the silent follower's reveal %+v (right answer %q)", m, right)
	}
	c.c.CloseNow()

	// The presenter changes mode — with the quiz off: the other mode's view would show this one's
	// answers — and the followers get a new hello; the quiz on again holds them.
	p.send(ctl{"type": "mode", "mode": "batched"})
	if e := p.readRoom("error"); !strings.Contains(e.Error, "quiz is on") {
		t.Fatalf("a mode change with the quiz on: %s", e.Error)
	}
	p.send(ctl{"type": "ui", "stop": -1, "quiz": false, "question": -1})
	p.send(ctl{"type": "mode", "mode": "batched"})
	p.readType("hello")
	ha = a.readType("hello")
	if ha.Run.Mode != "batched" || ha.Hold != nil {
		t.Fatalf("follower's mode after the switch: %s, hold %+v", ha.Run.Mode, ha.Hold)
	}
	p.send(ctl{"type": "ui", "stop": -1, "quiz": true, "question": -1})
	if ha = a.readType("hold"); ha.Hold == nil {
		t.Fatal("the room's quiz is on again, and holds nothing")
	}

	// The presenter leaves and comes back with its token; a wrong token is refused.
	p.c.CloseNow()
	for a.readRoom("room").Presenter {
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(ts.ts.URL, "http") + "/ws/run?" + bench64 + "&mode=batched&room=" + r.Code
	if _, res, err := websocket.Dial(ctx, u+"&token=wrong", nil); err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("a wrong token: %v %v", err, res)
	}
	p2 := ts.dialWS(t, "image=demo&path=/seed/bench64.bin&mode=batched&room="+r.Code+"&token="+r.Token)
	if h2 := p2.readType("hello"); h2.Room == nil || h2.Room.Role != "presenter" {
		t.Fatalf("the presenter's hello after reclaiming: %+v", h2.Room)
	}
	// The room's quiz holds the reclaimed presenter, and so its followers, at the open question.
	p2.send(ctl{"type": "end"})
	p2.readType("frame")
	if fr := a.readType("frame"); fr.Step > ha.Hold.Ask {
		t.Fatalf("follower at %d after End with the question at %d open", fr.Step, ha.Hold.Ask)
	}
	p2.send(ctl{"type": "ui", "stop": -1, "quiz": false, "question": -1})
	p2.send(ctl{"type": "end"})
	p2.readType("frame")
	fr := a.readType("frame")
	for fr.Step <= ha.Hold.Ask { // the frame of the quiz turned off, at the question
		fr = a.readType("frame")
	}
	if fr.Step != h2Total(t, a, fr) {
		t.Fatalf("follower after the reclaimed presenter's end: %d", fr.Step)
	}

	// The room ends roomLinger after the presenter leaves for good: 2 s let it come back above,
	// a short linger now is only the wait for the end.
	ts.roomLingerFor.Store(int64(50 * time.Millisecond))
	p2.c.CloseNow()
	for {
		m := a.readRoom("room")
		if m.Ended {
			break
		}
	}
	if _, _, err := a.c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after the room ended the follower read %v, want a normal close", err)
	}
	if _, ok := ts.rooms.get(r.Code); ok {
		t.Fatal("the ended room is still listed")
	}
}

// h2Total returns the total steps a frame's run has (the end, once the presenter pressed End).
func h2Total(t *testing.T, _ *wsClient, fr *serverMsg) int64 {
	t.Helper()
	for _, st := range fr.State {
		if !st.Done {
			t.Fatalf("a mode is not done at the end: %+v", st)
		}
	}
	return fr.Step
}

// TestRoomFollowPage: /follow/{code} is the player page in follower mode; an unknown code is a 404
// page.
func TestRoomFollowPage(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	_, _, r := startRoom(t, ts, bench64)
	doc, code := ts.getPage(t, "/follow/"+r.Code)
	if code != 200 {
		t.Fatalf("follow page: %d", code)
	}
	if got, _ := doc.Find(testid("player")).Attr("data-follow"); got != r.Code {
		t.Fatalf("data-follow = %q", got)
	}
	if html, _ := doc.Html(); strings.Contains(html, r.Token) {
		t.Fatal("the follow page shows the presenter's token")
	}
	if _, code := ts.getPage(t, "/follow/nosuchroom"); code != 404 {
		t.Fatalf("unknown room: %d", code)
	}
}

// TestRoomLoad holds 200 followers on loopback, one of them never reading, and measures how long a
// presenter's seek takes to reach every follower (logged, with the server's memory; no timed
// assertion). Every reading follower must see every seek's step.
func TestRoomLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: 200 websocket followers")
	}
	ts := mustOpenServer(t, Config{})
	p, _, r := startRoom(t, ts, bench64+"&mode=both")
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 200
	fs := make([]*wsClient, n)
	for i := range fs {
		fs[i] = ts.dialFollow(t, r.Code)
		if i > 0 {
			fs[i].readType("hello")
		}
	}
	// fs[0] never reads: it must not slow anyone.
	var lat []time.Duration
	for round := 1; round <= 10; round++ {
		step := int64(round * 4000)
		start := time.Now()
		p.send(ctl{"type": "seek", "step": step})
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, f := range fs[1:] {
			wg.Add(1)
			go func(f *wsClient) {
				defer wg.Done()
				for {
					fr := f.readType("frame")
					if fr.Step == step {
						mu.Lock()
						lat = append(lat, time.Since(start))
						mu.Unlock()
						return
					}
				}
			}(f)
		}
		wg.Wait()
	}
	slices.Sort(lat)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	p95 := lat[len(lat)*95/100]
	t.Logf("200 followers, 10 seeks: latency p50 %v, p95 %v, max %v; heap in use +%d MiB; goroutines %d",
		lat[len(lat)/2], p95, lat[len(lat)-1], (int64(after.HeapInuse)-int64(before.HeapInuse))>>20, runtime.NumGoroutine())
	if len(lat) != 10*(n-1) {
		t.Fatalf("%d of %d frames arrived", len(lat), 10*(n-1))
	}
}
