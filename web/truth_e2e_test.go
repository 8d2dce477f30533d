package web

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// panelIDs are the elements whose text is the player's state: step, counters, SIT totals and its
// text line, slot counts, the call lanes, the tour, the narration and the outcome.
var panelIDs = []string{"step-now", "step-total", "run-status", "stat-calls-per-block", "stat-calls-batched",
	"stat-blocks-invalidated", "c-pb-calls", "c-bt-calls", "c-pb-locks", "c-bt-locks", "c-slots-before",
	"c-slots-now", "c-sit-before", "c-pb-sit", "c-bt-sit", "c-pb-prefree", "c-bt-prefree", "slots-aside",
	"sit-aside", "sit-desc", "slots-desc", "lanes", "tour-pos", "tour-count", "tour-title", "tour-text",
	"narr-pb-text", "narr-bt-text", "outcome"}

// panels reads the text of every panel.
func panels(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	// Let the page take its own frames first: a panel that changed size is measured by a
	// ResizeObserver after a layout and drawn again in the next animation frame.
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { window.__zrFrames = 0; const f = () => { if (++window.__zrFrames < 4) requestAnimationFrame(f); }; requestAnimationFrame(f); })()`))
	waitJS(t, ctx, `window.__zrFrames >= 4`, 10*time.Second)
	js := fmt.Sprintf(`Object.fromEntries(%s.map((id) => { const e = document.getElementById(id); return [id, e && !e.closest('[hidden]') ? e.textContent.replace(/\s+/g, ' ').trim() : '']; }))`,
		"["+strings.Join(quoteAll(panelIDs), ",")+"]")
	m, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](js))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strconv.Quote(x)
	}
	return out
}

// settled waits until the page shows step (the number, without separators) in its counter and
// its URL, with the initial map complete (the physical runs are counted then).
func settled(t *testing.T, ctx context.Context, step int64) {
	t.Helper()
	defer func() {
		if t.Failed() {
			s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('step-now').textContent + ' | ' + location.search + ' | ' + document.getElementById('slots-aside').textContent + ' | ' + document.getElementById('run-status').textContent`))
			t.Logf("page: %s", s)
		}
	}()
	waitJS(t, ctx, fmt.Sprintf(`(() => { const el = (id) => (document.getElementById(id) || {}).textContent || '';
		return el('step-now').replace(/[^0-9]/g, '') === '%d' && new URLSearchParams(location.search).get('step') === '%d' && /physical run|^0 slots/.test(el('slots-aside')); })()`, step, step), 30*time.Second)
}

func shownStep(t *testing.T, ctx context.Context) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, text(t, ctx, "step")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// compareFresh loads the page's own URL in a new tab and compares every panel.
func compareFresh(t *testing.T, tab func(testing.TB) context.Context, ctx context.Context, what string, skip ...string) {
	t.Helper()
	step := shownStep(t, ctx)
	settled(t, ctx, step)
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		t.Fatal(err)
	}
	got := panels(t, ctx)
	fresh := tab(t)
	do(t, fresh, chromedp.Navigate(href))
	settled(t, fresh, step)
	want := panels(t, fresh)
	if got["sit-aside"] != want["sit-aside"] {
		js := `['sit', 'slots', 'tour', 'narration', 'lanes', 'counters-panel', 'sit-panel', 'controls', 'outcome', 'quiz'].map((id) => { const e = document.getElementById(id); return id + ':' + (e ? Math.round(e.getBoundingClientRect().height) + (e.hidden ? 'h' : '') : '-'); }).join(' ')`
		a, _ := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		b, _ := chromedp.Run(fresh, chromedp.Evaluate[string](js))
		t.Logf("heights: navigated %s; fresh %s", a, b)
	}
	for _, id := range panelIDs {
		if slicesContains(skip, id) {
			continue
		}
		if got[id] != want[id] {
			t.Errorf("%s, step %d: #%s shows %q; a fresh load of %s shows %q", what, step, id, got[id], href, want[id])
		}
	}
}

func slicesContains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// slideTo moves the slider to step as a drag's end does.
func slideTo(t *testing.T, ctx context.Context, step int64) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.getElementById('seek'); s.value = '%d'; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); })()`, step)))
	settled(t, ctx, step)
}

func click(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%q).click()`, id)))
}

// TestBrowserTruth: issue 16's paths, in the browser. After End then Home, a seek back before a
// mode's first SIT update, steps, the next call, a tour stop and slider moves, every panel reads as
// a fresh load of the page's permalink does; on a 257-segment sandbox list the SIT totals at the end
// are exact (0 valid of 131,584).
func TestBrowserTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	truthPaths(t, tab, ts.ts.URL, "bench64", "fragmented", "prealloc", "257 segments")
}

