package web

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/zrviz/zrviz/player"
)

// TestBrowserQuizWithholds: a quiz is a property of the page, not a list of hidden elements (issue
// 30). With &quiz=1 and the first question unanswered, random navigation — End, a permalink with
// step= at the end (and run=end), the slider dragged to a random step — always comes back to the
// question, and at no moment while the page shows a step past its ask step, nor once it is back,
// do the counters, the summary, the outcome or the status show anything while the score is 0/0 (a
// MutationObserver in the page records every change, so a frame drawn before the seek back counts
// too). Once settled, the page's text holds neither the answer nor what it follows from: no
// physical runs for a question about runs, no segment numbers for one about segments.
func TestBrowserQuizWithholds(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	bench := url.Values{"image": {DemoID}, "path": {"/seed/bench64.bin"}, "mode": {"both"}}
	o := outline(t, ts, bench)
	var q *player.Question
	for _, s := range o.Stops {
		if s.Question != nil {
			q = s.Question
			break
		}
	}
	if q == nil {
		t.Fatal("bench64's tour has no question")
	}
	t.Logf("question 1 (%s, asked at %d of %d): %q, answer %q, withholds %v", q.Kind, q.Ask, o.Total, q.Text, q.Answer, q.Withholds)
	ctx := tab(t)
	// watch records, from now on in this document, every moment the page shows a step past the
	// question with a counter, the summary, the outcome or the run's end on it, while the score
	// is 0/0.
	watch := func() {
		do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			window.__leaks = [];
			const $ = (id) => document.getElementById(id);
			const check = () => {
				const step = Number(($('step-now').textContent || '0').replace(/,/g, ''));
				if ($('quiz-score').textContent !== '0/0' || step <= %d) return;
				const shown = ['stat-calls-per-block', 'stat-calls-batched', 'c-pb-calls', 'c-bt-calls', 'c-pb-locks', 'c-bt-locks', 'c-bt-prefree', 'c-slots-now']
					.filter((id) => $(id).textContent !== '–').map((id) => id + '=' + $(id).textContent);
				if ($('outcome').textContent && !$('outcome').hidden) shown.push('outcome=' + $('outcome').textContent);
				if ($('counters-panel').dataset.final === 'true') shown.push('the final summary');
				if (/done|^E[A-Z]+$/.test($('run-status').textContent)) shown.push('status=' + $('run-status').textContent);
				if (shown.length) window.__leaks.push('step ' + step + ': ' + shown.join(', '));
			};
			new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
			check();
		})()`, q.Ask)))
	}
	// settled waits until the page holds the question at its ask step again.
	settled := func(what string) {
		waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="step"]').textContent.replace(/,/g, '') === '%d' && document.querySelector('[data-testid="quiz-question"]').textContent === %q && !document.getElementById('quiz').hidden && document.querySelector('[data-testid="run-status"]').textContent === 'paused'`, q.Ask, q.Text), 30*time.Second,
			`'after `+what+`: step ' + document.querySelector('[data-testid="step"]').textContent + ', ' + document.querySelector('[data-testid="run-status"]').textContent + ', question ' + document.querySelector('[data-testid="quiz-question"]').textContent`)
	}
	// byID reads an element's text by its id (the counters' test ids name the summary's cells).
	byID := func(id string) string {
		return js[string](t, ctx, fmt.Sprintf(`(document.getElementById(%q) || {}).textContent || ''`, id))
	}
	answerRE := regexp.MustCompile(`(^|[^\w,])` + regexp.QuoteMeta(q.Answer) + `($|[^\w,])`)
	check := func(what string) {
		t.Helper()
		if leaks := js[[]string](t, ctx, `window.__leaks`); len(leaks) > 0 {
			t.Errorf("after %s, the page showed past the question while the score was 0/0: %s", what, strings.Join(leaks[:min(len(leaks), 5)], " | "))
		}
		if s := byID("quiz-score"); s != "0/0" {
			t.Fatalf("after %s the score is %s", what, s)
		}
		for _, id := range []string{"stat-calls-per-block", "stat-calls-batched", "c-pb-calls", "c-bt-calls", "c-pb-sit", "c-bt-sit", "c-slots-now"} {
			if v := byID(id); v != "–" {
				t.Errorf("after %s, %s shows %q with question 1 open", what, id, v)
			}
		}
		// The page's text, but the question itself and its choices: the answer as a word, and
		// what it follows from.
		page := js[string](t, ctx, `(() => { const c = document.body.cloneNode(true); for (const id of ['quiz-question', 'quiz-choices']) c.querySelector('#' + id)?.remove(); return c.textContent; })()`)
		if q.Kind != "yesno" {
			if m := answerRE.FindStringIndex(page); m != nil {
				t.Errorf("after %s the answer %q is on the page: …%s…", what, q.Answer, page[max(0, m[0]-60):min(len(page), m[1]+60)])
			}
		}
		if slices.Contains(q.Withholds, player.WithholdRuns) {
			if strings.Contains(page, "physical run") {
				t.Errorf("after %s the page names the physical runs", what)
			}
			if by := js[string](t, ctx, `document.getElementById('legend-colours').dataset.colourBy`); by == "run" {
				t.Errorf("after %s the slots are coloured by run", what)
			}
		}
		if slices.Contains(q.Withholds, player.WithholdSegments) && regexp.MustCompile(`segment \d|outside the main area`).MatchString(byID("slots-desc")) {
			t.Errorf("after %s the cursor line names a segment: %q", what, byID("slots-desc"))
		}
	}
	load := func(extra url.Values) {
		v := url.Values{"mode": {"both"}, "quiz": {"1"}, "colour": {"run"}}
		for k, x := range extra {
			v[k] = x
		}
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", v)))
		waitJS(t, ctx, `document.querySelector('[data-testid="run-status"]').textContent !== 'connecting'`, 30*time.Second)
		watch()
	}

	// Question 1 is where the quiz opens: a permalink at the end comes back to it.
	load(url.Values{"step": {strconv.FormatInt(o.Total, 10)}})
	settled("a permalink at the end")
	check("a permalink at the end")
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 30))
	t.Logf("navigation seed %d", seed)
	for i := range 8 {
		var what string
		switch r.IntN(4) {
		case 0:
			what = "End"
			do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
			key(t, ctx, kb.End, false)
		case 1:
			step := q.Ask + 1 + r.Int64N(o.Total-q.Ask)
			what = fmt.Sprintf("a permalink at step %d", step)
			load(url.Values{"step": {strconv.FormatInt(step, 10)}})
		case 2:
			what = "a permalink with run=end"
			load(url.Values{"run": {"end"}})
		default:
			step := q.Ask + 1 + r.Int64N(o.Total-q.Ask)
			what = fmt.Sprintf("the slider at %d", step)
			do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.getElementById('seek'); s.value = '%d'; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); })()`, step)))
		}
		settled(what)
		check(fmt.Sprintf("action %d, %s", i+1, what))
	}
	// The property is not a blank page: answered, the question lets the view go on to its
	// reveal, and the counters show again.
	if q.Kind == "number" {
		do(t, ctx, chromedp.SetValue(chromedp.CSS(`[data-testid="quiz-answer"]`), q.Answer), chromedp.Click(chromedp.CSS(`[data-testid="quiz-submit"]`)))
	} else {
		do(t, ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="quiz-choice"][data-value=%q]`, q.Answer))))
	}
	waitJS(t, ctx, `document.querySelector('[data-testid="quiz-score"]').textContent === '1/1'`, 10*time.Second)
	waitStep(t, ctx, q.Reveal, 10*time.Second)
	waitJSOr(t, ctx, `!document.body.classList.contains('veiled') && /^[0-9,]+$/.test(document.querySelector('[data-testid="stat-calls-per-block"]').textContent)`, 10*time.Second,
		`document.body.className + ' ' + document.querySelector('[data-testid="stat-calls-per-block"]').textContent`)
}
