package web

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// nextPanelIDs are the elements whose text is the what-happens-next panel's state. The verdict is
// left out: like the player's, it is this page's memory of an answer, which a fresh load has not.
var nextPanelIDs = []string{"next-label", "next-narr", "next-cands", "next-other", "next-moves", "next-counts",
	"next-map-aside", "next-map-desc", "next-pos", "next-tour-pos", "next-tour-title", "next-tour-text", "next-terms",
	"next-status", "next-question", "next-choices"}

// nextReady waits until the panel shows the frame its URL names, loaded.
func nextReady(t *testing.T, ctx context.Context) {
	t.Helper()
	waitJS(t, ctx, `(() => { const p = document.getElementById('next-panel'); const q = new URLSearchParams(location.search);
		return p && !p.hidden && p.dataset.loading === 'false' && p.dataset.at === q.get('next'); })()`, 30*time.Second)
}

// nextShown reads everything the panel shows: its texts, every map cell's class and title, the
// controls' values.
func nextShown(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	js := fmt.Sprintf(`(() => { const out = Object.fromEntries(%s.map((id) => { const e = document.getElementById(id);
		return [id, e && !e.closest('[hidden]') ? e.textContent.replace(/\s+/g, ' ').trim() : '']; }));
		out.cells = [...document.querySelectorAll('#next-cells span')].map((c) => c.className + '|' + c.title).join(';');
		out.controls = ['next-seek', 'next-policy', 'next-now'].map((id) => document.getElementById(id).value).join(' ') + ' max ' + document.getElementById('next-seek').max;
		out.disabled = [...document.querySelectorAll('#next-panel button')].map((b) => b.disabled ? 1 : 0).join('');
		return out; })()`, "["+strings.Join(quoteAll(nextPanelIDs), ",")+"]")
	return js2[map[string]string](t, ctx, js)
}

func js2[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// nextCompareFresh loads the page's own address in a new tab and compares the panel.
func nextCompareFresh(t *testing.T, tab func(testing.TB) context.Context, ctx context.Context, w, h int64, what string) {
	t.Helper()
	nextReady(t, ctx)
	href := js2[string](t, ctx, `location.href`)
	got := nextShown(t, ctx)
	fresh := tab(t)
	do(t, fresh, chromedp.EmulateViewport(w, h), chromedp.Navigate(href))
	nextReady(t, fresh)
	want := nextShown(t, fresh)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s (%s): %s shows %.300q; a fresh load shows %.300q", what, href, k, got[k], v)
		}
	}
}

func nextAt(t *testing.T, ctx context.Context) int {
	t.Helper()
	return js2[int](t, ctx, `Number(new URLSearchParams(location.search).get('next'))`)
}

