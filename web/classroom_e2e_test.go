package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/go-chi/chi/v5"
	"github.com/zrviz/zrviz/player"
)

// Classroom on every screen (issue 20): every page at a phone's, a small laptop's, a laptop's and a
// projector's size — no page scrolls sideways, axe-core finds no serious or critical violation at
// any of them —
// with ZRVIZ_SCREENSHOTS=1 writing docs/screenshots/screen-<page>-<w>x<h>.png.

// viewports are the sizes the pages must work at: a phone, a 4:3 projector, a 1280×720 projector
// (issue 38), a laptop, a 1080p screen.
var viewports = []struct{ w, h int64 }{{390, 844}, {1024, 768}, {1280, 720}, {1366, 768}, {1920, 1080}}

// axeSource returns axe-core's axe.min.js, which scripts/test installs with npm into
// .cache/axe (ZRVIZ_AXE names another copy). Without it the test fails under CI=true and is
// skipped elsewhere, as testutil.NeedTool does for programs.
func axeSource(t *testing.T) string {
	t.Helper()
	p := os.Getenv("ZRVIZ_AXE")
	if p == "" {
		p = filepath.Join("..", ".cache", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core is required (CI=true; scripts/test installs it): %v", err)
		}
		t.Skipf("axe-core not found (%v); run scripts/test once, or set ZRVIZ_AXE", err)
	}
	return string(b)
}

