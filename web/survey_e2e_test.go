package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zrviz/zrviz/imgio"
)

// TestBrowserSurvey: from the demo's image page, the survey link opens the survey page, which
// shows its progress and then the totals, the run-length histogram (a bar per bucket) and the
// cumulative plot as SVG with their downloads, and every file in a table that sorts by the column
// clicked (aria-sort says how) and links each row to the player at that file; typed costs change
// the estimate. At 1280×720 and 390×844 the page does not scroll sideways and axe-core finds
// nothing serious. Screenshots go to $ZRVIZ_SURVEY_SHOTS (and docs/screenshots with
// ZRVIZ_SCREENSHOTS=1).
func TestBrowserSurvey(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	src := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(ts.ts.URL+"/images/demo"))
	do(t, ctx, chromedp.WaitVisible(testid("image-survey")), chromedp.Click(testid("image-survey")))
	waitJS(t, ctx, `location.pathname === '/images/demo/survey' && document.getElementById('survey').dataset.state === 'done'`, 60*time.Second)
	if s := text(t, ctx, "survey-status"); s != "done: 40 files" {
		t.Errorf("status %q", s)
	}
	if h := text(t, ctx, "survey-headline"); !strings.Contains(h, "299 f2fs_invalidate_blocks calls instead of 21,707") || !strings.Contains(h, "estimated") {
		t.Errorf("headline %q", h)
	}
	if n := js[int](t, ctx, `document.querySelectorAll('#sv-hist svg rect[fill="#0072b2"]').length`); n != 10 {
		t.Errorf("the histogram has %d bars, want 10", n)
	}
	if !js[bool](t, ctx, `!!document.querySelector('#sv-plot svg path') && document.getElementById('sv-plot-svg').href.startsWith('blob:')`) {
		t.Error("no cumulative plot, or no download of it")
	}
	if n := js[int](t, ctx, `document.querySelectorAll('[data-testid="survey-row"]').length`); n != 40 {
		t.Errorf("%d rows, want 40", n)
	}
	// Sorted by calls saved, most first: the seed's file leads.
	if first := js[string](t, ctx, `document.querySelector('[data-testid="survey-row"] code').textContent`); first != "/seed/bench64.bin" {
		t.Errorf("first row %q, want /seed/bench64.bin", first)
	}
	// A number column sorts most first on its first click, the other way on the second.
	do(t, ctx, chromedp.Click(testid("sort-size")))
	order := func() []string {
		return js[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="survey-row"] code')].map((c) => c.textContent)`)
	}
	desc := order()
	if desc[0] != "/cases/sparse-9g.bin" || js[string](t, ctx, `document.querySelector('[data-testid="sort-size"]').closest('th').getAttribute('aria-sort')`) != "descending" {
		t.Errorf("sorted by size, descending: first %q", desc[0])
	}
	do(t, ctx, chromedp.Click(testid("sort-size")))
	asc := order()
	if asc[len(asc)-1] != "/cases/sparse-9g.bin" || js[string](t, ctx, `document.querySelector('[data-testid="sort-size"]').closest('th').getAttribute('aria-sort')`) != "ascending" {
		t.Errorf("sorted by size, ascending: last %q", asc[len(asc)-1])
	}
	// Typed costs change the estimate and say where it comes from.
	before := text(t, ctx, "survey-headline")
	do(t, ctx, chromedp.SetValue(testid("survey-per-call"), "10"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('sv-per-call').dispatchEvent(new Event('input'))`))
	if after := text(t, ctx, "survey-headline"); after == before || !strings.Contains(text(t, ctx, "survey-cost-source"), "10 µs per call") {
		t.Errorf("typed costs: headline %q → %q, source %q", before, after, text(t, ctx, "survey-cost-source"))
	}
	do(t, ctx, chromedp.Click(testid("survey-costs-reset")))

	shots := os.Getenv("ZRVIZ_SURVEY_SHOTS")
	for _, vp := range []struct {
		w, h int64
		name string
	}{{1280, 720, "survey-1280"}, {390, 844, "survey-390"}} {
		do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h), chromedp.Evaluate[chromedp.Void](`scrollTo(0, 0)`))
		settle(t, ctx)
		noSideways(t, ctx, vp.name)
		noCutText(t, ctx, vp.name)
		noBrokenTokens(t, ctx, vp.name)
		headingOne(t, ctx, vp.name)
		axeCheck(t, ctx, src, vp.name)
		shot(t, ctx, vp.name)
		if shots != "" {
			settle(t, ctx)
			buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(shots, vp.name+".png"), buf, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, part := range []string{"sv-results", "sv-pictures", "sv-files-panel"} {
				do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('`+part+`').scrollIntoView()`))
				settle(t, ctx)
				buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(shots, vp.name+"-"+part+".png"), buf, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// The classroom sweep's other sizes: nothing scrolls sideways, is cut or broken there either.
	for _, vp := range viewports {
		where := fmt.Sprintf("survey at %d×%d", vp.w, vp.h)
		do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h))
		settle(t, ctx)
		noSideways(t, ctx, where)
		noCutText(t, ctx, where)
		noBrokenTokens(t, ctx, where)
	}
	do(t, ctx, chromedp.EmulateViewport(viewW, viewH))

	// A row's link opens the player at that file, playing the zero of the whole file.
	href := js[string](t, ctx, `document.querySelector('[data-testid="survey-play"]').getAttribute('href')`)
	if !strings.HasPrefix(href, "/images/demo/run?path=") || !strings.Contains(href, "mode=both") {
		t.Fatalf("row link %q", href)
	}
	do(t, ctx, chromedp.Click(testid("survey-play")))
	waitJS(t, ctx, `location.pathname === '/images/demo/run' && !!document.querySelector('[data-testid="run-status"]')`, 30*time.Second)
}

// BenchmarkBrowserSurvey opens the survey page of the image ZRVIZ_BENCH_IMAGE names (the 16 GiB
// image of scripts/bench-image.sh, 10,001 files) in headless Chromium and reports the time from the
// navigation until the page has drawn every part (survey-ms: the survey itself, the ≈ 21 MB of JSON,
// its parse and the first 100 rows), and a re-sort of every row by size (sort-ms). Figures go to
// docs/performance.md with the load average.
func BenchmarkBrowserSurvey(b *testing.B) {
	p := os.Getenv("ZRVIZ_BENCH_IMAGE")
	if p == "" {
		b.Skip("ZRVIZ_BENCH_IMAGE names no image (scripts/bench-image.sh makes one)")
	}
	ts := mustOpenServer(b, Config{})
	img, err := imgio.OpenFileContext(context.Background(), p, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ts.AddImage("big", "bench.img", img); err != nil {
		b.Fatal(err)
	}
	tab := browser(b)
	for range b.N {
		ctx := tab(b)
		start := time.Now()
		do(b, ctx, chromedp.Navigate(ts.ts.URL+"/images/big/survey"))
		waitJS(b, ctx, `document.getElementById('survey').dataset.state === 'done'`, 5*time.Minute)
		took := time.Since(start)
		sortStart := time.Now()
		do(b, ctx, chromedp.Click(testid("sort-size")))
		sorted := time.Since(sortStart)
		b.ReportMetric(float64(took.Milliseconds()), "survey-ms")
		b.ReportMetric(float64(sorted.Milliseconds()), "sort-ms")
		b.Logf("survey page of 10,001 files drawn in %v (the survey run afresh), every row sorted by size in %v; load average %s", took, sorted, loadAverage())
		ts.surveys.mu.Lock()
		ts.surveys.jobs = nil // the next iteration surveys again
		ts.surveys.mu.Unlock()
	}
}
