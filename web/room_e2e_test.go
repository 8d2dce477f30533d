package web

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Rooms in headless Chromium (issue 10, "Follow a presenter"; docs/protocol.md, "Rooms"): a
// presenter and two followers through a room — start, seek, detach, rejoin, a reload of the
// presenter, the presenter leaving and the room ending — and a quiz to a score in a room.
// ZRVIZ_SCREENSHOTS=1 writes room-presenter.png and room-follower.png.

// seekTo moves the page's step slider to step as a user does (the slider's change event).
func seekTo(t *testing.T, ctx context.Context, step int64) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.getElementById('seek'); s.value = '%d'; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); })()`, step)))
}

// waitStep waits until the page shows step.
func waitStep(t *testing.T, ctx context.Context, step int64, timeout time.Duration) {
	t.Helper()
	waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="step"]').textContent.replace(/,/g, '') === '%d'`, step), timeout,
		`document.querySelector('[data-testid="step"]').textContent + ' ' + document.querySelector('[data-testid="run-status"]').textContent + ' ' + document.visibilityState + ' ' + document.hasFocus() + ' seek=' + document.getElementById('seek').value`)
}

// pressRoomStart presses "start a room" on the presenter's page and returns the room's code.
func pressRoomStart(t *testing.T, ctx context.Context) string {
	t.Helper()
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="room-start"]`)))
	waitJSOr(t, ctx, `/^[a-z2-7]{8}$/.test(document.querySelector('[data-testid="room-code"]').textContent)`, 10*time.Second,
		`document.querySelector('[data-testid="room-box"]').textContent`)
	return text(t, ctx, "room-code")
}

// waitFollowers waits until the presenter's page counts n followers.
func waitFollowers(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	want := fmt.Sprintf("%d followers", n)
	if n == 1 {
		want = "1 follower"
	}
	waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="room-followers"]').textContent === %q`, want), 10*time.Second,
		`document.querySelector('[data-testid="room-followers"]').textContent`)
}

