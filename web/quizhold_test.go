package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/player"
)

// The server keeps the answer (issue 38): for each question of a run, every byte a client got
// before answering it (solo) or before the presenter revealed it (room) is decoded and searched for
// what answers it. The client tries every way past: End, a seek to the end and just past the
// question, steps, nextCall, gotoSlot to the last slot, play, a mode round trip.

// quizRuns are the runs the property is checked on: zero (bench64, prealloc), punch and truncate.
var quizRuns = []struct {
	name  string
	q     string
	needQ bool // the run must have questions (the test fails loudly if it has none)
}{
	{"bench64", bench64 + "&mode=both", true},
	{"bench64-batched", bench64 + "&mode=batched", true},
	{"prealloc", "image=demo&path=/cases/prealloc.bin&mode=both", true},
	{"fragmented", "image=demo&path=/cases/fragmented.bin&mode=both", false},
	{"punch", "image=demo&path=/cases/holes.bin&op=punch&offset=0&length=1MiB&keepSize=true&mode=both", true},
	{"truncate", "image=demo&path=/cases/indirect.bin&op=truncate&size=4096&mode=both", true},
}

// rawMsg is one message as received, and decoded.
type rawMsg struct {
	b []byte
	m *serverMsg
	h *holdMsg // a hold message
}

// recorder keeps every message a client got.
type recorder struct {
	t    *testing.T
	c    *websocket.Conn
	msgs []rawMsg
}

func (r *recorder) read() rawMsg {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, b, err := r.c.Read(ctx)
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	var m serverMsg
	if err := json.Unmarshal(b, &m); err != nil {
		r.t.Fatal(err)
	}
	rm := rawMsg{b: b, m: &m}
	if m.Type == "hold" {
		rm.h = &holdMsg{}
		if err := json.Unmarshal(b, rm.h); err != nil {
			r.t.Fatal(err)
		}
	}
	r.msgs = append(r.msgs, rm)
	return rm
}

// until reads until a message of type typ (for which ok, when given) and returns it.
func (r *recorder) until(typ string, ok func(*serverMsg) bool) *serverMsg {
	r.t.Helper()
	for {
		m := r.read()
		if m.m.Type == typ && (ok == nil || ok(m.m)) {
			return m.m
		}
	}
}

func (r *recorder) send(v any) {
	r.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.c.Write(ctx, websocket.MessageText, b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// sync waits for everything the server sent in answer to the controls before it: an "initial"
// request is answered in order.
func (r *recorder) sync() {
	r.t.Helper()
	r.send(ctl{"type": "initial", "from": 0})
	r.until("initial", nil)
}

func dialRecorder(t *testing.T, ts *testServer, path string) *recorder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.ts.URL, "http")+path, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &recorder{t: t, c: c}
}

// questions returns the stops of o with a question, in order.
func questions(o *player.Outline) []int {
	var ks []int
	for k, s := range o.Stops {
		if s.Question != nil {
			ks = append(ks, k)
		}
	}
	return ks
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) []byte {
	b, _ := json.Marshal(s)
	return bytes.Trim(b, `"`)
}

