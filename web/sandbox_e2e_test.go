package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/zrviz/zrviz/exercise"
)

// lowContrast lists the text of the page that has less than 4.5:1 contrast against its background
// (WCAG AA for normal text): every element with its own visible text, its colour against the first
// opaque background up its ancestors.
const lowContrast = `(() => {
  const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const bg = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const bad = [];
  for (const el of document.querySelectorAll('main *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!own || !el.checkVisibility()) continue;
    const st = getComputedStyle(el);
    const fg = rgb(st.color).slice(0, 3);
    const [a, b] = [lum(fg), lum(bg(el))].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) bad.push(el.tagName + ' "' + el.textContent.trim().slice(0, 30) + '" ' + ratio.toFixed(2));
  }
  return bad;
})()`

// TestBrowserSandboxExercise types a slot list into the sandbox, runs it with the keyboard, uses a
// lesson button, meets a syntax error and a list too long for a permalink, then reveals an exercise.
func TestBrowserSandboxExercise(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL

	t.Run("sandbox", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(base+"/sandbox"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="sandbox-input"]`)))
		// Type a list and run it with Ctrl+Enter from the text box.
		do(t, ctx,
			chromedp.SendKeys(chromedp.CSS(`[data-testid="sandbox-input"]`), "7200-7209 | 7210-7219 NEW 7220"),
			chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		)
		waitJS(t, ctx, `document.querySelector('[data-testid="sb-calls-batched"]')?.textContent === '2'`, 10*time.Second)
		if got := text(t, ctx, "sb-calls-per-block"); got != "21" {
			t.Errorf("per-block calls %q, want 21", got)
		}
		if got := text(t, ctx, "sandbox-calls-batched"); !strings.Contains(got, "f2fs_invalidate_blocks(7200, 10)") ||
			!strings.Contains(got, "f2fs_invalidate_blocks(7210, 11)") {
			t.Errorf("batched calls %q", got)
		}
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="sandbox-player-link"]').getAttribute('href')`))
		if err != nil || !strings.HasPrefix(href, "/sandbox/run?") || !strings.Contains(href, "mode=both") {
			t.Errorf("player link %q (%v)", href, err)
		}

		// A lesson button fills the box and runs it.
		do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="sandbox-gen"][data-name="every-other"]`)))
		waitJS(t, ctx, `document.querySelector('[data-testid="sb-calls-batched"]')?.textContent === '32'`, 10*time.Second)

		// A syntax error names the token and selects it.
		do(t, ctx,
			chromedp.SetValue(chromedp.CSS(`#slots`), "7200 NEW*x 7201"),
			chromedp.Click(chromedp.CSS(`[data-testid="sandbox-run"]`)),
		)
		waitJS(t, ctx, `!document.querySelector('[data-testid="sandbox-error"]').hidden`, 10*time.Second)
		if got := text(t, ctx, "sandbox-error"); !strings.Contains(got, `token 2 "NEW*x" at byte 5`) {
			t.Errorf("error %q", got)
		}
		sel, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.getElementById('slots').selectionStart, document.getElementById('slots').selectionEnd]`))
		if err != nil || len(sel) != 2 || sel[0] != 5 || sel[1] != 10 {
			t.Errorf("selection %v (%v), want the token [5, 10)", sel, err)
		}
		// The previous list's results and permalink do not stay under the error (issue 20).
		if js[bool](t, ctx, `!!document.querySelector('[data-testid="sandbox-results"]').offsetParent`) {
			t.Error("the previous list's results are still shown under a syntax error")
		}

		// A list longer than a permalink runs, and the page says it cannot be a link.
		do(t, ctx,
			chromedp.Evaluate[chromedp.Void](`document.getElementById('slots').value = Array.from({length: 2000}, (_, i) => 10000 + 2*i).join(' ')`),
			chromedp.Click(chromedp.CSS(`[data-testid="sandbox-run"]`)),
		)
		waitJS(t, ctx, `!document.querySelector('[data-testid="sandbox-permalink-message"]').hidden`, 10*time.Second)
		if got := text(t, ctx, "sandbox-permalink-message"); !strings.Contains(got, "cannot be opened in the player") {
			t.Errorf("too-long message %q", got)
		}
		hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="sandbox-player-link"]').hidden`))
		if err != nil || !hidden {
			t.Errorf("the player link is shown for a list past the permalink limit (%v)", err)
		}

		// Back to a lesson for the screenshot.
		do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="sandbox-gen"][data-name="holes"]`)))
		waitJS(t, ctx, `document.querySelector('[data-testid="sb-calls-batched"]')?.textContent === '1'`, 10*time.Second)
		checkContrast(t, ctx)
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		screenshot(t, ctx, "sandbox")
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.getElementById('sb-out').offsetTop - 8)`))
		screenshot(t, ctx, "sandbox-result")
	})

	t.Run("exercise", func(t *testing.T) {
		ctx := tab(t)
		e, err := exercise.New(7, exercise.Slots, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		do(t, ctx, chromedp.Navigate(base+"/exercise?seed=7"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="exercise-questions"]`)))
		visible := func() []bool {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[[]bool](
				`[...document.querySelectorAll('[data-testid="exercise-answer"]')].map(a => a.checkVisibility())`))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if v := visible(); len(v) != len(e.Questions) || v[0] || v[1] {
			t.Fatalf("answers visible before a reveal: %v", v)
		}
		// Answer in the boxes, with the keyboard: the first right (with a leading zero and the
		// spaces the quiz's reading drops), the second wrong, the rest left empty; the server
		// checks them and scores what was answered.
		do(t, ctx, chromedp.SendKeys(`#ex-a-0`, " 0"+e.Questions[0].Answer+" "), chromedp.SendKeys(`#ex-a-1`, wrongExerciseAnswer(e.Questions[1])),
			chromedp.Click(testid("exercise-check")))
		waitNav(t, ctx, `document.readyState === 'complete' && (document.querySelector('[data-testid="exercise-score"]') || {}).textContent === '1 of 2 right'`, 20*time.Second)
		verdicts := js[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="exercise-verdict"]')].map((v) => v.dataset.right)`)
		if len(verdicts) != len(e.Questions) || verdicts[0] != "true" || verdicts[1] != "false" || verdicts[2] != "" {
			t.Errorf("verdicts %q, want right, wrong, none", verdicts)
		}
		if v := js[string](t, ctx, `document.getElementById('ex-a-1').value`); v != wrongExerciseAnswer(e.Questions[1]) {
			t.Errorf("the second box holds %q after the check, want the answer given", v)
		}
		if v := visible(); v[0] || v[1] {
			t.Fatalf("answers visible after a check: %v (a wrong answer leaves the reveal to the student)", v)
		}
		// Reveal the first answer with the keyboard: focus its summary, press Enter.
		do(t, ctx, chromedp.Focus(chromedp.CSS(`[data-testid="exercise-reveal"] summary`)), chromedp.KeyEvent(kb.Enter))
		waitJS(t, ctx, `document.querySelector('[data-testid="exercise-reveal"]').open`, 5*time.Second)
		if v := visible(); !v[0] || v[1] {
			t.Errorf("after one reveal: %v", v)
		}
		do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="exercise-reveal-all"]`)))
		waitJS(t, ctx, `[...document.querySelectorAll('[data-testid="exercise-reveal"]')].every(d => d.open)`, 5*time.Second)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll('[data-testid="exercise-answer"]')].map(a => a.textContent)`))
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range e.Questions {
			if i >= len(got) || got[i] != q.Answer {
				t.Errorf("answer %d on the page %q, want %q", i+1, got, q.Answer)
				break
			}
		}
		checkContrast(t, ctx)
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		screenshot(t, ctx, "exercise")
		// The sandbox link carries the list into the sandbox, which runs it.
		do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="exercise-sandbox-link"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="sandbox-results"]`)))
		if got := text(t, ctx, "sb-calls-batched"); got != e.Questions[1].Answer {
			t.Errorf("the sandbox says %s batched calls, the exercise %s", got, e.Questions[1].Answer)
		}
	})
}

// checkContrast fails the test for every text on the page below 4.5:1.
func checkContrast(t *testing.T, ctx context.Context) {
	t.Helper()
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](lowContrast))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("contrast below 4.5:1: %s", b)
	}
}
