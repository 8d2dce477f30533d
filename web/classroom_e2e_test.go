package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Classroom on every screen (issue 20): every page at a phone's, a small laptop's, a laptop's and a
// projector's size — no page scrolls sideways, axe-core finds no serious or critical violation —
// with ZRVIZ_SCREENSHOTS=1 writing docs/screenshots/screen-<page>-<w>x<h>.png.

// viewports are the sizes the pages must work at: a phone, a 4:3 projector, a laptop, a 1080p screen.
var viewports = []struct{ w, h int64 }{{390, 844}, {1024, 768}, {1366, 768}, {1920, 1080}}

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
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](src)); err != nil {
			t.Fatalf("%s: inject axe-core: %v", where, err)
		}
	}
	const run = `axe.run(document, {resultTypes: ['violations']}).then((r) => JSON.stringify(r.violations
		.filter((v) => v.impact === 'serious' || v.impact === 'critical')
		.map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ': ' + (n.failureSummary || '').split('\n').slice(0, 2).join(' '))}))))`
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](run, chromedp.EvalAwaitPromise))
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

// settle waits until the page has drawn two frames, so a screenshot shows what the page shows.
func settle(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok(true))))`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
}

// shot saves the viewport to docs/screenshots/name.png when ZRVIZ_SCREENSHOTS=1.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("ZRVIZ_SCREENSHOTS") != "1" {
		return
	}
	settle(t, ctx)
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
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

// classroomPage is a page of the sweep: where it is and what shows it is ready.
type classroomPage struct {
	name, path, ready string
}

var classroomPages = []classroomPage{
	{"images", "/", `!!document.querySelector('[data-testid="image-item"][data-id="demo"]')`},
	{"image", "/images/demo", `!!document.querySelector('[data-testid="file-tree"]') && document.getElementById('segmap').height > 20`},
	{"file", "/images/demo/file?path=/seed/bench64.bin", `!!document.querySelector('[data-testid="block-map-canvas"]')`},
	{"run", "/images/demo/run?path=/seed/bench64.bin&mode=both&step=2056", `document.querySelector('[data-testid="run-status"]').textContent === 'paused' && document.getElementById('seek').value === '2056'`},
	{"block", "/images/demo/blocks/4625", `!!document.querySelector('main h1')`},
	{"sandbox", "/sandbox", `!!document.querySelector('[data-testid="sandbox-input"]')`},
	{"sandbox-run", "/sandbox/run?slots=" + url.QueryEscape("100 101 102 NEW 200"), `document.querySelector('[data-testid="run-status"]').textContent === 'paused'`},
	{"exercise", "/exercise?seed=7", `!!document.querySelector('[data-testid="exercise-questions"]')`},
	{"glossary", "/glossary", `!!document.querySelector('[data-testid="term-sit-lock"]')`},
	{"notfound", "/nope", `!!document.querySelector('[data-testid="error-page"]')`},
}

func TestBrowserClassroomScreens(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium, every page at four sizes")
	}
	src := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	for _, vp := range viewports {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			ctx := tab(t)
			do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h))
			for _, p := range classroomPages {
				where := fmt.Sprintf("%s at %d×%d", p.name, vp.w, vp.h)
				do(t, ctx, chromedp.Navigate(base+p.path))
				waitJSOr(t, ctx, p.ready, 30*time.Second, `document.title + ' ' + document.body.innerText.slice(0, 200)`)
				settle(t, ctx)
				noSideways(t, ctx, where)
				axeCheck(t, ctx, src, where)
				shot(t, ctx, fmt.Sprintf("screen-%s-%dx%d", p.name, vp.w, vp.h))
			}
		})
	}
}