// assertNothingAnswers checks every message in msgs against stop k's question of o: nothing past its
// ask step, no text of its stop or a later one, no calls of a chunk not finished at its ask step, no
// slider marker past it, no outcome, no trace, and not its verdict.
func assertNothingAnswers(t *testing.T, where string, o *player.Outline, k int, msgs []rawMsg) {
	t.Helper()
	for i, rm := range msgs {
		q := o.Stops[k].Question
		outcome := o.Outcome()
		at := fmt.Sprintf("%s, question at stop %d (ask %d), message %d (%s)", where, k, q.Ask, i, rm.m.Type)
		m := rm.m
		if (m.Type == "frame" || m.Type == "hello") && m.Step > q.Ask {
			t.Fatalf("%s: shows step %d", at, m.Step)
		}
		for _, e := range m.Events {
			var ev struct{ Step int64 }
			json.Unmarshal(e, &ev)
			if ev.Step > q.Ask {
				t.Fatalf("%s: carries the event of step %d", at, ev.Step)
			}
		}
		for _, st := range m.State {
			if m.Step >= q.Ask && st.Narration != "" {
				t.Fatalf("%s: narrates %q at the ask step", at, st.Narration)
			}
		}
		if m.Type == "quiz" && m.Stop == k {
			t.Fatalf("%s: a verdict on the open question before its answer: %s", at, rm.b)
		}
		// The run's end: its outcome line and who returns what.
		for _, s := range []string{outcome.Line, outcome.Returns} {
			if s != "" && bytes.Contains(rm.b, jsonText(s)) {
				t.Fatalf("%s: carries the outcome %q", at, s)
			}
		}
		// The open stop's words and every later stop's.
		for j := k; j < len(o.Stops); j++ {
			for _, s := range []string{o.Stops[j].Title, o.Stops[j].Text} {
				if len(s) > 12 && bytes.Contains(rm.b, jsonText(s)) {
					t.Fatalf("%s: carries stop %d's words %q", at, j, s)
				}
			}
		}
		if m.Type == "hello" || m.Type == "hold" {
			var stops []wireStop
			var chunks []player.Chunk
			var markers []player.Marker
			var oc player.Outcome
			if rm.h != nil {
				stops, chunks, markers, oc = rm.h.Stops, rm.h.Chunks, rm.h.Markers, rm.h.Outcome
			} else {
				stops, chunks, markers, oc = m.Stops, m.Chunks, m.Markers, m.Outcome
			}
			if oc != (player.Outcome{}) {
				t.Fatalf("%s: carries an outcome %+v", at, oc)
			}
			if len(stops) > k+1 {
				t.Fatalf("%s: carries %d stops, the open question's is %d", at, len(stops), k)
			}
			if len(stops) == k+1 {
				s := stops[k]
				if !s.Withheld || s.Title != "" || s.Text != "" || s.Kind != "" || s.Slot != 0 || s.Step != q.Ask ||
					s.Question == nil || s.Question.Reveal != q.Ask {
					t.Fatalf("%s: the open stop is sent as %+v", at, s)
				}
			}
			for ci, c := range chunks {
				if oc := o.Chunks[ci]; (oc.End < 0 || oc.End > q.Ask) && c.Calls != nil {
					t.Fatalf("%s: chunk %d (done at step %d) carries its calls %v", at, ci, oc.End, c.Calls)
				}
			}
			for _, mk := range markers {
				if mk.Step > q.Ask {
					t.Fatalf("%s: a slider marker at step %d", at, mk.Step)
				}
			}
			if m.Trace != nil || m.Kernel != nil {
				t.Fatalf("%s: carries a kernel trace", at)
			}
		}
	}
}

// tryPast sends every control that could move a view past the open question, then plays: the
// play clock runs into the hold and stops there. The frame that says it stopped (playing false,
// the first frame after the sync that answered the other controls) is the event waited for, not
// a time; a server that played past the hold would send the steps before it.
func tryPast(r *recorder, o *player.Outline, ask int64, slots uint64) {
	for _, c := range []ctl{
		{"type": "end"},
		{"type": "seek", "step": o.Total},
		{"type": "seek", "step": ask + 1},
		{"type": "step", "n": o.Total},
		{"type": "step", "n": 1},
		{"type": "nextCall"},
		{"type": "nextCall"},
		{"type": "gotoSlot", "slot": o.Range.Start + slots - 1},
		{"type": "pace", "pace": "10"},
	} {
		r.send(c)
	}
	r.sync()
	r.send(ctl{"type": "play"})
	// At pace 10 the whole run plays in 10 s at ≤ 30 frames a second: a play still going after
	// 450 frames never stopped.
	frames := 0
	r.until("frame", func(m *serverMsg) bool {
		if frames++; frames > 450 {
			r.t.Fatalf("the play did not stop at the question (step %d, ask %d) within 450 frames", m.Step, ask)
		}
		return !m.Playing
	})
	r.sync()
}