// axeViolation is one rule axe-core found broken, with the first few nodes that break it.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeCheck injects axe-core into the tab (once per document) and fails the test for every serious
// or critical violation on the page as it is now.
func axeCheck(t *testing.T, ctx context.Context, src, where string) {
	t.Helper()
	if !js[bool](t, ctx, `typeof window.axe === 'object'`) {
		if _, err := evalJS[chromedp.Void](ctx, src); err != nil {
			t.Fatalf("%s: inject axe-core: %v", where, err)
		}
	}
	const run = `axe.run(document, {resultTypes: ['violations']}).then((r) => JSON.stringify(r.violations
		.filter((v) => v.impact === 'serious' || v.impact === 'critical')
		.map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ': ' + (n.failureSummary || '').split('\n').slice(0, 2).join(' '))}))))`
	out, err := evalJS[string](ctx, run, chromedp.EvalAwaitPromise)
	if err != nil {
		t.Fatalf("%s: axe.run: %v", where, err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		t.Fatalf("%s: axe result %q: %v", where, out, err)
	}
	for _, v := range vs {
		t.Errorf("%s: axe %s (%s): %s\n\t%s", where, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n\t"))
	}
}

// noSideways fails when the page is wider than the viewport (it scrolls sideways), naming the
// widest elements that stick out.
func noSideways(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	const probe = `(() => {
		const w = document.documentElement.clientWidth;
		if (document.documentElement.scrollWidth <= w) return '';
		const out = [];
		for (const el of document.body.querySelectorAll('*')) {
			const r = el.getBoundingClientRect();
			if (r.right > w + 1 && r.width > 0) out.push((el.id ? '#' + el.id : el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : '')) + ' right=' + Math.round(r.right));
		}
		return 'page ' + document.documentElement.scrollWidth + ' px wide in ' + w + ': ' + out.slice(0, 8).join(', ');
	})()`
	if msg := js[string](t, ctx, probe); msg != "" {
		t.Errorf("%s scrolls sideways: %s", where, msg)
	}
}

// noCutText fails when the player cuts text it must show whole: the breadcrumb, the step counter,
// the headline figures' labels, the calls in the call log (their reason may give way) and the
// keys of the tour's terms line.
func noCutText(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	const probe = `(() => {
		const out = [];
		const cut = (el) => el.offsetParent && el.scrollWidth > el.clientWidth + 1;
		for (const el of document.querySelectorAll('.crumbs a, .crumbs [aria-current], .stepinfo, .counters .big .label, .counters .big .value')) {
			if (cut(el)) out.push((el.id || el.className || el.tagName) + ' "' + el.textContent.trim().slice(0, 40) + '"');
		}
		for (const li of document.querySelectorAll('.calls ol li')) {
			if (!li.offsetParent) continue;
			const r = document.createRange();
			r.setStart(li, 0);
			const why = li.querySelector('.why');
			if (why) r.setEndBefore(why); else r.setEnd(li, li.childNodes.length);
			const w = r.getBoundingClientRect();
			const box = li.getBoundingClientRect();
			if (w.right > box.right + 1 || w.height > box.height + 1 || box.bottom > li.closest('.lanes').getBoundingClientRect().bottom + 1) out.push('call "' + r.toString().slice(0, 40) + '"');
		}
		return out.slice(0, 6).join('; ');
	})()`
	if msg := js[string](t, ctx, probe); msg != "" {
		t.Errorf("%s cuts text: %s", where, msg)
	}
}

// settle waits until the page has drawn two frames, so a screenshot shows what the page shows.
func settle(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := evalJS[bool](ctx, `new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok(true))))`, chromedp.EvalAwaitPromise); err != nil {
		t.Fatal(err)
	}
}

// shot saves the viewport to docs/screenshots/name.png when ZRVIZ_SCREENSHOTS=1; on a phone, where
// the pages scroll down, the whole page.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("ZRVIZ_SCREENSHOTS") != "1" {
		return
	}
	settle(t, ctx)
	capture := chromedp.CaptureScreenshot()
	if js[bool](t, ctx, `innerWidth < 500`) {
		capture = chromedp.FullScreenshot(100)
	}
	buf, err := chromedp.Run(ctx, capture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("../docs/screenshots", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("../docs/screenshots", name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// classroomPage is a page of the sweep: the route it is served by, where it is and what shows it is
// ready.
type classroomPage struct {
	route, name, path, ready string
}

// classroomPages is the sweep: at least one page for every GET route of the router that serves
// HTML (TestBrowserClassroomScreens fails for a route without one, so a new page cannot be missed),
// and the not-found page. "{code}" in a path is replaced by a live room's code.
var classroomPages = []classroomPage{
	{"/", "images", "/", `!!document.querySelector('[data-testid="image-item"][data-id="demo"]')`},
	{"/images/{id}/", "image", "/images/demo", `!!document.querySelector('[data-testid="file-tree"]') && document.getElementById('segmap').height > 20`},
	{"/images/{id}/file", "file", "/images/demo/file?path=/seed/bench64.bin", `!!document.querySelector('[data-testid="block-map-canvas"]')`},
	{"/images/{id}/run", "run", "/images/demo/run?path=/seed/bench64.bin&mode=both&step=2056", `document.querySelector('[data-testid="run-status"]').textContent === 'paused' && document.getElementById('seek').value === '2056'`},
	// Presenter mode (issue 38: as wide as the screen on a phone, axe-clean at every size).
	{"/images/{id}/run", "run-present", "/images/demo/run?path=/seed/bench64.bin&mode=both&step=2056&present=1", `document.querySelector('[data-testid="run-status"]').textContent === 'paused' && document.getElementById('seek').value === '2056' && document.body.classList.contains('present')`},
	{"/images/{id}/blocks/{addr}", "block", "/images/demo/blocks/4625", `!!document.querySelector('main h1')`},
	{"/images/{id}/blocks", "block-goto", "/images/demo/blocks?addr=55296", `location.pathname === '/images/demo/blocks/55296' && !!document.querySelector('main h1')`},
	{"/sandbox", "sandbox", "/sandbox", `!!document.querySelector('[data-testid="sandbox-input"]')`},
	// With a result: its figures' table scrolls sideways on a phone (issue 38: reachable by key).
	{"/sandbox", "sandbox-result", "/sandbox?slots=" + url.QueryEscape("7200-7263 NEW 9000 | 9001"), `!document.querySelector('[data-testid="sandbox-results"]').hidden && document.querySelectorAll('#sb-stats tr').length > 2`},
	{"/sandbox/run", "sandbox-run", "/sandbox/run?slots=" + url.QueryEscape("100 101 102 NEW 200"), `document.querySelector('[data-testid="run-status"]').textContent === 'paused'`},
	{"/exercise", "exercise", "/exercise?seed=7", `!!document.querySelector('[data-testid="exercise-questions"]')`},
	{"/glossary", "glossary", "/glossary", `!!document.querySelector('[data-testid="term-sit-lock"]')`},
	{"", "notfound", "/nope", `!!document.querySelector('[data-testid="error-page"]')`},
	{"/images/{id}/next", "gc", "/images/demo/next?op=gc+1", `!!document.querySelector('[data-testid="gc-steps"]')`},
	{"/images/{id}/survey", "survey", "/images/demo/survey", `document.getElementById('survey').dataset.state === 'done'`},
	{"/diff", "diff-pick", "/diff", `!!document.querySelector('[data-testid="diff-picker"]')`},
	{"/diff", "diff-same", "/diff?a=demo&b=demo", `!!document.querySelector('[data-testid="diff-summary"]')`},
	// Two images that differ (addZeroedDemo): tags, bits, block maps and node tables.
	{"/diff", "diff", "/diff?a=demo&b=after", `!!document.querySelector('[data-testid="diff-file"]')`},
	// A zero and a punch of holes.bin's data-hole-data range, both sockets open (web/compare.go).
	{"/compare", "compare", "/compare?image=demo&path=/cases/holes.bin", `document.querySelector('[data-testid="cmp-status"]').textContent === 'paused'`},
	{"/follow/{code}", "follow", "/follow/{code}", `document.querySelector('[data-testid="room-status"]').textContent === 'following the presenter'`},
}

// unshot are the sweep's pages docs/screenshots does not keep: another's copy, or shot elsewhere.
var unshot = map[string]bool{"block-goto": true, "diff-pick": true, "diff-same": true, "follow": true, "sandbox-result": true, "run-present": true}

// notPage reports whether a GET route serves no HTML page: the API, the websockets, assets, the icon.
func notPage(route string) bool {
	for _, p := range []string{"/api/", "/ws/", "/static/"} {
		if strings.HasPrefix(route, p) {
			return true
		}
	}
	return route == "/favicon.ico"
}

// pageRoutes lists the router's GET routes that serve a page.
func pageRoutes(t *testing.T, h http.Handler) []string {
	t.Helper()
	rs, ok := h.(chi.Routes)
	if !ok {
		t.Fatalf("the handler is a %T, not a chi router", h)
	}
	var out []string
	err := chi.Walk(rs, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method == http.MethodGet && !notPage(route) {
			out = append(out, route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sweepCoversRoutes fails for every page route of the router h that classroomPages has no page of.
func sweepCoversRoutes(t *testing.T, h http.Handler) {
	t.Helper()
	covered := map[string]bool{}
	for _, p := range classroomPages {
		covered[p.route] = true
	}
	routes := pageRoutes(t, h)
	for _, r := range routes {
		if !covered[r] {
			t.Errorf("the page route %s is not in classroomPages: add a page of it to the sweep", r)
		}
	}
	if len(routes) < 12 {
		t.Errorf("the router lists %d page routes: %v", len(routes), routes)
	}
}

// headingOne fails unless the page has exactly one h1 (axe-core's page-has-heading-one asks for at
// least one; two would make the outline ambiguous).
func headingOne(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	if n := js[int](t, ctx, `document.querySelectorAll('h1').length`); n != 1 {
		t.Errorf("%s has %d h1 headings, want 1: %q", where, n, js[string](t, ctx, `[...document.querySelectorAll('h1')].map((h) => h.textContent.trim().slice(0, 40)).join(' | ')`))
	}
}

// noBrokenTokens fails when a line break falls inside a token (a run of text without a space, a
// hyphen or a slash) that would fit its box whole: "inod e" or "NE W" on two lines.
func noBrokenTokens(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	const probe = `(() => {
		const out = [];
		const r = document.createRange();
		const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		for (let n = walk.nextNode(); n; n = walk.nextNode()) {
			const el = n.parentElement;
			if (!el || el.closest('script, style, select, textarea, [hidden]')) continue;
			const re = /[^\s\-\/–—]+[\-\/–—]?/g;
			for (let m; (m = re.exec(n.data)); ) {
				if (m[0].length < 2) continue;
				r.setStart(n, m.index);
				r.setEnd(n, m.index + m[0].length);
				const rects = [...r.getClientRects()].filter((x) => x.width > 0.5);
				if (rects.length < 2 || rects.every((x) => Math.abs(x.top - rects[0].top) < 2)) continue;
				// A token wider than its box has to break somewhere (overflow-wrap: anywhere).
				let box = el;
				// (Not a table's cell: a cell is as narrow as the table squeezes it.)
				while (box.parentElement && /^(inline|table|contents)/.test(getComputedStyle(box).display)) box = box.parentElement;
				const cs = getComputedStyle(box);
				const room = box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
				const need = rects.reduce((s, x) => s + x.width, 0);
				if (need <= room + 1) out.push('"' + m[0] + '" in ' + (el.closest('[data-testid]') ? el.closest('[data-testid]').dataset.testid : el.tagName.toLowerCase() + '.' + el.className) + ' (' + Math.round(need) + ' px in ' + Math.round(room) + ')');
			}
		}
		return out.slice(0, 8).join('; ');
	})()`
	if msg := js[string](t, ctx, probe); msg != "" {
		t.Errorf("%s breaks words inside a token: %s", where, msg)
	}
}

func TestBrowserClassroomScreens(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium, every page at four sizes")
	}
	t.Parallel()
	src := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	addZeroedDemo(t, ts)
	base := ts.ts.URL
	sweepCoversRoutes(t, ts.Handler())
	// A room for the follow page, presented from a tab of its own for the whole sweep.
	pres := tab(t)
	do(t, pres, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
	waitStatus(t, pres, 30*time.Second, "paused")
	code := pressRoomStart(t, pres)
	for _, vp := range viewports {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			for _, p := range classroomPages {
				// A tab per page: each tab has its own time budget, and axe-core over the block
				// page's hex dump alone takes most of a minute on a shared machine.
				ctx := tab(t)
				do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h))
				where := fmt.Sprintf("%s at %d×%d", p.name, vp.w, vp.h)
				do(t, ctx, chromedp.Navigate(base+strings.ReplaceAll(p.path, "{code}", code)))
				waitJSOr(t, ctx, p.ready, 30*time.Second, `document.title + ' ' + document.body.innerText.slice(0, 200)`)
				settle(t, ctx)
				noSideways(t, ctx, where)
				noCutText(t, ctx, where)
				noBrokenTokens(t, ctx, where)
				headingOne(t, ctx, where)
				// axe-core at every size: a layout rule (the phone's stacking, 1024's wrapping header,
				// 1920's presenter sizes) can hide a label or shrink a contrast at one size only.
				start := time.Now()
				axeCheck(t, ctx, src, where)
				t.Logf("%s: axe-core in %v", where, time.Since(start).Round(time.Millisecond))
				if !unshot[p.name] {
					shot(t, ctx, fmt.Sprintf("screen-%s-%dx%d", p.name, vp.w, vp.h))
				}
			}
		})
	}
}

// inView reports whether the element sel is on screen: inside the viewport and not scrolled out of
// the box that clips it.
func inView(t *testing.T, ctx context.Context, sel string) bool {
	t.Helper()
	return js[bool](t, ctx, fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		if (!el || !el.offsetParent) return false;
		const r = el.getBoundingClientRect();
		if (r.height === 0 || r.top < 0 || r.bottom > innerHeight || r.left < 0 || r.right > innerWidth) return false;
		for (let p = el.parentElement; p; p = p.parentElement) {
			const s = getComputedStyle(p);
			if (s.overflowY === 'visible' && s.overflowX === 'visible') continue;
			const b = p.getBoundingClientRect();
			if (r.top < b.top - 1 || r.bottom > b.bottom + 1) return false;
		}
		return true;
	})()`, sel))
}

// popoverOverChoices shows the glossary entry of every visible term on the page in turn (focus
// opens it, as a hover does) and returns where one covers the open quiz's choices, answer box or
// verdict ("" when none does). The popover is placed as it is shown, so each check is immediate.
func popoverOverChoices(t *testing.T, ctx context.Context) string {
	t.Helper()
	return js[string](t, ctx, `(() => {
		const quiz = document.querySelector('[data-testid="quiz"]');
		if (!quiz || quiz.closest('[hidden]')) return '';
		const avoid = [...quiz.querySelectorAll('.choices, form, .result')].map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
		const pop = () => document.getElementById('glossary-popover');
		const bad = [];
		const terms = [...document.querySelectorAll('[data-term]')].filter((e) => e.offsetParent && e.getBoundingClientRect().width > 0);
		for (const term of terms) {
			term.focus({ preventScroll: true });
			const p = pop();
			if (!p || p.hidden) continue;
			const r = p.getBoundingClientRect();
			for (const a of avoid) {
				if (r.left < a.right - 1 && r.right > a.left + 1 && r.top < a.bottom - 1 && r.bottom > a.top + 1) { const q = term.getBoundingClientRect(); bad.push(term.dataset.term + ' (term ' + [q.left, q.top, q.right, q.bottom].map(Math.round) + ', in #' + (term.closest('[id]') || {}).id + ') at ' + [r.left, r.top, r.right, r.bottom].map(Math.round) + ' over ' + [a.left, a.top, a.right, a.bottom].map(Math.round)); }
			}
			term.blur();
		}
		document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
		return bad.slice(0, 5).join('; ');
	})()`)
}

// VEILED_NARRATION in static/js/quiz.js.
const veiledNarration = "Hidden until you answer: predict what the kernel does next, then the step plays."

// noAnswerShown fails when the page shows, before an answer, what would answer the open question:
// the stop's title or text, the step's narration, the SIT panel's line, a segment a choice is about.
func noAnswerShown(t *testing.T, ctx context.Context, stop player.Stop, where string) {
	t.Helper()
	page := js[string](t, ctx, `document.body.innerText`)
	if strings.Contains(page, stop.Title) {
		t.Errorf("%s: the stop's title %q is on the page before the answer", where, stop.Title)
	}
	if stop.Text != "" && strings.Contains(page, stop.Text[:min(60, len(stop.Text))]) {
		t.Errorf("%s: the stop's text is on the page before the answer", where)
	}
	if got := text(t, ctx, "narration-batched"); got != veiledNarration {
		t.Errorf("%s: narration %q while the question is open", where, got)
	}
	if got := text(t, ctx, "sit-desc"); got != "" {
		t.Errorf("%s: the SIT line %q while the question is open", where, got)
	}
	if !js[bool](t, ctx, `getComputedStyle(document.querySelector('[data-testid="sit-canvas"]')).visibility === 'hidden' && getComputedStyle(document.querySelector('#lanes')).visibility === 'hidden'`) {
		t.Errorf("%s: the SIT panel or the call log shows while the question is open", where)
	}
	if live := text(t, ctx, "sr-live"); strings.Contains(live, "f2fs_invalidate_blocks(") || strings.Contains(live, " loses ") || strings.Contains(live, "calls.") {
		t.Errorf("%s: the live region says %q while the question is open", where, live)
	}
	if q := stop.Question; q.Kind == "choice" && strings.Contains(page, "segment "+q.Answer+" loses") {
		t.Errorf("%s: the page says segment %s loses blocks before the answer", where, q.Answer)
	}
	if js[bool](t, ctx, `!!document.querySelector('[data-testid="figures"]').offsetParent`) {
		t.Errorf("%s: the save menu (a figure of the SIT panel) is offered while the question is open", where)
	}
}

func TestBrowserClassroomQuiz(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	o := outline(t, ts, url.Values{"image": {DemoID}, "path": {"/seed/bench64.bin"}, "mode": {"both"}})
	var qs []int
	for k, s := range o.Stops {
		if s.Question != nil {
			qs = append(qs, k)
		}
	}
	if len(qs) < 2 {
		t.Fatalf("bench64's tour has %d questions, want at least 2", len(qs))
	}
	for _, vp := range []struct{ w, h int64 }{{1024, 768}, {390, 844}, {1366, 768}, {1920, 1080}} {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			ctx := tab(t)
			do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h))
			do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "quiz": {"1"}})))
			waitStatus(t, ctx, 30*time.Second, "paused")
			for n, k := range qs[:2] {
				stop := o.Stops[k]
				q := stop.Question
				where := fmt.Sprintf("question %d (%s) at %d×%d", n+1, q.Kind, vp.w, vp.h)
				// The slider to where the question is asked: the quiz opens it. (Playing to a question
				// and n: teach_e2e_test.go's "quiz to a score".)
				seekTo(t, ctx, q.Ask)
				waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="quiz-question"]').textContent === %q && document.querySelector('[data-testid="run-status"]').textContent === 'paused' && document.body.classList.contains('veiled')`, q.Text), 30*time.Second,
					`document.querySelector('[data-testid="quiz-question"]').textContent + ' | ' + document.querySelector('[data-testid="run-status"]').textContent + ' | ' + document.querySelector('[data-testid="tour-pos"]').textContent + ' step ' + document.querySelector('[data-testid="step"]').textContent + ' ' + document.body.className`)
				settle(t, ctx)
				noAnswerShown(t, ctx, stop, where)
				if want := fmt.Sprintf("Predict: question %d of %d", n+1, len(qs)); text(t, ctx, "tour-title") != want {
					t.Errorf("%s: tour title %q, want %q", where, text(t, ctx, "tour-title"), want)
				}
				shot(t, ctx, fmt.Sprintf("quiz-%d-asked-%dx%d", n+1, vp.w, vp.h))
				// A slip does not count: the question stays open, the score unchanged, a hint says why.
				if q.Kind == "number" {
					for _, bad := range []string{"abc", "99999999"} {
						do(t, ctx, chromedp.SetValue(chromedp.CSS(`[data-testid="quiz-answer"]`), bad), chromedp.Click(chromedp.CSS(`[data-testid="quiz-submit"]`)))
						waitJS(t, ctx, `document.querySelector('[data-testid="quiz-hint"]').textContent !== ''`, 5*time.Second)
						if s := text(t, ctx, "quiz-score"); s != fmt.Sprintf("%d/%d", min(n, 1), n) || text(t, ctx, "quiz-result") != "" {
							t.Errorf("%s: %q counted (score %s, result %q)", where, bad, s, text(t, ctx, "quiz-result"))
						}
					}
				} else if js[bool](t, ctx, `!!document.querySelector('[data-testid="quiz-answer"]').offsetParent`) {
					t.Errorf("%s: a text box for a question answered by a choice", where)
				}
				// The first right, the second wrong.
				ans := q.Answer
				if n == 1 {
					ans = wrongAnswer(q)
				}
				if q.Kind == "number" {
					do(t, ctx, chromedp.SetValue(chromedp.CSS(`[data-testid="quiz-answer"]`), ans), chromedp.Click(chromedp.CSS(`[data-testid="quiz-submit"]`)))
				} else {
					do(t, ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="quiz-choice"][data-value=%q]`, ans))))
				}
				verdict, said := "correct", "Quiz: Correct: the answer is "+q.Answer+"."
				if n == 1 {
					verdict, said = "wrong: "+q.Answer, "Quiz: Wrong: the answer is "+q.Answer+"."
				}
				waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="quiz-result"]').textContent === %q`, verdict), 10*time.Second,
					`document.querySelector('[data-testid="quiz-result"]').textContent`)
				waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="sr-live"]').textContent.startsWith(%q)`, said), 10*time.Second,
					`document.querySelector('[data-testid="sr-live"]').textContent`)
				settle(t, ctx)
				if !inView(t, ctx, `[data-testid="quiz-result"]`) {
					t.Errorf("%s: the verdict %q is out of sight", where, verdict)
				}
				// The stop's text is back, its terms linked: none of their entries covers the choices.
				if c := popoverOverChoices(t, ctx); c != "" {
					t.Errorf("%s: a glossary entry covers the quiz: %s", where, c)
				}
				shot(t, ctx, fmt.Sprintf("quiz-%d-answered-%dx%d", n+1, vp.w, vp.h))
			}
			noSideways(t, ctx, fmt.Sprintf("the quiz at %d×%d", vp.w, vp.h))
		})
	}
}

