package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/zrviz/zrviz/player"
)

// The server keeps the answer, in the browser (issue 38): what the developer tools' network panel
// shows — every websocket message the page received — is decoded and searched as
// web/quizhold_test.go searches a raw client's, after the page was pushed past the open question by
// every key and link a student has: End, arrows, the slider at the end, a permalink at the end, the
// compare link, the mode key, a reload; in a room, on a phone follower: detach (f), quiz off (q),
// End, the compare link and the run form, a reload.

// wsTap records every websocket message a tab receives, as the developer tools show them.
type wsTap struct {
	mu   sync.Mutex
	msgs [][]byte
}

func tapWS(t *testing.T, ctx context.Context) *wsTap {
	t.Helper()
	w := &wsTap{}
	// Listen subscribes before it returns, so no frame after network.Enable is missed (the
	// iterator of chromedp.Events subscribes only once its goroutine runs).
	if err := chromedp.Listen(ctx, func(ev any) {
		f, ok := ev.(*network.EventWebSocketFrameReceived)
		if !ok || f.Response == nil || f.Response.Opcode != 1 {
			return
		}
		w.mu.Lock()
		w.msgs = append(w.msgs, append([]byte(nil), f.Response.PayloadData...))
		w.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return w
}

// paceBarrier picks another pace in the pace menu of the page ctx drives, as a user does, and waits
// until w, the tap of that page or of a follower of its room, has a frame at the new pace. The
// server answers a connection's controls in order and sends its messages in order, so every frame
// the keys pressed before it could bring has arrived by then: the event a negative check waits for,
// instead of a wait for time.
func (w *wsTap) paceBarrier(t *testing.T, ctx context.Context) {
	t.Helper()
	w.mu.Lock()
	from := len(w.msgs) // a frame at that pace before the change is not the answer to it
	w.mu.Unlock()
	now := js[string](t, ctx, `(() => {
		const s = document.getElementById('pace');
		const v = [...s.options].map((o) => o.value).find((v) => v !== s.value && v !== 'custom');
		s.value = v;
		s.dispatchEvent(new Event('change'));
		return v;
	})()`)
	if !w.waitFor(from, 30*time.Second, func(m serverMsg) bool { return m.Type == "frame" && m.Pace == now }) {
		t.Fatalf("no frame at pace %q within 30 s of the pace control", now)
	}
}

// waitFor reports whether a message the tap holds from index from on satisfies ok within d; each
// message is decoded once.
func (w *wsTap) waitFor(from int, d time.Duration, ok func(serverMsg) bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		w.mu.Lock()
		msgs := w.msgs[min(from, len(w.msgs)):]
		w.mu.Unlock()
		for _, b := range msgs {
			var m serverMsg
			if json.Unmarshal(b, &m) == nil && ok(m) {
				return true
			}
		}
		from += len(msgs)
		if time.Now().After(deadline) {
			return false
		}
	}
}

// take returns the messages so far, decoded, and forgets them.
func (w *wsTap) take(t *testing.T) []rawMsg {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]rawMsg, 0, len(w.msgs))
	for _, b := range w.msgs {
		var m serverMsg
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("a websocket message that is not JSON: %.200s", b)
		}
		rm := rawMsg{b: b, m: &m}
		if m.Type == "hold" {
			rm.h = &holdMsg{}
			json.Unmarshal(b, rm.h)
		}
		out = append(out, rm)
	}
	w.msgs = nil
	return out
}

// answerInPage answers the open question as a student does: a choice pressed, a number typed.
func answerInPage(t *testing.T, ctx context.Context, ans string) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const b = document.querySelector('#quiz-choices button[data-value=%q]'); if (b) b.click(); else { document.getElementById('quiz-answer').value = %q; document.getElementById('quiz-submit').click(); } })()`, ans, ans)))
}

// waitQuestion waits until the page asks q.
func waitQuestion(t *testing.T, ctx context.Context, q *player.Question, what string) {
	t.Helper()
	waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="quiz-question"]').textContent === %q && !document.getElementById('quiz').hidden`, q.Text), 30*time.Second,
		`'`+what+`: step ' + document.querySelector('[data-testid="step"]').textContent + ', question ' + document.querySelector('[data-testid="quiz-question"]').textContent`)
}

func TestBrowserQuizServerHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	bench := url.Values{"image": {DemoID}, "path": {"/seed/bench64.bin"}, "mode": {"both"}}
	o := outline(t, ts, bench)
	ks := questions(o)
	if len(ks) < 2 {
		t.Fatalf("bench64 has %d questions, want 2 at least", len(ks))
	}
	q1, q2 := o.Stops[ks[0]].Question, o.Stops[ks[1]].Question
	t.Logf("question 1 asked at %d (reveal %d), question 2 at %d of %d", q1.Ask, q1.Reveal, q2.Ask, o.Total)

	t.Run("solo", func(t *testing.T) {
		ctx := tab(t)
		tap := tapWS(t, ctx)
		// A permalink at the end, with the quiz on.
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "quiz": {"1"}, "step": {fmt.Sprint(o.Total)}})))
		waitQuestion(t, ctx, q1, "a permalink at the end")
		runPage := js[string](t, ctx, `location.pathname`)
		// Every way past a student has.
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.body.focus()`))
		for _, k := range []string{kb.End, kb.ArrowRight, kb.ArrowRight, "n", kb.End} {
			key(t, ctx, k, false)
		}
		seekTo(t, ctx, o.Total)
		key(t, ctx, "b", false) // the mode: refused while the quiz holds the view
		if js[bool](t, ctx, `!!document.querySelector('[data-testid="compare-link"]')`) {
			if js[bool](t, ctx, `document.querySelector('[data-testid="compare-link"]').hasAttribute('href')`) {
				t.Error("the compare link is live during a question")
			}
			do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="compare-link"]').click()`))
		}
		// The save menu's calls as CSV would list the whole run's calls.
		if js[bool](t, ctx, `(() => { const m = document.querySelector('details.figures') || document.getElementById('fig-csv').closest('details'); if (m) { m.open = true; m.dispatchEvent(new Event('toggle')); } return !document.getElementById('fig-csv').hidden; })()`) {
			t.Error("the calls as CSV are offered during a question")
		}
		tap.paceBarrier(t, ctx)
		if p := js[string](t, ctx, `location.pathname`); p != runPage {
			t.Fatalf("a link during the question left the run page for %s", p)
		}
		waitQuestion(t, ctx, q1, "every way past")
		if m := js[string](t, ctx, `document.querySelector('[data-testid="mode-select"]').value`); m != "both" {
			t.Errorf("the mode changed to %s during the question", m)
		}
		assertNothingAnswers(t, "the solo page's socket", o, ks[0], tap.take(t))

		// The answer, then a reload: the score and the question answered stay; question 2 is asked.
		answerInPage(t, ctx, q1.Answer)
		waitJS(t, ctx, `document.querySelector('[data-testid="quiz-score"]').textContent === '1/1'`, 10*time.Second)
		tap.take(t)
		do(t, ctx, chromedp.Reload())
		waitStatus(t, ctx, 30*time.Second, "paused", "playing")
		t.Logf("reloaded at %s, score %s", js[string](t, ctx, `location.search`), text(t, ctx, "quiz-score"))
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.body.focus()`))
		key(t, ctx, kb.End, false)
		waitQuestion(t, ctx, q2, "a reload after question 1")
		if s := text(t, ctx, "quiz-score"); s != "1/1" {
			t.Errorf("after a reload the score is %s, want 1/1 (kept for the run)", s)
		}
		// b (the mode) during question 2: refused, and question 2 stays (it jumped back to 1).
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.body.focus()`))
		key(t, ctx, "b", false)
		// The page refuses it and says why (the status's notice): the event that b was handled.
		waitJS(t, ctx, `/The quiz is on/.test(document.querySelector('[data-testid="run-status"]').title)`, 10*time.Second)
		waitQuestion(t, ctx, q2, "b during question 2")
		if m := js[string](t, ctx, `document.querySelector('[data-testid="mode-select"]').value`); m != "both" {
			t.Errorf("b during question 2 changed the mode to %s", m)
		}
		assertNothingAnswers(t, "the reloaded page's socket", o, ks[1], tap.take(t))
	})

	t.Run("room", func(t *testing.T) {
		src := axeSource(t)
		pres := tab(t)
		do(t, pres, chromedp.EmulateViewport(1366, 768))
		do(t, pres, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
		waitStatus(t, pres, 30*time.Second, "paused")
		code := pressRoomStart(t, pres)
		phone := tab(t)
		tap := tapWS(t, phone)
		do(t, phone, chromedp.EmulateViewport(390, 844))
		do(t, phone, chromedp.Navigate(base+"/follow/"+code))
		waitJSOr(t, phone, `document.querySelector('[data-testid="room-status"]').textContent === 'following the presenter'`, 30*time.Second,
			`document.querySelector('[data-testid="room-status"]').textContent`)
		waitFollowers(t, pres, 1)
		// The presenter goes to the end, then turns the quiz on: every page comes back to
		// question 1.
		key(t, pres, kb.End, false)
		do(t, pres, chromedp.Evaluate[chromedp.Void](`document.body.focus()`))
		key(t, pres, "q", false)
		waitQuestion(t, pres, q1, "the presenter's quiz on")
		waitQuestion(t, phone, q1, "the follower's quiz on")
		// The follower tries every way out.
		do(t, phone, chromedp.Evaluate[chromedp.Void](`document.body.focus()`))
		for _, k := range []string{"f", "q", kb.End, kb.ArrowRight} {
			key(t, phone, k, false)
		}
		do(t, phone, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="room-detach"]').click()`))
		if js[bool](t, phone, `!!document.querySelector('[data-testid="compare-link"]') && document.querySelector('[data-testid="compare-link"]').hasAttribute('href')`) {
			t.Error("the follower's compare link is live")
		}
		if !js[bool](t, phone, `document.querySelector('[data-testid="run-form"]').inert`) {
			t.Error("the follower's run form is live: it would leave the room")
		}
		tap.paceBarrier(t, pres)
		if s := text(t, phone, "room-status"); !strings.Contains(s, "quiz") && s != "following the presenter" {
			t.Errorf("after f, the follower's room status %q", s)
		}
		if !js[bool](t, phone, `document.body.classList.contains('room-follower') && document.getElementById('quiz-toggle').checked`) {
			t.Error("the follower left the room or the quiz by a key")
		}
		waitQuestion(t, phone, q1, "the follower's keys")
		axeCheck(t, phone, src, "the follower's page during a question at 390×844")
		axeCheck(t, pres, src, "the presenter's page during a question at 1366×768")
		shot(t, phone, "room-quiz-follower-390x844")
		// What came before the quiz was on came with the quiz off: the check starts at the hold
		// message that turned it on.
		all := tap.take(t)
		on := -1
		for i, m := range all {
			if m.h != nil && m.h.Hold != nil {
				on = i
				break
			}
		}
		if on < 0 {
			t.Fatal("the follower got no hold message when the quiz came on")
		}
		assertNothingAnswers(t, "the follower's socket", o, ks[0], all[on:])

		// A reload is a new follower: it cannot answer the open question, and the presenter
		// sees that one left during it.
		do(t, phone, chromedp.Reload())
		waitQuestion(t, phone, q1, "the follower reloaded")
		answerInPage(t, phone, q1.Answer)
		waitJSOr(t, pres, `/1 left during this question/.test(document.querySelector('[data-testid="room-followers"]').textContent)`, 10*time.Second,
			`document.querySelector('[data-testid="room-followers"]').textContent`)
		// The refusal is the event waited for (bounded): the presenter already counts the answer.
		if !tap.waitFor(0, 10*time.Second, func(m serverMsg) bool {
			return m.Type == "error" && strings.Contains(m.Error, "joined the room while this question was open")
		}) {
			t.Error("the reloaded follower's answer to the open question was not refused within 10 s")
		}
		msgs := tap.take(t)
		assertNothingAnswers(t, "the reloaded follower's socket", o, ks[0], msgs)
		// The reveal releases it.
		do(t, pres, chromedp.Click(chromedp.CSS(`[data-testid="room-reveal"]`)))
		waitJSOr(t, phone, `/not answered/.test(document.querySelector('[data-testid="quiz-result"]').textContent)`, 10*time.Second,
			`document.querySelector('[data-testid="quiz-result"]').textContent`)
	})
}