func TestBrowserRoom(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium, three tabs")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	ts.roomLingerFor.Store(int64(3 * time.Second))
	base := ts.ts.URL

	pres := tab(t)
	do(t, pres, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
	waitStatus(t, pres, 30*time.Second, "paused")
	code := pressRoomStart(t, pres)

	// The token stays in this tab's sessionStorage: the page URL names only the room, the follow
	// URL only its code.
	token := js[string](t, pres, fmt.Sprintf(`sessionStorage.getItem('zrviz.room.%s.token') || ''`, code))
	if len(token) < 26 {
		t.Fatalf("presenter token %q not kept in sessionStorage", token)
	}
	pageURL := js[string](t, pres, `location.href`)
	followURL := js[string](t, pres, `document.querySelector('[data-testid="room-url"]').href`)
	if !strings.Contains(pageURL, "room="+code) || strings.Contains(pageURL, token) {
		t.Errorf("presenter URL %s: want room=%s and never the token", pageURL, code)
	}
	if followURL != base+"/follow/"+code || strings.Contains(followURL, token) {
		t.Errorf("follow URL %q, want %s/follow/%s", followURL, base, code)
	}
	if got := text(t, pres, "room-followers"); got != "0 followers" {
		t.Errorf("room-followers %q before anyone joined", got)
	}

	// Two followers; the presenter counts them. They mirror the presenter's step.
	seekTo(t, pres, 4000)
	waitStep(t, pres, 4000, 10*time.Second)
	f1, f2 := tab(t), tab(t)
	for _, f := range []context.Context{f1, f2} {
		do(t, f, chromedp.Navigate(followURL))
		waitStep(t, f, 4000, 30*time.Second) // a late joiner starts at the presenter's step
		waitJSOr(t, f, `document.querySelector('[data-testid="room-status"]').textContent === 'following the presenter'`, 10*time.Second,
			`document.querySelector('[data-testid="room-status"]').textContent`)
	}
	waitFollowers(t, pres, 2)
	if got := text(t, f1, "room-code"); got != code {
		t.Errorf("follower page names room %q, want %q", got, code)
	}

	t.Run("seek", func(t *testing.T) {
		for _, step := range []int64{9000, 30000, 17} {
			seekTo(t, pres, step)
			for _, f := range []context.Context{f1, f2} {
				waitStep(t, f, step, 10*time.Second)
			}
		}
		// The presenter opens the next tour stop: the followers open it too, at its step.
		before := text(t, pres, "tour-title")
		key(t, pres, "n", false)
		waitJS(t, pres, fmt.Sprintf(`document.querySelector('[data-testid="tour-title"]').textContent !== %q && document.querySelector('[data-testid="step"]').textContent !== '17'`, before), 5*time.Second)
		title := text(t, pres, "tour-title")
		step := stepShown(t, pres)
		for _, f := range []context.Context{f1, f2} {
			waitStep(t, f, step, 10*time.Second)
			waitJSOr(t, f, fmt.Sprintf(`document.querySelector('[data-testid="tour-title"]').textContent === %q`, title), 10*time.Second,
				`document.querySelector('[data-testid="tour-title"]').textContent`)
		}
		// Play and pause reach the followers too.
		do(t, pres, chromedp.Click(chromedp.CSS(`[data-testid="btn-play"]`)))
		waitStatus(t, f1, 10*time.Second, "playing")
		do(t, pres, chromedp.Click(chromedp.CSS(`[data-testid="btn-play"]`)))
		waitStatus(t, pres, 10*time.Second, "paused")
		waitStatus(t, f1, 10*time.Second, "paused")
		step = stepShown(t, pres)
		waitStep(t, f1, step, 10*time.Second)
		waitStep(t, f2, step, 10*time.Second)
	})

	t.Run("followers do not drive", func(t *testing.T) {
		at := stepShown(t, pres)
		if !js[bool](t, f1, `['btn-play', 'btn-step', 'btn-end', 'seek', 'pace', 'goto-slot', 'tour-next', 'quiz-toggle'].every((id) => document.getElementById(id).disabled) && document.querySelector('[data-testid="goto-slot-go"]').disabled`) {
			t.Error("a follower's controls that drive are enabled")
		}
		do(t, f1, chromedp.Evaluate[chromedp.Void](`document.body.focus()`))
		// A page drives only by what its socket sends: count the follower's sends around its keys.
		// A key's handlers have run when the key event returns (CDP waits for the page), so a send
		// they made is counted by then; two frames more, and a redraw they asked for is shown.
		do(t, f1, chromedp.Evaluate[chromedp.Void](`(() => {
			window.__sent = [];
			const send = WebSocket.prototype.send;
			WebSocket.prototype.send = function (d) { window.__sent.push(String(d)); return send.call(this, d); };
		})()`))
		for _, k := range []string{kb.End, kb.ArrowRight, " ", "n"} {
			key(t, f1, k, false)
		}
		settle(t, f1)
		if sent := js[[]string](t, f1, `window.__sent`); len(sent) != 0 {
			t.Errorf("a follower's keys sent %q", sent)
		}
		if got := stepShown(t, f1); got != at {
			t.Errorf("a follower's keys moved its view to step %d (presenter at %d)", got, at)
		}
		if got := stepShown(t, pres); got != at {
			t.Errorf("a follower's keys moved the presenter to step %d", got)
		}
		if s := text(t, f1, "run-status"); s != "paused" {
			t.Errorf("follower's status %q after its keys", s)
		}
		screenshot(t, f1, "room-follower")
		checkPageContrast(t, f1, "follower page")
		checkPageContrast(t, pres, "presenter page in a room")
	})

	t.Run("detach and rejoin", func(t *testing.T) {
		at := stepShown(t, pres)
		do(t, f1, chromedp.Click(chromedp.CSS(`[data-testid="room-detach"]`)))
		waitJSOr(t, f1, `document.querySelector('[data-testid="room-box"]').dataset.state === 'detached' && !document.getElementById('btn-play').disabled`, 10*time.Second,
			`document.querySelector('[data-testid="room-status"]').textContent`)
		waitStatus(t, f1, 10*time.Second, "paused", "done")
		waitStep(t, f1, at, 10*time.Second) // detached where it was
		waitFollowers(t, pres, 1)           // the server has taken its socket out of the room
		// On its own: its keys move it, not the presenter or the other follower.
		do(t, f1, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
		key(t, f1, kb.ArrowRight, false)
		key(t, f1, kb.ArrowRight, false)
		waitStep(t, f1, at+2, 10*time.Second)
		// The server stepped f1 before it sent f1 the step shown, so had the steps been the room's,
		// the presenter's next step, asked for after, would start from at+2: one step of the
		// presenter's must show at+1 on both room pages.
		do(t, pres, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
		key(t, pres, kb.ArrowRight, false)
		waitStep(t, pres, at+1, 10*time.Second)
		waitStep(t, f2, at+1, 10*time.Second)
		// The presenter goes on; the detached follower stays, the other follows. f1 is out of the
		// room (one follower counted), and its own next step, asked for once f2 shows the seek,
		// starts from where it was.
		seekTo(t, pres, 12345)
		waitStep(t, f2, 12345, 10*time.Second)
		key(t, f1, kb.ArrowRight, false)
		waitStep(t, f1, at+3, 10*time.Second) // not 12,346: it did not follow the presenter
		// One key rejoins: the presenter's step again, the controls disabled.
		do(t, f1, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
		key(t, f1, "f", false)
		waitStep(t, f1, 12345, 10*time.Second)
		waitJSOr(t, f1, `document.querySelector('[data-testid="room-box"]').dataset.state === 'following' && document.getElementById('btn-play').disabled`, 10*time.Second,
			`document.querySelector('[data-testid="room-status"]').textContent`)
		waitFollowers(t, pres, 2)
		// The button does the same.
		do(t, f2, chromedp.Click(chromedp.CSS(`[data-testid="room-detach"]`)))
		waitJS(t, f2, `document.querySelector('[data-testid="room-box"]').dataset.state === 'detached'`, 10*time.Second)
		if !js[bool](t, f2, `document.activeElement === document.querySelector('[data-testid="room-rejoin"]')`) {
			t.Error("after detaching, the focus is not on the rejoin button")
		}
		do(t, f2, chromedp.Click(chromedp.CSS(`[data-testid="room-rejoin"]`)))
		waitJS(t, f2, `document.querySelector('[data-testid="room-box"]').dataset.state === 'following'`, 10*time.Second)
		seekTo(t, pres, 2000)
		waitStep(t, f1, 2000, 10*time.Second)
		waitStep(t, f2, 2000, 10*time.Second)
	})

	t.Run("presenter chains another range: the room follows", func(t *testing.T) {
		key(t, pres, kb.End, false)
		waitStatus(t, pres, 30*time.Second, "done")
		waitJS(t, pres, `!document.querySelector('[data-testid="chain-form"]').hidden`, 10*time.Second)
		if js[bool](t, f1, `!!document.querySelector('[data-testid="chain-form"]').offsetParent`) {
			t.Error("a follower is offered the presenter's next operation")
		}
		do(t, pres, chromedp.SetValue(chromedp.CSS(`[data-testid="chain-offset"]`), "0"),
			chromedp.SetValue(chromedp.CSS(`[data-testid="chain-length"]`), "1048576"),
			chromedp.Click(chromedp.CSS(`[data-testid="chain-go"]`)))
		waitNav(t, pres, `new URLSearchParams(location.search).getAll('before').length === 1 && new URLSearchParams(location.search).get('room') === '`+code+`'`, 10*time.Second)
		waitStatus(t, pres, 30*time.Second, "paused")
		waitJSOr(t, pres, fmt.Sprintf(`document.querySelector('[data-testid="room-code"]').textContent === %q`, code), 10*time.Second,
			`document.querySelector('[data-testid="room-box"]').textContent`)
		waitFollowers(t, pres, 2)
		total := text(t, pres, "step-total")
		for _, f := range []context.Context{f1, f2} {
			waitJSOr(t, f, fmt.Sprintf(`document.querySelector('[data-testid="step-total"]').textContent === %q`, total), 10*time.Second,
				`document.querySelector('[data-testid="step-total"]').textContent`)
		}
		seekTo(t, pres, 100)
		waitStep(t, f1, 100, 10*time.Second)
		waitStep(t, f2, 100, 10*time.Second)
	})

	t.Run("presenter reloads", func(t *testing.T) {
		do(t, pres, chromedp.Reload())
		waitStatus(t, pres, 30*time.Second, "paused")
		waitJSOr(t, pres, fmt.Sprintf(`document.querySelector('[data-testid="room-code"]').textContent === %q`, code), 10*time.Second,
			`document.querySelector('[data-testid="room-box"]').textContent`)
		waitFollowers(t, pres, 2)
		seekTo(t, pres, 300)
		waitStep(t, f1, 300, 10*time.Second)
		waitStep(t, f2, 300, 10*time.Second)
		if !regexp.MustCompile(`[?&]room=` + code + `(&|$)`).MatchString(js[string](t, pres, `location.search`)) {
			t.Errorf("reloaded presenter URL %s lost the room", js[string](t, pres, `location.href`))
		}
	})

	t.Run("presenter leaves, the room ends", func(t *testing.T) {
		do(t, pres, chromedp.Navigate(base+"/"))
		for _, f := range []context.Context{f1, f2} {
			waitJSOr(t, f, `document.querySelector('[data-testid="room-status"]').textContent.startsWith('the presenter has left')`, 10*time.Second,
				`document.querySelector('[data-testid="room-status"]').textContent`)
		}
		for _, f := range []context.Context{f1, f2} {
			waitJSOr(t, f, `document.querySelector('[data-testid="room-status"]').textContent === 'the room has ended'`, 20*time.Second,
				`document.querySelector('[data-testid="room-status"]').textContent`)
		}
		// A follower may still explore the run on its own.
		do(t, f1, chromedp.Click(chromedp.CSS(`[data-testid="room-detach"]`)))
		waitStatus(t, f1, 10*time.Second, "paused")
		do(t, f1, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
		key(t, f1, kb.End, false)
		waitStatus(t, f1, 30*time.Second, "done")
	})
}

// TestBrowserRoomQuiz: a quiz to a score in a room. Two followers answer the presenter's question
// on their own screens (one right, one wrong), the presenter sees the distribution (a bar per
// answer, how many of how many answered) and reveals, the followers get their verdicts and scores.
func TestBrowserRoomQuiz(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium, three tabs")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	bench := url.Values{"image": {DemoID}, "path": {"/seed/bench64.bin"}, "mode": {"both"}}
	o := outline(t, ts, bench)
	qk := -1
	for k, s := range o.Stops {
		if s.Question != nil {
			qk = k
			break
		}
	}
	if qk < 0 {
		t.Fatal("bench64's tour has no question")
	}
	q := o.Stops[qk].Question
	// A wrong answer of the question's kind.
	wrong := "12345"
	switch {
	case q.Kind == "yesno" && q.Answer == "yes":
		wrong = "no"
	case q.Kind == "yesno":
		wrong = "yes"
	case q.Kind == "choice":
		for _, c := range q.Choices {
			if !strings.EqualFold(c, q.Answer) {
				wrong = c
				break
			}
		}
	case q.Answer == wrong:
		wrong = "12346" // within the run's 16,384 slots: a larger number is refused, not graded
	}
	t.Logf("question %d (%s): %q, answer %q, wrong %q", qk, q.Kind, q.Text, q.Answer, wrong)

	pres := tab(t)
	do(t, pres, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "quiz": {"1"}})))
	waitStatus(t, pres, 30*time.Second, "paused")
	code := pressRoomStart(t, pres)
	// f3 follows the quiz and never answers: the reveal tells it "not answered", not "wrong".
	f1, f2, f3 := tab(t), tab(t), tab(t)
	for _, f := range []context.Context{f1, f2, f3} {
		do(t, f, chromedp.Navigate(base+"/follow/"+code))
		waitStatus(t, f, 30*time.Second, "paused")
		// The presenter's quiz mode reaches the followers.
		waitJSOr(t, f, `document.querySelector('[data-testid="quiz-toggle"]').checked`, 10*time.Second, `document.body.className`)
	}
	waitFollowers(t, pres, 3)

	// The presenter plays: the quiz stops where the question is asked, on every screen.
	do(t, pres, chromedp.Click(chromedp.CSS(`[data-testid="btn-play"]`)))
	waitJSOr(t, pres, fmt.Sprintf(`document.querySelector('[data-testid="quiz-question"]').textContent === %q && document.querySelector('[data-testid="run-status"]').textContent === 'paused'`, q.Text), 60*time.Second,
		`document.querySelector('[data-testid="run-status"]').textContent + ' ' + document.querySelector('[data-testid="step"]').textContent`)
	at := stepShown(t, pres)
	if at < q.Ask || at >= q.Reveal {
		t.Fatalf("the presenter's quiz stopped at %d, outside [%d, %d)", at, q.Ask, q.Reveal)
	}
	// The presenter sees the distribution instead of an answer box.
	waitJSOr(t, pres, `!document.querySelector('[data-testid="room-answers"]').hidden && document.querySelector('[data-testid="room-answered"]').textContent === '0 of 3 followers answered'`, 10*time.Second,
		`document.querySelector('[data-testid="room-answers"]').textContent`)
	if js[bool](t, pres, `!!document.querySelector('[data-testid="quiz-answer"]').offsetParent`) {
		t.Error("the presenter is offered an answer box in a room")
	}
	for _, c := range []struct {
		ctx    context.Context
		answer string
	}{{f1, q.Answer}, {f2, wrong}} {
		waitStep(t, c.ctx, at, 10*time.Second)
		waitJSOr(t, c.ctx, fmt.Sprintf(`document.querySelector('[data-testid="quiz-question"]').textContent === %q && !document.querySelector('[data-testid="quiz-answer"]').disabled`, q.Text), 10*time.Second,
			`document.querySelector('[data-testid="tour"]').textContent`)
		if !js[bool](t, c.ctx, `document.body.classList.contains('veiled')`) {
			t.Error("a follower's counters are visible while the question is open")
		}
		if q.Kind == "number" {
			do(t, c.ctx, chromedp.Focus(chromedp.CSS(`[data-testid="quiz-answer"]`)), chromedp.KeyEvent(c.answer), chromedp.KeyEvent(kb.Enter))
		} else {
			do(t, c.ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="quiz-choice"][data-value=%q]`, c.answer))))
		}
		waitJSOr(t, c.ctx, `document.querySelector('[data-testid="quiz-result"]').textContent === 'answer sent: the presenter reveals it'`, 10*time.Second,
			`document.querySelector('[data-testid="quiz-result"]').textContent`)
	}
	// A bar per answer with its count; 2 of 3 answered.
	waitJSOr(t, pres, `document.querySelector('[data-testid="room-answered"]').textContent === '2 of 3 followers answered'`, 10*time.Second,
		`document.querySelector('[data-testid="room-answers"]').textContent`)
	bars := js[map[string]string](t, pres, `Object.fromEntries([...document.querySelectorAll('[data-testid="answer-bar"]')].map((b) => [b.dataset.answer, b.dataset.count]))`)
	right, other := strings.ToLower(q.Answer), strings.ToLower(wrong)
	if len(bars) != 2 || bars[right] != "1" || bars[other] != "1" {
		t.Errorf("answer bars %v, want %s and %s once each", bars, q.Answer, wrong)
	}
	screenshot(t, pres, "room-presenter")
	checkPageContrast(t, pres, "presenter with the answers")

	// Reveal: the followers get their verdicts and scores, every screen the reveal step.
	do(t, pres, chromedp.Click(chromedp.CSS(`[data-testid="room-reveal"]`)))
	waitJSOr(t, f1, `document.querySelector('[data-testid="quiz-result"]').textContent === 'correct' && document.querySelector('[data-testid="quiz-score"]').textContent === '1/1'`, 10*time.Second,
		`document.querySelector('[data-testid="quiz-result"]').textContent + ' ' + document.querySelector('[data-testid="quiz-score"]').textContent`)
	waitJSOr(t, f2, fmt.Sprintf(`document.querySelector('[data-testid="quiz-result"]').textContent === %q && document.querySelector('[data-testid="quiz-score"]').textContent === '0/1'`, "wrong: "+q.Answer), 10*time.Second,
		`document.querySelector('[data-testid="quiz-result"]').textContent + ' ' + document.querySelector('[data-testid="quiz-score"]').textContent`)
	waitJSOr(t, f3, fmt.Sprintf(`document.querySelector('[data-testid="quiz-result"]').textContent === %q && document.querySelector('[data-testid="quiz-score"]').textContent === '0/0'`, "not answered: "+q.Answer), 10*time.Second,
		`document.querySelector('[data-testid="quiz-result"]').textContent + ' ' + document.querySelector('[data-testid="quiz-score"]').textContent`)
	if js[bool](t, f3, `document.querySelector('[data-testid="quiz-result"]').classList.contains('bad') || document.body.innerText.includes('wrong: ')`) {
		t.Error("the silent follower is told it was wrong")
	}
	for _, c := range []context.Context{pres, f1, f2, f3} {
		waitStep(t, c, q.Reveal, 10*time.Second)
	}
	waitJSOr(t, pres, fmt.Sprintf(`document.querySelector('[data-testid="room-answered"]').textContent.endsWith('the answer is %s: 1 right') && document.querySelector('[data-testid="answer-bar"].right').dataset.answer === %q`, q.Answer, right), 10*time.Second,
		`document.querySelector('[data-testid="room-answers"]').textContent`)
	checkPageContrast(t, f1, "follower after the reveal")
}