// TestQuizHoldSolo: a client with quiz=1 gets nothing from which a question's answer follows
// before it answers it, whatever it asks for; its answer releases exactly that question.
func TestQuizHoldSolo(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, run := range quizRuns {
		t.Run(run.name, func(t *testing.T) {
			vals, _ := url.ParseQuery(run.q)
			o := outline(t, ts, vals)
			ks := questions(o)
			if len(ks) == 0 {
				if run.needQ {
					t.Fatalf("%s has no quiz questions: the property would test nothing", run.name)
				}
				return
			}
			slots := o.Range.End - o.Range.Start
			r := dialRecorder(t, ts, "/ws/run?"+run.q+"&quiz=1&step="+strconv.FormatInt(o.Total, 10))
			h := r.until("hello", nil)
			if h.Hold == nil || h.Hold.Stop != ks[0] || h.Hold.Questions != len(ks) {
				t.Fatalf("hello holds %+v, want stop %d of %d questions", h.Hold, ks[0], len(ks))
			}
			for n, k := range ks {
				q := o.Stops[k].Question
				tryPast(r, o, q.Ask, slots)
				// A mode change is refused while the quiz holds the view: the other mode's view
				// at the same point would show this one's answers.
				if n == 0 {
					r.send(ctl{"type": "mode", "mode": "batched"})
					r.send(ctl{"type": "mode", "mode": "per-block"})
					if e := r.until("error", nil); !strings.Contains(e.Error, "quiz is on") {
						t.Fatalf("a mode change during the quiz: %s", e.Error)
					}
					r.sync()
				}
				assertNothingAnswers(t, run.name+" solo", o, k, r.msgs)
				// The answer: its verdict, then a hold at the next question (or none).
				ans := q.Answer
				if n%2 == 1 {
					ans = wrongAnswer(q)
				}
				r.send(ctl{"type": "answer", "stop": k, "answer": ans})
				v := r.until("quiz", nil)
				if v.Stop != k || v.Answer != q.Answer || v.Correct != (ans == q.Answer) {
					t.Fatalf("verdict %+v for %q, want stop %d answer %s", v, ans, k, q.Answer)
				}
				hm := r.until("hold", nil)
				var held holdMsg
				json.Unmarshal(r.msgs[len(r.msgs)-1].b, &held)
				if n+1 < len(ks) {
					if held.Hold == nil || held.Hold.Stop != ks[n+1] {
						t.Fatalf("after answering stop %d the hold is %+v, want stop %d", k, held.Hold, ks[n+1])
					}
				} else if held.Hold != nil || held.Outcome != o.Outcome() {
					t.Fatalf("after the last answer the hold is %+v and the outcome %+v", held.Hold, held.Outcome)
				}
				if len(held.Stops) <= k || held.Stops[k].Withheld || held.Stops[k].Title != o.Stops[k].Title {
					t.Fatalf("after its answer stop %d is still withheld", k)
				}
				_ = hm
			}
			// Every question answered: End reaches the end.
			r.send(ctl{"type": "end"})
			if f := r.until("frame", func(m *serverMsg) bool { return m.Step == o.Total }); f.Step != o.Total {
				t.Fatal("unreachable")
			}
		})
	}
}

// TestQuizHoldReload: a reloaded page names the questions it has verdicts for (answered=): they
// are not asked again, and unscored.
func TestQuizHoldReload(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	vals, _ := url.ParseQuery(bench64 + "&mode=both")
	o := outline(t, ts, vals)
	ks := questions(o)
	if len(ks) < 2 {
		t.Fatalf("bench64 has %d questions", len(ks))
	}
	r := dialRecorder(t, ts, "/ws/run?"+bench64+"&mode=both&quiz=1&answered="+strconv.Itoa(ks[0])+",x,-1,99999")
	h := r.until("hello", nil)
	if h.Hold == nil || h.Hold.Stop != ks[1] || h.Score != (score{}) {
		t.Fatalf("reloaded with question 1 answered: hold %+v score %+v", h.Hold, h.Score)
	}
}