// TestBrowserNextPanel drives the what-happens-next panel at a phone's and a laptop's size: it
// opens from the player, the checkpoint frees the run's prefree segments, the cleaner's victim is
// outlined on the map with the candidates ranked, and a random path of the panel's controls
// (step, back, home, end, seek, keys, the policy, the clock) shows at every stop what a fresh load
// of its address shows; the quiz asks before it shows; axe-core finds nothing serious.
func TestBrowserNextPanel(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium at two sizes (25 s); the full tier runs it")
	}
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	tab := browser(t)
	axe := axeSource(t)
	for _, vp := range []struct{ w, h int64 }{{390, 844}, {1366, 768}} {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			ctx := tab(t)
			size := fmt.Sprintf("%dx%d", vp.w, vp.h)
			do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h),
				chromedp.Navigate(runURL(ts.ts.URL, "/seed/bench64.bin", url.Values{"offset": {"0"}, "length": {"67108864"}})))
			waitJS(t, ctx, `!!document.getElementById('next-open') && document.getElementById('next-panel').hidden`, 20*time.Second)
			do(t, ctx, chromedp.Click(chromedp.CSS(`#next-open`)))
			nextReady(t, ctx)
			if nextAt(t, ctx) != 0 || !js2[bool](t, ctx, `document.activeElement === document.getElementById('next-panel')`) {
				t.Fatalf("opened at frame %d, focus on %s", nextAt(t, ctx), js2[string](t, ctx, `document.activeElement.id`))
			}
			prefree := js2[int](t, ctx, `document.querySelectorAll('#next-cells .gc-prefree').length`)
			if prefree == 0 || !strings.Contains(text(t, ctx, "next-narr"), "prefree") {
				t.Fatalf("after the run: %d prefree cells, narration %q", prefree, text(t, ctx, "next-narr"))
			}
			shot(t, ctx, "next-run-"+size)
			// The checkpoint: every prefree cell turns free.
			do(t, ctx, chromedp.Click(chromedp.CSS(`#next-step`)))
			nextReady(t, ctx)
			if n := js2[int](t, ctx, `document.querySelectorAll('#next-cells .gc-prefree').length`); n != 0 || text(t, ctx, "next-label") != "checkpoint" {
				t.Errorf("checkpoint frame %q: %d prefree cells left of %d", text(t, ctx, "next-label"), n, prefree)
			}
			// On to the first victim: outlined on the map, its row marked in the ranking.
			for range 2 {
				do(t, ctx, chromedp.Click(chromedp.CSS(`#next-step`)))
				nextReady(t, ctx)
			}
			if !strings.HasSuffix(text(t, ctx, "next-label"), "victim") {
				t.Fatalf("frame 3 is %q, want a victim", text(t, ctx, "next-label"))
			}
			victim := js2[string](t, ctx, `(document.querySelector('#next-cells .gc-victim') || {dataset: {}}).dataset.segno || ''`)
			chosen := js2[string](t, ctx, `(document.querySelector('#next-cands tr.chosen') || {}).textContent || ''`)
			if victim == "" || !strings.Contains(chosen, "segment "+victim+" ◂ victim") {
				t.Fatalf("victim cell %q, chosen row %q", victim, chosen)
			}
			shot(t, ctx, "next-victim-"+size)
			axeCheck(t, ctx, axe, "the next panel at a victim, "+size)
			nextCompareFresh(t, tab, ctx, vp.w, vp.h, "at the victim")
			// The moves: the victim's blocks went to a segment outlined as their destination.
			do(t, ctx, chromedp.Click(chromedp.CSS(`#next-step`)))
			nextReady(t, ctx)
			if js2[int](t, ctx, `document.querySelectorAll('#next-cells .gc-dest').length`) == 0 ||
				!strings.Contains(text(t, ctx, "next-moves"), "segment "+victim+" → segment") {
				t.Errorf("move frame: moves %q, no destination outlined", text(t, ctx, "next-moves"))
			}
			shot(t, ctx, "next-move-"+size)
			// Back to the victim, then to the start: each a fresh load's view.
			do(t, ctx, chromedp.Click(chromedp.CSS(`#next-back`)))
			nextReady(t, ctx)
			nextCompareFresh(t, tab, ctx, vp.w, vp.h, "back at the victim")
			do(t, ctx, chromedp.Click(chromedp.CSS(`#next-home`)))
			nextReady(t, ctx)
			nextCompareFresh(t, tab, ctx, vp.w, vp.h, "home")
			// A random path of controls; every few actions, compare with a fresh load.
			r := rand.New(rand.NewPCG(22, uint64(vp.w)))
			for i := range 10 {
				switch r.IntN(7) {
				case 0:
					do(t, ctx, chromedp.Click(chromedp.CSS(`#next-step`)))
				case 1:
					do(t, ctx, chromedp.Click(chromedp.CSS(`#next-back`)))
				case 2:
					do(t, ctx, chromedp.Click(chromedp.CSS(`#next-end`)))
				case 3:
					at := r.IntN(1 + js2[int](t, ctx, `Number(document.getElementById('next-seek').max)`))
					do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.getElementById('next-seek'); s.value = '%d'; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); })()`, at)))
				case 4:
					// The keys, with the focus in the panel: the run underneath does not move.
					step := text(t, ctx, "step")
					k := []string{kb.ArrowRight, kb.ArrowLeft, kb.End, kb.Home, " "}[r.IntN(5)]
					if k == kb.ArrowLeft && nextAt(t, ctx) == 0 {
						k = kb.Home // ← on the first frame goes back to the run
					}
					do(t, ctx, chromedp.Focus(chromedp.CSS(`#next-panel`)), chromedp.KeyEvent(k))
					if text(t, ctx, "step") != step || text(t, ctx, "run-status") == "playing" {
						t.Errorf("key %q in the panel moved the run from step %s to %s (%s)", k, step, text(t, ctx, "step"), text(t, ctx, "run-status"))
					}
				case 5:
					p := []string{"greedy", "cost-benefit"}[r.IntN(2)]
					do(t, ctx, chromedp.SetValue(chromedp.CSS(`#next-policy`), p),
						chromedp.Evaluate[chromedp.Void](`document.getElementById('next-policy').dispatchEvent(new Event('change'))`))
				case 6:
					now := []string{"0", "60", "86400"}[r.IntN(3)]
					do(t, ctx, chromedp.SetValue(chromedp.CSS(`#next-now`), now), chromedp.Click(chromedp.CSS(`[data-testid=next-now-set]`)))
				}
				nextReady(t, ctx)
				if i%3 == 2 {
					nextCompareFresh(t, tab, ctx, vp.w, vp.h, fmt.Sprintf("after %d random actions", i+1))
				}
			}
			nextCompareFresh(t, tab, ctx, vp.w, vp.h, "at the end of the random path")
			// The quiz: at the first search the question is asked and nothing shows the answer —
			// no victim on the map, no ranking, no cost; an answer goes to the victim with a verdict.
			do(t, ctx, chromedp.SetValue(chromedp.CSS(`#next-policy`), "greedy"),
				chromedp.Evaluate[chromedp.Void](`document.getElementById('next-policy').dispatchEvent(new Event('change'))`))
			nextReady(t, ctx)
			do(t, ctx, chromedp.SetValue(chromedp.CSS(`#next-now`), "0"), chromedp.Click(chromedp.CSS(`[data-testid=next-now-set]`)))
			nextReady(t, ctx)
			do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('next-seek'); s.value = '2'; s.dispatchEvent(new Event('change')); })()`))
			nextReady(t, ctx)
			do(t, ctx, chromedp.Click(chromedp.CSS(`#next-quiz-toggle`)))
			waitJS(t, ctx, `document.getElementById('next-panel').dataset.key.endsWith(':true') && !document.getElementById('next-quiz').hidden`, 20*time.Second)
			panel := js2[string](t, ctx, `document.getElementById('next-panel').innerText`)
			if js2[int](t, ctx, `document.querySelectorAll('#next-cells .gc-victim, #next-cands tr.chosen').length`) != 0 ||
				js2[string](t, ctx, `[...document.querySelectorAll('#next-cands th')].map((th) => th.textContent).join('|')`) != "section|valid|mean mtime" ||
				strings.Contains(panel, "◂ victim") || strings.Contains(panel, "cheapest") || text(t, ctx, "next-other") != "" {
				t.Errorf("the open question shows its answer: %q", panel)
			}
			shot(t, ctx, "next-quiz-"+size)
			axeCheck(t, ctx, axe, "the next panel's question, "+size)
			nextCompareFresh(t, tab, ctx, vp.w, vp.h, "the open question")
			choice := js2[string](t, ctx, `document.querySelector('[data-testid=next-choice]').dataset.value`)
			do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid=next-choice]`)))
			nextReady(t, ctx)
			if nextAt(t, ctx) != 3 || !strings.Contains(text(t, ctx, "next-verdict"), "the cleaner picks segment") {
				t.Errorf("after answering %s: frame %d, verdict %q", choice, nextAt(t, ctx), text(t, ctx, "next-verdict"))
			}
			v := js2[string](t, ctx, `document.querySelector('#next-cells .gc-victim').dataset.segno`)
			if right := strings.HasPrefix(text(t, ctx, "next-verdict"), "Right"); right != (choice == "segment "+v) {
				t.Errorf("answered %s, victim %s: verdict %q", choice, v, text(t, ctx, "next-verdict"))
			}
			// The panel's switch is the player's: its checkbox and its permalink follow.
			waitJS(t, ctx, `document.getElementById('quiz-toggle').checked && new URLSearchParams(location.search).get('quiz') === '1'`, 10*time.Second)
			do(t, ctx, chromedp.Click(chromedp.CSS(`#next-quiz-toggle`)))
			// Cost-benefit: a background call marks its victim; the sync after it moves the blocks.
			do(t, ctx, chromedp.SetValue(chromedp.CSS(`#next-policy`), "cost-benefit"),
				chromedp.Evaluate[chromedp.Void](`document.getElementById('next-policy').dispatchEvent(new Event('change'))`))
			nextReady(t, ctx)
			do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('next-seek'); s.value = '4'; s.dispatchEvent(new Event('change')); })()`))
			nextReady(t, ctx)
			if !strings.HasSuffix(text(t, ctx, "next-label"), "sync") || !strings.Contains(text(t, ctx, "next-moves"), "cold data log") {
				t.Errorf("cost-benefit frame 4: %q, moves %q; want the sync that moves the marked blocks", text(t, ctx, "next-label"), text(t, ctx, "next-moves"))
			}
			shot(t, ctx, "next-cb-sync-"+size)
			nextCompareFresh(t, tab, ctx, vp.w, vp.h, "the cost-benefit sync")
			// Closing goes back to the run; the address loses the panel's parameters.
			do(t, ctx, chromedp.Click(chromedp.CSS(`#next-close`)))
			waitJS(t, ctx, `document.getElementById('next-panel').hidden && !new URLSearchParams(location.search).has('next')`, 10*time.Second)
			noSideways(t, ctx, "the player after the panel, "+size)
			// The timeline goes on from the run's end: → there opens the panel at its first frame,
			// ← on that frame comes back to the run, still at its end.
			do(t, ctx, chromedp.Click(chromedp.CSS(`#btn-end`)))
			waitJS(t, ctx, `document.getElementById('run-status').textContent === 'done' && document.getElementById('step-now').textContent === document.getElementById('step-total').textContent`, time.Minute)
			end := text(t, ctx, "step")
			do(t, ctx, chromedp.KeyEvent(kb.ArrowRight))
			nextReady(t, ctx)
			if nextAt(t, ctx) != 0 || text(t, ctx, "next-label") != "after the run" {
				t.Errorf("→ at the run's end: panel at frame %d %q", nextAt(t, ctx), text(t, ctx, "next-label"))
			}
			do(t, ctx, chromedp.KeyEvent(kb.ArrowLeft))
			waitJS(t, ctx, `document.getElementById('next-panel').hidden && !new URLSearchParams(location.search).has('next')`, 10*time.Second)
			if got := text(t, ctx, "step"); got != end {
				t.Errorf("back from the panel: the run at step %s, want its end %s", got, end)
			}
			// The step button at the end does the same as →.
			do(t, ctx, chromedp.Click(chromedp.CSS(`#btn-step`)))
			nextReady(t, ctx)
			if nextAt(t, ctx) != 0 || text(t, ctx, "step") != end {
				t.Errorf("the step button at the run's end: panel at %d, run at %s", nextAt(t, ctx), text(t, ctx, "step"))
			}
		})
	}
}