// wrongAnswer is an answer to q that is not its answer and that the page accepts.
func wrongAnswer(q *player.Question) string {
	switch q.Kind {
	case "yesno":
		if q.Answer == "yes" {
			return "no"
		}
		return "yes"
	case "choice":
		for _, c := range q.Choices {
			if c != q.Answer {
				return c
			}
		}
	}
	if q.Answer == "1" {
		return "2"
	}
	return "1"
}

func TestBrowserClassroomKeyboard(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	ctx := tab(t)
	do(t, ctx, chromedp.EmulateViewport(1366, 768))
	do(t, ctx, chromedp.Navigate(runURL(ts.ts.URL, "/seed/bench64.bin", url.Values{"mode": {"both"}, "step": {"2056"}})))
	waitStatus(t, ctx, 30*time.Second, "paused")
	// From the top of the page: the skip link first, then the header's links and the range form,
	// then the controls.
	tabs := func(until string, most int) (int, []string) {
		var path []string
		for i := 1; i <= most; i++ {
			do(t, ctx, chromedp.KeyEvent(kb.Tab))
			id := js[string](t, ctx, `(() => { const a = document.activeElement; return a ? (a.dataset.testid || a.id || a.tagName) : ''; })()`)
			path = append(path, id)
			if id == until {
				return i, path
			}
		}
		return 0, path
	}
	n, path := tabs("btn-play", 40)
	if path[0] != "skip-link" {
		t.Errorf("the first Tab stop is %q, want the skip link", path[0])
	}
	if n == 0 || n > 15 {
		t.Errorf("play is Tab stop %d from the top, want within 15: %v", n, path)
	}
	// Through the skip link, "start a room" comes right after the controls.
	do(t, ctx, chromedp.Reload())
	waitStatus(t, ctx, 30*time.Second, "paused")
	do(t, ctx, chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
	if n, path := tabs("room-start", 40); n == 0 || n+1 > 15 {
		t.Errorf("\"start a room\" is Tab stop %d after the skip link, want within 15: %v", n+1, path)
	} else if path[0] != "btn-reset" {
		t.Errorf("after the skip link Tab goes to %q, want the first control", path[0])
	}
	// From the very top, past the header, "start a room" is within 20 Tab stops (issue 30), however
	// many glossary terms the panels hold: they come after the session bar in the page's order.
	do(t, ctx, chromedp.Reload())
	waitStatus(t, ctx, 30*time.Second, "paused")
	if n, path := tabs("room-start", 40); n == 0 || n > 20 {
		t.Errorf("\"start a room\" is Tab stop %d from the top, want within 20: %v", n, path)
	} else {
		t.Logf("\"start a room\" is Tab stop %d from the top", n)
	}
	glossaryByTab(t, ctx)
}

// glossaryByTab tabs through the whole page from its top and fails unless every glossary term
// shown is a Tab stop, met in the page's order, and focus (as Enter) opens that term's entry.
func glossaryByTab(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, chromedp.Reload())
	waitStatus(t, ctx, 30*time.Second, "paused")
	// The terms on screen, numbered in document order.
	want := js[int](t, ctx, `(() => {
		let k = 0;
		for (const e of document.querySelectorAll('[data-term]')) {
			delete e.dataset.k;
			if (e.closest('#glossary-popover') || !e.offsetParent || getComputedStyle(e).visibility === 'hidden') continue;
			e.dataset.k = k++;
		}
		return k;
	})()`)
	if want < 10 {
		t.Fatalf("the player shows %d glossary terms; the sweep expects the panels' dozens", want)
	}
	const at = `(() => {
		const a = document.activeElement;
		const p = document.getElementById('glossary-popover');
		if (!a || a === document.body) return 'body';
		if (a.dataset.testid === 'skip-link') return 'skip';
		if (a.dataset.k === undefined) return a.dataset.term ? 'term ' + a.dataset.term + ' (not counted)' : '';
		const entry = JSON.parse(document.getElementById('glossary-data').textContent).find((e) => e.slug === a.dataset.term);
		const open = p && !p.hidden && a.getAttribute('aria-describedby') === p.id && !!entry && p.textContent.includes(entry.term);
		return (open ? 'open ' : 'closed ') + a.dataset.k;
	})()`
	var met []int
	for i := 0; i < 400; i++ {
		do(t, ctx, chromedp.KeyEvent(kb.Tab))
		got := js[string](t, ctx, at)
		if (got == "skip" || got == "body") && i > 0 {
			break // round the page once
		}
		var k int
		switch {
		case strings.HasPrefix(got, "open "):
			fmt.Sscan(got[5:], &k)
			met = append(met, k)
		case strings.HasPrefix(got, "closed "):
			fmt.Sscan(got[7:], &k)
			met = append(met, k)
			t.Errorf("focus on term %d does not open its entry", k)
		case strings.HasPrefix(got, "term "):
			t.Errorf("Tab reached a %s that is not on screen", got)
		}
	}
	for k := range want {
		if k >= len(met) || met[k] != k {
			t.Fatalf("Tab meets the terms in the order %v, want all %d in the page's order", met, want)
		}
	}
	if len(met) != want {
		t.Errorf("Tab met %d terms, want %d", len(met), want)
	}
	t.Logf("Tab met all %d glossary terms in order, each opening its entry", want)
	// Enter on a focused term pins its entry open; Escape closes it.
	do(t, ctx, chromedp.Focus(chromedp.CSS(`[data-term][data-k="0"]`)), chromedp.KeyEvent(kb.Enter))
	if !js[bool](t, ctx, `!document.getElementById('glossary-popover').hidden`) {
		t.Errorf("Enter on a term leaves its entry closed")
	}
	do(t, ctx, chromedp.KeyEvent(kb.Escape))
	if !js[bool](t, ctx, `document.getElementById('glossary-popover').hidden`) {
		t.Errorf("Escape leaves a term's entry open")
	}
}