// truthPaths walks TestBrowserTruth's paths through the named runs of the pages at base (the
// server's, or the static site's: TestSiteTruth).
func truthPaths(t *testing.T, tab func(testing.TB) context.Context, base string, names ...string) {
	for _, c := range []struct {
		name, url string
	}{
		{"bench64", runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})},
		{"fragmented", runURL(base, "/cases/fragmented.bin", url.Values{"mode": {"both"}})},
		{"prealloc", runURL(base, "/cases/prealloc.bin", url.Values{"mode": {"both"}})},
		{"257 segments", base + "/sandbox/run?mode=both&slots=" + url.QueryEscape("4096-135679")},
	} {
		if !slicesContains(names, c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			ctx := tab(t)
			do(t, ctx, chromedp.Navigate(c.url))
			settled(t, ctx, 0)
			total, err := strconv.ParseInt(strings.ReplaceAll(text(t, ctx, "step-total"), ",", ""), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			click(t, ctx, "btn-end")
			settled(t, ctx, total)
			compareFresh(t, tab, ctx, "End")
			if c.name == "257 segments" {
				p := panels(t, ctx)
				for _, id := range []string{"c-pb-sit", "c-bt-sit"} {
					if got := p[id]; got != "0" {
						t.Errorf("at the end #%s = %q, want 0 (every block invalidated)", id, got)
					}
				}
				if got := p["c-sit-before"]; got != "131,584" {
					t.Errorf("SIT before %q, want 131,584", got)
				}
			}
			click(t, ctx, "btn-reset")
			settled(t, ctx, 0)
			compareFresh(t, tab, ctx, "End, Home")
			slideTo(t, ctx, total/3)
			click(t, ctx, "btn-step")
			settled(t, ctx, total/3+1)
			slideTo(t, ctx, 1)
			compareFresh(t, tab, ctx, "slider back before the first SIT update")
			click(t, ctx, "btn-flush")
			waitJS(t, ctx, `document.getElementById('step-now').textContent.replace(/[^0-9]/g, '') !== '1'`, 30*time.Second)
			after := shownStep(t, ctx)
			click(t, ctx, "btn-back")
			settled(t, ctx, after-1)
			compareFresh(t, tab, ctx, "next call, back")
			// The tour's next stop; a stop shares its step with another at times, and the open one
			// is not in the URL, so the tour is compared at the step the slider gives next.
			click(t, ctx, "tour-next")
			click(t, ctx, "tour-next")
			waitJS(t, ctx, `document.getElementById('tour-pos').textContent.trim() !== ''`, 10*time.Second)
			slideTo(t, ctx, 2*total/3)
			compareFresh(t, tab, ctx, "tour, slider")
		})
	}
}

// TestBrowserModeSwitch: b at the end of bench64 (both) shows per-block's end (49,188 of 49,188),
// three presses come back to 65,675, and a switch mid-run shows what a reload shows (the tour
// position included).
func TestBrowserModeSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	modeSwitch(t, tab, ts.ts.URL)
}

// modeSwitch is TestBrowserModeSwitch on the pages at base (the server's, or the static site's:
// TestSiteTruth).
func modeSwitch(t *testing.T, tab func(testing.TB) context.Context, base string) {
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "step": {"65675"}})))
	settled(t, ctx, 65675)
	want := []struct {
		mode string
		step int64
	}{{"per-block", 49188}, {"batched", 16515}, {"both", 65675}}
	prev := "65,675"
	for _, w := range want {
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.body.focus()`), chromedp.KeyEvent("b"))
		// The new mode's hello has come when the step total changes (each mode's differs).
		waitJS(t, ctx, fmt.Sprintf(`new URLSearchParams(location.search).get('mode') === %q && document.getElementById('step-total').textContent !== %q`, w.mode, prev), 30*time.Second)
		prev = text(t, ctx, "step-total")
		total, err := strconv.ParseInt(strings.ReplaceAll(text(t, ctx, "step-total"), ",", ""), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		settled(t, ctx, total)
		if w.mode != "batched" && total != w.step {
			t.Errorf("%s: step total %d, want %d", w.mode, total, w.step)
		}
		compareFresh(t, tab, ctx, "b at the end to "+w.mode)
	}
	slideTo(t, ctx, 3501)
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.body.focus()`), chromedp.KeyEvent("b"))
	waitJS(t, ctx, `new URLSearchParams(location.search).get('mode') === 'per-block' && document.getElementById('step-total').textContent === '49,188'`, 30*time.Second)
	compareFresh(t, tab, ctx, "b mid-run")
}

// TestBrowserHugeRanges: a 1 TiB length plays to ENOSPC (no "server busy"), and an offset past
// s_maxbytes is EFBIG, which the page says vfs_fallocate returns.
func TestBrowserHugeRanges(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	for _, c := range []struct {
		q     url.Values
		errno string
		by    string
	}{
		{url.Values{"length": {"1TiB"}, "mode": {"both"}, "run": {"end"}}, "ENOSPC", "f2fs_zero_range"},
		{url.Values{"offset": {"999999999999999"}, "length": {"4096"}, "mode": {"both"}, "run": {"end"}}, "EFBIG", "vfs_fallocate"},
	} {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(runURL(ts.ts.URL, "/cases/contiguous.bin", c.q)))
		waitStatus(t, ctx, time.Minute, c.errno)
		if o := text(t, ctx, "outcome"); !strings.Contains(o, c.by+" returns -"+c.errno) {
			t.Errorf("%v: outcome %q", c.q, o)
		}
	}
}

// stableStep is the step the page shows once its step counter and its permalink's step= agree and
// hold still over two reads 300 ms apart (a seek's frames arriving in several messages), within
// 30 s.
func stableStep(t *testing.T, ctx context.Context) int64 {
	t.Helper()
	const agree = `(() => { const n = document.getElementById('step-now').textContent.replace(/[^0-9]/g, '');
		return n !== '' && new URLSearchParams(location.search).get('step') === n ? Number(n) : -1; })()`
	deadline := time.Now().Add(30 * time.Second)
	last := int64(-2)
	for time.Now().Before(deadline) {
		n := int64(js[float64](t, ctx, agree))
		if n >= 0 && n == last {
			return n
		}
		last = n
		time.Sleep(300 * time.Millisecond) // the interval of the stillness check, not a wait for a state
	}
	t.Fatalf("the shown step did not settle in 30 s (last %d)", last)
	return 0
}