// TestQuizHoldRoom: in a room with the quiz on, a follower gets nothing from which a question's
// answer follows before the presenter reveals it, whatever the presenter or the follower does; a
// follower who leaves during the question is counted, and cannot answer it when it comes back.
func TestQuizHoldRoom(t *testing.T) {
	t.Parallel()
	for _, run := range quizRuns {
		if !run.needQ {
			continue
		}
		t.Run(run.name, func(t *testing.T) {
			// A server each: one address holds at most maxRoomsPerClient rooms.
			ts := mustOpenServer(t, Config{})
			vals, _ := url.ParseQuery(run.q)
			o := outline(t, ts, vals)
			ks := questions(o)
			slots := o.Range.End - o.Range.Start
			p := dialRecorder(t, ts, "/ws/run?"+run.q)
			p.until("hello", nil)
			p.send(ctl{"type": "room"})
			info := p.until("room", nil)
			_ = info
			var code string
			json.Unmarshal(p.msgs[len(p.msgs)-1].b, &struct{ Code *string }{&code})
			// The presenter ends the run before the quiz: a follower joining then sees it all...
			// so the quiz is turned on before anyone joins, at the end of the run.
			p.send(ctl{"type": "end"})
			p.send(ctl{"type": "ui", "stop": -1, "quiz": true, "question": -1})
			p.sync()
			f := dialRecorder(t, ts, "/ws/follow?code="+code)
			fh := f.until("hello", nil)
			if fh.Hold == nil || fh.Hold.Stop != ks[0] {
				t.Fatalf("follower's hello holds %+v, want stop %d", fh.Hold, ks[0])
			}
			for n, k := range ks {
				q := o.Stops[k].Question
				p.send(ctl{"type": "ui", "stop": k, "quiz": true, "question": k})
				p.sync()
				f.until("room", func(m *serverMsg) bool { return true })
				// The presenter tries to go past; so does the follower, whose controls are refused.
				tryPast(p, o, q.Ask, slots)
				for _, c := range []ctl{{"type": "end"}, {"type": "seek", "step": o.Total}, {"type": "mode", "mode": "batched"}} {
					f.send(c)
				}
				f.sync()
				// A second follower joins during the question: it cannot answer it.
				late := dialRecorder(t, ts, "/ws/follow?code="+code)
				late.until("hello", nil)
				late.send(ctl{"type": "answer", "stop": k, "answer": q.Answer})
				if e := late.until("error", nil); !strings.Contains(e.Error, "joined the room while this question was open") {
					t.Fatalf("a late joiner's answer: %s", e.Error)
				}
				assertNothingAnswers(t, run.name+" room follower", o, k, f.msgs)
				assertNothingAnswers(t, run.name+" room late joiner", o, k, late.msgs)
				if n == 0 {
					// The follower answers; another leaves: the presenter sees it.
					f.send(ctl{"type": "answer", "stop": k, "answer": q.Answer})
					f.until("quiz", nil)
					late.c.CloseNow()
					p.until("room", func(m *serverMsg) bool {
						var ri roomInfo
						json.Unmarshal(p.msgs[len(p.msgs)-1].b, &ri)
						return ri.Left == 1
					})
				} else {
					late.c.CloseNow()
				}
				p.send(ctl{"type": "reveal", "stop": k})
				v := f.until("quiz", func(m *serverMsg) bool { return m.Answer != "" })
				if v.Answer != q.Answer {
					t.Fatalf("reveal gave %+v", v)
				}
			}
		})
	}
}

// TestQuizHoldTrace: with a kernel trace attached and the quiz on, the trace (whose calls answer
// the questions) is withheld while anything is held, and comes back with a hello once the last
// question is answered.
func TestQuizHoldTrace(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, n := range []string{"1", "2", "5", "6", "8", "9", "12"} {
		q := caseQuery(t, n, "both")
		q.Set("image", DemoID)
		o := outline(t, ts, q)
		ks := questions(o)
		if len(ks) == 0 {
			continue
		}
		var ans traceAnswer
		if code := ts.postTrace(t, DemoID, readCase(t, n+".ftrace"), false, &ans); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, ans.Error)
		}
		q.Set(FieldTrace, ans.ID)
		r := dialRecorder(t, ts, "/ws/run?"+q.Encode()+"&quiz=1")
		r.until("hello", nil)
		for _, k := range ks {
			tryPast(r, o, o.Stops[k].Question.Ask, o.Range.End-o.Range.Start)
			assertNothingAnswers(t, "case "+n+" with a trace", o, k, r.msgs)
			r.send(ctl{"type": "answer", "stop": k, "answer": o.Stops[k].Question.Answer})
			r.until("quiz", nil)
		}
		if h := r.until("hello", nil); h.Trace == nil || h.Hold != nil {
			t.Fatalf("case %s: after the last answer the hello holds %+v, trace %v", n, h.Hold, h.Trace != nil)
		}
		return
	}
	t.Fatal("no kernel case has a quiz question")
}