func TestBrowserClassroomRoomPhone(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium, two tabs")
	}
	t.Parallel()
	src := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	pres := tab(t)
	do(t, pres, chromedp.EmulateViewport(1366, 768))
	do(t, pres, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
	waitStatus(t, pres, 30*time.Second, "paused")
	code := pressRoomStart(t, pres)
	phone := tab(t)
	do(t, phone, chromedp.EmulateViewport(390, 844))
	do(t, phone, chromedp.Navigate(base+"/follow/"+code))
	waitJSOr(t, phone, `document.querySelector('[data-testid="room-status"]').textContent === 'following the presenter'`, 30*time.Second,
		`document.querySelector('[data-testid="room-status"]').textContent`)
	waitFollowers(t, pres, 1)
	for _, step := range []int64{2056, 9000} {
		seekTo(t, pres, step)
		waitStep(t, phone, step, 10*time.Second)
	}
	settle(t, phone)
	noSideways(t, phone, "the follow page at 390×844")
	axeCheck(t, phone, src, "the follow page at 390×844")
	// The controls a follower has are big enough for a thumb.
	if h := js[float64](t, phone, `document.querySelector('[data-testid="room-detach"]').getBoundingClientRect().height`); h < 24 {
		t.Errorf("detach is %.0f px high on a phone", h)
	}
	shot(t, phone, "room-follower-390x844")
	shot(t, pres, "room-presenter-1366x768")
	// Detach on the phone: the follower drives its own copy, still without sideways scrolling.
	do(t, phone, chromedp.Click(chromedp.CSS(`[data-testid="room-detach"]`)))
	waitJS(t, phone, `!document.getElementById('btn-play').disabled`, 10*time.Second)
	noSideways(t, phone, "the detached follower at 390×844")
}

// keepFigure writes a downloaded figure beside the screenshots when ZRVIZ_SCREENSHOTS=1.
func keepFigure(t *testing.T, name string, b []byte) {
	t.Helper()
	if os.Getenv("ZRVIZ_SCREENSHOTS") != "1" {
		return
	}
	if err := os.WriteFile(filepath.Join("../docs/screenshots", name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFile waits until dir holds a finished download named name and returns its content.
func waitFile(t *testing.T, dir, name string, timeout time.Duration) []byte {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && len(b) > 0 {
			return b
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("no download %s in %v (the directory holds %v)", name, timeout, entries)
		}
	}
	return nil
}

func TestBrowserClassroomDownloads(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	ctx := tab(t)
	dir := t.TempDir()
	if _, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		t.Fatal(err)
	}
	const step = 2056
	do(t, ctx, chromedp.EmulateViewport(1366, 768))
	do(t, ctx, chromedp.Navigate(runURL(ts.ts.URL, "/cases/fragmented.bin", url.Values{"mode": {"both"}, "step": {fmt.Sprint(step)}})))
	waitStatus(t, ctx, 30*time.Second, "paused", "done")
	at := stepShown(t, ctx)
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="figures"] summary`)))
	waitJS(t, ctx, `!!document.querySelector('[data-testid="fig-slots-png"]').offsetParent`, 5*time.Second)
	shot(t, ctx, "run-save-menu")

	pngSize := func(b []byte) (int, int) {
		img, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		return img.Width, img.Height
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="fig-slots-png"]`)))
	b := waitFile(t, dir, fmt.Sprintf("fragmented.bin-slots-step%d.png", at), 20*time.Second)
	w, h := pngSize(b)
	cw := js[float64](t, ctx, `document.getElementById('slots').getBoundingClientRect().width`)
	if w < int(cw) || h < 120 {
		t.Errorf("slots PNG is %d×%d, the panel %.0f px wide", w, h, cw)
	}
	keepFigure(t, "figure-slots.png", b)
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="fig-big"]`)), chromedp.Click(chromedp.CSS(`[data-testid="fig-sit-png"]`)))
	b = waitFile(t, dir, fmt.Sprintf("fragmented.bin-sit-step%d.png", at), 20*time.Second)
	if w, h := pngSize(b); w != 2560 || h != 2*(640+40) {
		t.Errorf("presenter-size SIT PNG is %d×%d, want 2560×1360", w, h)
	}
	keepFigure(t, "figure-sit-presenter.png", b)
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="fig-strip-svg"]`)))
	b = waitFile(t, dir, fmt.Sprintf("fragmented.bin-strip-step%d.svg", at), 20*time.Second)
	if !bytes.HasPrefix(b, []byte(`<svg xmlns="http://www.w3.org/2000/svg"`)) || !bytes.Contains(b, []byte("<rect")) {
		t.Errorf("strip SVG: %.200s", b)
	}

	// The CSV link: the run's calls, a row each.
	href := js[string](t, ctx, `document.querySelector('[data-testid="calls-csv"]').href`)
	if !strings.Contains(href, "format=csv") || js[bool](t, ctx, `document.querySelector('[data-testid="calls-csv"]').hidden`) {
		t.Fatalf("CSV link %q", href)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="calls-csv"]`)))
	b = waitFile(t, dir, "fragmented.bin-calls.csv", 20*time.Second)
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	o := outline(t, ts, url.Values{"image": {DemoID}, "path": {"/cases/fragmented.bin"}, "mode": {"both"}})
	var calls uint64
	for _, f := range o.Final {
		calls += f.Stats.Calls
	}
	if len(rows) < 2 || strings.Join(rows[0], ",") != "mode,index,start,len" || uint64(len(rows)-1) != calls {
		t.Errorf("the CSV has %d rows after its header %v; the run made %d calls", len(rows)-1, rows[0], calls)
	}
}
