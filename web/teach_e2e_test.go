package web

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/zrviz/zrviz/glossary"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/player"
)

// The teaching player in headless Chromium (issue 9 and the quiz of issue 10): pace, next call,
// go to slot, the tour, the glossary, colouring, presenter mode, the keyboard alone, the quiz,
// contrast, a compressed file. ZRVIZ_SCREENSHOTS=1 writes the README's screenshots.

// js evaluates expr in the tab and returns its value.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := evalJS[T](ctx, expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// key presses one key (kb constants or a character), with Shift when shift is set.
func key(t *testing.T, ctx context.Context, k string, shift bool) {
	t.Helper()
	if shift {
		do(t, ctx, chromedp.KeyEvent(k, chromedp.KeyModifiers(chromedp.ModifierShift)))
		return
	}
	do(t, ctx, chromedp.KeyEvent(k))
}

// tabTo presses Tab until the focused element matches the CSS selector, and fails after 80 presses:
// the element must be reachable with the keyboard alone.
func tabTo(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	for i := 0; i < 80; i++ {
		if js[bool](t, ctx, fmt.Sprintf(`!!document.activeElement && document.activeElement.matches(%q)`, sel)) {
			// A focused control shows a ring a keyboard user can see.
			ring := js[string](t, ctx, `(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle + ' ' + s.outlineWidth; })()`)
			if strings.HasPrefix(ring, "none") || strings.HasSuffix(ring, " 0px") {
				t.Errorf("%s has focus but no visible focus ring (outline %q)", sel, ring)
			}
			return
		}
		do(t, ctx, chromedp.KeyEvent(kb.Tab))
	}
	t.Fatalf("Tab never reached %s (focus on %s)", sel, js[string](t, ctx, `document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : ''`))
}

// outline returns the tour of a run as the server computes it (answers included).
func outline(t *testing.T, ts *testServer, q url.Values) *player.Outline {
	t.Helper()
	tg, err := ts.resolveRun(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ts.outline(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// choose picks value in the select with data-testid id, as a user does: the value and its change
// event at once (a frame drawn between the two would show the page's own value again).
func choose(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector('[data-testid=%q]'); s.value = %q; s.dispatchEvent(new Event('change')); })()`, id, value)))
}

// stepShown is the step the page shows, as a number.
func stepShown(t *testing.T, ctx context.Context) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(text(t, ctx, "step"), ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// digits reads a counter cell ("15,872") as a number.
func digits(t *testing.T, ctx context.Context, id string) int64 {
	t.Helper()
	s := strings.ReplaceAll(text(t, ctx, id), ",", "")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s = %q: %v", id, s, err)
	}
	return n
}

// overviewColours lists the colours of the slot panel's whole-range strip, as #rrggbb.
const overviewColours = `(() => {
  const c = document.getElementById('slots');
  const g = c.getContext('2d');
  const dpr = c.width / c.getBoundingClientRect().width;
  const y = Math.round((document.body.classList.contains('present') ? 27 : 19) * dpr);
  const d = g.getImageData(0, y, c.width, 1).data;
  const out = new Set();
  for (let i = 0; i < d.length; i += 4) out.add('#' + [d[i], d[i + 1], d[i + 2]].map((v) => v.toString(16).padStart(2, '0')).join(''));
  return [...out];
})()`

// pageContrast lists the visible text on the page (header included) with less than 4.5:1 contrast
// against its background: each element with its own text, its colour (alpha blended) against the
// first opaque background up its ancestors. Disabled controls are exempt, as WCAG exempts inactive
// components.
const pageContrast = `(() => {
  const rgba = (s) => { const v = (s.match(/[\d.]+/g) || []).map(Number); return v.length === 3 ? [...v, 1] : v; };
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const bg = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgba(getComputedStyle(el).backgroundColor);
      if (c.length === 4 && c[3] === 1) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const bad = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!own || !el.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1 || el.closest('.hidden-metric, [disabled], option')) continue;
    const st = getComputedStyle(el);
    const back = bg(el);
    const [fr, fg, fb, fa] = rgba(st.color);
    const fgc = [fr * fa + back[0] * (1 - fa), fg * fa + back[1] * (1 - fa), fb * fa + back[2] * (1 - fa)];
    const [a, b] = [lum(fgc), lum(back)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) bad.push(el.tagName + '.' + el.className + ' "' + el.textContent.trim().slice(0, 30) + '" ' + st.color + ' on rgb(' + back + ') ' + ratio.toFixed(2));
  }
  return bad;
})()`

// smallText lists visible text smaller than min px (presenter mode's bound), and canvasFonts the
// smallest font the page's canvases drew text with since the recorder was reset.
const smallText = `((min) => {
  const bad = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!own || !el.checkVisibility({ visibilityProperty: true })) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1 || el.closest('.hidden-metric, .sr-only, option')) continue;
    const fs = parseFloat(getComputedStyle(el).fontSize);
    if (fs < min) bad.push(el.tagName + '#' + el.id + '.' + el.className + ' "' + el.textContent.trim().slice(0, 30) + '" ' + fs + 'px');
  }
  return bad;
})`

// canvasFontRecorder is installed before a page's scripts: it records the size of every font the
// page's own canvases draw text with.
const canvasFontRecorder = `(() => {
  window.__canvasFonts = [];
  const ft = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (...a) {
    if (this.canvas && this.canvas.isConnected) window.__canvasFonts.push(parseFloat(this.font.replace(/^\D*?(\d)/, '$1')) + ' ' + a[0]);
    return ft.apply(this, a);
  };
})()`

func TestBrowserTeaching(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	bench := url.Values{"image": {DemoID}, "path": {"/seed/bench64.bin"}, "mode": {"both"}}

	t.Run("pace", func(t *testing.T) {
		// The default pace plays any run in about 30 s: bench64 in both modes (65,675 steps) too.
		// The server's play clock runs 10 times faster for this play (3 s of waiting): the page
		// still counts its 30 s down, by the server's time left, and ends where a 30 s play does.
		ts.playClockScale.Store(math.Float64bits(10))
		defer ts.playClockScale.Store(0)
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
		waitStatus(t, ctx, 30*time.Second, "paused")
		if v := js[string](t, ctx, `document.querySelector('[data-testid="pace"]').value`); v != "30" {
			t.Errorf("pace = %q, want 30 (seconds) by default", v)
		}
		if tl := text(t, ctx, "time-left"); tl != "0:30 left" {
			t.Errorf("time left %q, want 0:30 left", tl)
		}
		start := time.Now()
		do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-play"]`)))
		// Playing, the time left counts down from 0:30 by the server's clock: wait until, still
		// playing, it reads between 0:29 and 0:01 (a condition, not a number of seconds waited).
		waitJSOr(t, ctx, `document.querySelector('[data-testid="run-status"]').textContent === 'playing' && /^0:(2\d|1\d|0[1-9]) left$/.test(document.querySelector('[data-testid="time-left"]').textContent)`, 20*time.Second,
			`document.querySelector('[data-testid="time-left"]').textContent + ' | ' + document.querySelector('[data-testid="run-status"]').textContent`)
		waitStatus(t, ctx, 45*time.Second, "done")
		t.Logf("bench64 both modes played to the end in %.1f s at the default pace (the play clock ×10)", time.Since(start).Seconds())
		if got := count(t, ctx, "stat-calls-per-block"); got != "16384" {
			t.Errorf("per-block calls %s, want 16384", got)
		}
		if tl := text(t, ctx, "time-left"); tl != "at the end" {
			t.Errorf("time left at the end %q", tl)
		}
		// Other paces: 10 s, and one step per second (18 hours for this run).
		choose(t, ctx, "pace", "10")
		key(t, ctx, kb.Home, false)
		waitJS(t, ctx, `document.querySelector('[data-testid="time-left"]').textContent === '0:10 left'`, 10*time.Second)
		key(t, ctx, "[", false) // slower: 30 s
		waitJS(t, ctx, `document.querySelector('[data-testid="pace"]').value === '30' && document.querySelector('[data-testid="time-left"]').textContent === '0:30 left'`, 10*time.Second)
		choose(t, ctx, "pace", "step")
		waitJS(t, ctx, `document.querySelector('[data-testid="time-left"]').textContent === '18:14:35 left'`, 10*time.Second)
		waitJSOr(t, ctx, `new URLSearchParams(location.search).get('pace') === 'step'`, 10*time.Second, `location.search`)
	})

	t.Run("next call stops after the SIT update", func(t *testing.T) {
		// bench64's batched calls: (34304, 512) at slot 512, then (6144, 361) and (6505, 1018) at the
		// ends of the first two chunks. At each stop the SIT already shows the call.
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
		waitStatus(t, ctx, 30*time.Second, "paused")
		before := digits(t, ctx, "sum-sit-before")
		if before != 16384 {
			t.Fatalf("SIT valid blocks before the run %d, want 16384 (32 full segments)", before)
		}
		released := int64(0)
		for k, n := range []int64{512, 361, 1018} {
			key(t, ctx, kb.ArrowRight, true)
			waitJS(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="stat-calls-batched"]').dataset.count === '%d'`, k+1), 10*time.Second)
			released += n
			if got := digits(t, ctx, "sum-sit-bt"); got != before-released {
				t.Errorf("after batched call %d the SIT holds %d valid blocks, want %d: the counters and the SIT maps disagree", k+1, got, before-released)
			}
		}
		if lanes := text(t, ctx, "calls-panel"); !strings.Contains(lanes, "f2fs_invalidate_blocks(6505, 1018)") {
			t.Errorf("calls panel %q lacks the third batched call", lanes)
		}
	})

	t.Run("go to slot", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
		waitStatus(t, ctx, 30*time.Second, "paused")
		key(t, ctx, "g", false)
		do(t, ctx, chromedp.KeyEvent("2909"), chromedp.KeyEvent(kb.Enter))
		waitJSOr(t, ctx, `/slot 2,909 in i_nid\[2\]\/0/.test(document.querySelector('[data-testid="slots-desc"]').textContent)`, 10*time.Second,
			`document.querySelector('[data-testid="slots-desc"]').textContent + ' | ' + document.querySelector('[data-testid="goto-slot"]').value`)
		if s := stepShown(t, ctx); s == 0 {
			t.Error("go to slot left the step at 0")
		}
		// A wrong entry is refused in place, nothing sent.
		do(t, ctx, chromedp.SetValue(chromedp.CSS(`[data-testid="goto-slot"]`), "12x"), chromedp.Click(chromedp.CSS(`[data-testid="goto-slot-go"]`)))
		if v := js[bool](t, ctx, `document.querySelector('[data-testid="goto-slot"]').validity.valid`); v {
			t.Error("12x accepted as a slot")
		}
	})

	t.Run("tour", func(t *testing.T) {
		// Any file of any image: the stops come from the server. n and p walk them; the button too.
		for _, q := range []url.Values{
			bench,
			{"image": {DemoID}, "path": {"/cases/prealloc.bin"}, "mode": {"batched"}},
			{"image": {DemoID}, "path": {"/cases/holes.bin"}, "mode": {"both"}},
			{"image": {DemoID}, "path": {"/cases/sparse-9g.bin"}, "mode": {"both"}},
			{"image": {DemoID}, "path": {"/cases/contiguous.bin"}, "offset": {"1000"}, "length": {"20000"}, "mode": {"per-block"}},
		} {
			t.Run(q.Get("path"), func(t *testing.T) {
				o := outline(t, ts, q)
				ctx := tab(t)
				do(t, ctx, chromedp.Navigate(runURL(base, q.Get("path"), url.Values{"mode": q["mode"], "offset": q["offset"], "length": q["length"], "colour": {"run"}})))
				waitStatus(t, ctx, time.Minute, "paused", "done", "ENOSPC")
				if got := text(t, ctx, "tour-count"); got != strconv.Itoa(len(o.Stops)) {
					t.Fatalf("tour-count %s, want %d", got, len(o.Stops))
				}
				// At step 0 the tour shows its first stop; n goes on from there.
				for k, s := range o.Stops {
					switch {
					case k == 0:
						key(t, ctx, kb.Home, false)
					case k == 1:
						do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="tour-next"]`)))
					default:
						key(t, ctx, "n", false)
					}
					waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="tour-title"]').textContent === %q && document.querySelector('[data-testid="tour-pos"]').textContent === 'stop %d of %d'`, s.Title, k+1, len(o.Stops)), 10*time.Second,
						`[document.querySelector('[data-testid="tour-title"]').textContent, document.querySelector('[data-testid="tour-pos"]').textContent, document.querySelector('[data-testid="step"]').textContent, document.activeElement && document.activeElement.outerHTML.slice(0, 80)].join(' | ')`)
					waitJS(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="step"]').textContent.replace(/,/g, '') === '%d'`, s.Step), 10*time.Second)
					if tx := text(t, ctx, "tour-text"); tx != s.Text {
						t.Errorf("stop %d text %q, want %q", k, tx, s.Text)
					}
					for _, term := range s.Terms {
						if js[int](t, ctx, fmt.Sprintf(`document.querySelectorAll('#tour-terms [data-term=%q]').length`, term)) != 1 {
							t.Errorf("stop %d: term %s not offered", k, term)
						}
					}
					if k == 3 && q.Get("path") == "/seed/bench64.bin" {
						screenshot(t, ctx, "run-tour")
					}
				}
				key(t, ctx, "p", false)
				last := o.Stops[len(o.Stops)-2]
				waitJS(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="tour-title"]').textContent === %q`, last.Title), 10*time.Second)
				key(t, ctx, kb.PageDown, false) // clickers send Page Down
				waitJS(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="tour-pos"]').textContent === 'stop %d of %d'`, len(o.Stops), len(o.Stops)), 10*time.Second)
			})
		}
	})

	t.Run("glossary", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "step": {"2056"}})))
		waitStatus(t, ctx, 30*time.Second, "paused")
		// Hover over a legend term: its entry opens.
		e, _ := glossary.Lookup("new-addr")
		hover(t, ctx, `.legend [data-term="new-addr"]`)
		waitJS(t, ctx, `!document.querySelector('[data-testid="glossary-popover"]').hidden && !!document.querySelector('[data-testid="glossary-popover"] [data-testid="term-new-addr"]')`, 5*time.Second)
		if got := text(t, ctx, "term-new-addr"); !strings.Contains(got, e.Text) || !strings.Contains(got, e.OnDisk) || !strings.Contains(got, e.Source) {
			t.Errorf("popover %q lacks the entry's text, on-disk value or source", got)
		}
		screenshot(t, ctx, "run-glossary")
		key(t, ctx, kb.Escape, false)
		waitJS(t, ctx, `document.querySelector('[data-testid="glossary-popover"]').hidden`, 5*time.Second)
		// Focus opens an entry too (no hover-only information): the narration's SIT lock.
		slug := js[string](t, ctx, `(() => { const b = document.querySelector('[data-testid="narration"] [data-term]'); b.focus(); return b.dataset.term; })()`)
		waitJS(t, ctx, fmt.Sprintf(`!!document.querySelector('[data-testid="glossary-popover"] [data-testid="term-%s"]')`, slug), 5*time.Second)
		// Panel titles, counters and the tour's terms are terms as well.
		for _, sel := range []string{`#slots-title [data-term="dnode"]`, `#sit-title [data-term="sit"]`, `.ctable [data-term="sit-lock"]`, `.ctable [data-term="prefree"]`, `#tour-terms [data-term]`, `.legend [data-term="compress-addr"]`} {
			if js[int](t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)) == 0 {
				t.Errorf("no term at %s", sel)
			}
		}
		// Every term the page names has an entry.
		for _, slug := range js[[]string](t, ctx, `[...new Set([...document.querySelectorAll('[data-term]')].map((e) => e.dataset.term))]`) {
			if _, ok := glossary.Lookup(slug); !ok {
				t.Errorf("the page names term %q, which the glossary lacks", slug)
			}
		}
		// The glossary page, at an entry.
		do(t, ctx, chromedp.Navigate(base+"/glossary#term-sit-lock"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="term-sit-lock"]`)))
		if n := js[int](t, ctx, `document.querySelectorAll('[data-testid^="term-"]').length`); n != len(glossary.All()) {
			t.Errorf("glossary page has %d entries, want %d", n, len(glossary.All()))
		}
		if !js[bool](t, ctx, `document.querySelector('[data-testid="term-sit-lock"]').matches(':target')`) {
			t.Error("#term-sit-lock is not the page's target")
		}
		checkPageContrast(t, ctx, "glossary")
	})

	t.Run("colour choice", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "step": {"600"}})))
		waitStatus(t, ctx, 30*time.Second, "paused")
		waitJS(t, ctx, `/3 physical runs/.test(document.getElementById('slots-aside').textContent)`, 10*time.Second)
		has := func(colours []string, want ...string) bool {
			for _, w := range want {
				found := false
				for _, c := range colours {
					found = found || c == w
				}
				if !found {
					return false
				}
			}
			return true
		}
		// By run (the default): bench64's three runs in three colours, no slate.
		if v := js[string](t, ctx, `document.querySelector('[data-testid="colour-by"]').value`); v != "run" {
			t.Errorf("colour-by = %q, want run by default", v)
		}
		cs := js[[]string](t, ctx, overviewColours)
		if !has(cs, "#332288", "#44aa99", "#882255") || has(cs, "#34495e") {
			t.Errorf("coloured by run, the range shows %v", cs)
		}
		screenshot(t, ctx, "run")
		// c cycles the colouring: by segment.
		key(t, ctx, "c", false)
		waitJS(t, ctx, `document.querySelector('[data-testid="legend-colours"]').dataset.colourBy === 'segment' && new URLSearchParams(location.search).get('colour') === 'segment'`, 5*time.Second)
		// The strip is drawn in the next frame: wait for its colours to change, not for a while.
		waitJS(t, ctx, `!`+overviewColours+`.includes('#332288')`, 5*time.Second)
		cs = js[[]string](t, ctx, overviewColours)
		if !has(cs, "#34495e", "#8ea3b8") || has(cs, "#332288") {
			t.Errorf("coloured by segment, the range shows %v", cs)
		}
		// By log type: the image page's hues (bench64 is warm data, sky blue).
		choose(t, ctx, "colour-by", "log")
		waitJS(t, ctx, overviewColours+`.includes('#56b4e9')`, 5*time.Second)
		if cs = js[[]string](t, ctx, overviewColours); !has(cs, "#56b4e9") {
			t.Errorf("coloured by log type, the range shows %v", cs)
		}
		// The file page takes the same choice.
		do(t, ctx, chromedp.Navigate(base+"/images/demo/file?path=/seed/bench64.bin"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="block-map-canvas"]`)))
		if v := js[string](t, ctx, `document.querySelector('[data-testid="colour-by"]').value`); v != "log" {
			t.Errorf("file page colour-by %q, want the player's log", v)
		}
		choose(t, ctx, "colour-by", "run")
		const fileColoursJS = `(() => { const c = document.getElementById('blockmap'); const g = c.getContext('2d'); const d = g.getImageData(0, Math.round(c.height / 3), c.width, 1).data; const s = new Set(); for (let i = 0; i < d.length; i += 4) s.add('#' + [d[i], d[i+1], d[i+2]].map((v) => v.toString(16).padStart(2, '0')).join('')); return [...s]; })()`
		// Redrawn in the next frame: wait for the run hues (5 s), then check all three.
		if err := pollJS(ctx, fileColoursJS+`.includes('#332288')`, 5*time.Second); err != nil {
			t.Logf("file page: no run hue after the choice: %v", err)
		}
		fileColours := js[[]string](t, ctx, fileColoursJS)
		if !has(fileColours, "#332288", "#44aa99", "#882255") {
			t.Errorf("file page by run shows %v", fileColours)
		}
		checkPageContrast(t, ctx, "file page")
		// The image page: log types in the Okabe–Ito hues, which no other colouring uses.
		do(t, ctx, chromedp.Navigate(base+"/images/demo"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="file-tree"]`)))
		waitJS(t, ctx, `document.getElementById('segmap').height > 20`, 10*time.Second)
		checkPageContrast(t, ctx, "image page")
	})

	t.Run("presenter mode", func(t *testing.T) {
		ctx := tab(t)
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: canvasFontRecorder}); err != nil {
			t.Fatal(err)
		}
		do(t, ctx, chromedp.EmulateViewport(1920, 1080),
			chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "step": {"2056"}, "colour": {"run"}})))
		waitStatus(t, ctx, 30*time.Second, "paused")
		// Shift+P turns it on; the URL keeps it.
		key(t, ctx, "P", true)
		waitJS(t, ctx, `document.body.classList.contains('present') && new URLSearchParams(location.search).get('present') === '1'`, 5*time.Second)
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.__canvasFonts = []`))
		// A clicker: Page Down for the next stop, space to play, space to pause, arrows to step.
		key(t, ctx, kb.PageDown, false)
		waitJS(t, ctx, `/^stop \d+ of \d+$/.test(document.querySelector('[data-testid="tour-pos"]').textContent)`, 5*time.Second)
		key(t, ctx, " ", false)
		at := stepShown(t, ctx)
		waitStatus(t, ctx, 10*time.Second, "playing")
		waitJS(t, ctx, fmt.Sprintf(`Number(document.querySelector('[data-testid="step"]').textContent.replace(/,/g, '')) > %d`, at), 10*time.Second)
		key(t, ctx, " ", false)
		waitStatus(t, ctx, 10*time.Second, "paused")
		at = stepShown(t, ctx)
		key(t, ctx, kb.ArrowRight, false)
		waitStep(t, ctx, at+1, 10*time.Second)
		settle(t, ctx)
		// Every label at least 18 px, in the page and in the canvases.
		for _, b := range js[[]string](t, ctx, smallText+`(18)`) {
			t.Errorf("presenter mode: text below 18 px: %s", b)
		}
		fonts := js[[]string](t, ctx, `window.__canvasFonts`)
		if len(fonts) == 0 {
			t.Fatal("no canvas text recorded")
		}
		for _, f := range fonts {
			if px, _ := strconv.ParseFloat(strings.Fields(f)[0], 64); px < 18 {
				t.Errorf("presenter mode: canvas text below 18 px: %s", f)
				break
			}
		}
		fits(t, ctx)
		checkPageContrast(t, ctx, "presenter mode")
		// Nothing hover-only: the slot under the cursor is described in text.
		if d := text(t, ctx, "slots-desc"); !strings.Contains(d, "address") {
			t.Errorf("slots-desc %q does not say what the cursor's slot holds", d)
		}
		screenshot(t, ctx, "run-present")
		// The button turns it off, and the page reloads into it from the URL.
		do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-present"]`)))
		waitJS(t, ctx, `!document.body.classList.contains('present')`, 5*time.Second)
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "present": {"1"}})))
		waitJS(t, ctx, `document.body.classList.contains('present') && document.querySelector('[data-testid="btn-present"]').getAttribute('aria-pressed') === 'true'`, 10*time.Second)
	})

	t.Run("keyboard only: player", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(runURL(base, "/cases/fragmented.bin", url.Values{"mode": {"both"}})))
		waitStatus(t, ctx, 30*time.Second, "paused")
		tabTo(t, ctx, `[data-testid="btn-play"]`)
		key(t, ctx, kb.Enter, false)
		waitStatus(t, ctx, 10*time.Second, "playing", "done")
		key(t, ctx, kb.Enter, false) // pause, or (at the end) start over
		tabTo(t, ctx, `[data-testid="pace"]`)
		key(t, ctx, kb.ArrowDown, false)
		waitJS(t, ctx, `document.querySelector('[data-testid="pace"]').value === '60'`, 5*time.Second)
		tabTo(t, ctx, `[data-testid="goto-slot"]`)
		do(t, ctx, chromedp.KeyEvent("100"), chromedp.KeyEvent(kb.Enter))
		waitJS(t, ctx, `/slot 100 /.test(document.querySelector('[data-testid="slots-desc"]').textContent)`, 10*time.Second)
		tabTo(t, ctx, `[data-testid="tour-next"]`)
		key(t, ctx, kb.Enter, false)
		waitJS(t, ctx, `/^stop \d+ of \d+$/.test(document.querySelector('[data-testid="tour-pos"]').textContent)`, 5*time.Second)
		// A term in a tour stop opens its entry from the keyboard.
		tabTo(t, ctx, `#tour-terms [data-term]`)
		waitJS(t, ctx, `!document.querySelector('[data-testid="glossary-popover"]').hidden`, 5*time.Second)
		tabTo(t, ctx, `[data-testid="colour-by"]`)
		key(t, ctx, kb.ArrowDown, false)
		waitJS(t, ctx, `document.querySelector('[data-testid="colour-by"]').value === 'segment'`, 5*time.Second)
		// The canvases take focus and scroll with the arrows (before the quiz: an open question hides the
		// SIT panel).
		tabTo(t, ctx, `#slots`)
		tabTo(t, ctx, `#sit`)
		tabTo(t, ctx, `[data-testid="quiz-toggle"]`)
		key(t, ctx, " ", false)
		waitJS(t, ctx, `document.querySelector('[data-testid="quiz-toggle"]').checked && new URLSearchParams(location.search).get('quiz') === '1'`, 5*time.Second)
		tabTo(t, ctx, `[data-testid="btn-present"]`)
		key(t, ctx, kb.Enter, false)
		waitJS(t, ctx, `document.body.classList.contains('present')`, 5*time.Second)
		// Back to the end with the keyboard alone: with the quiz on, End comes back to the
		// question not yet answered (issue 30); q turns the quiz off, and End goes to the end.
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
		key(t, ctx, kb.End, false)
		waitJS(t, ctx, `!document.getElementById('quiz').hidden && document.querySelector('[data-testid="quiz-score"]').textContent === '0/0' && document.querySelector('[data-testid="run-status"]').textContent === 'paused'`, 10*time.Second)
		key(t, ctx, "q", false)
		waitJS(t, ctx, `!document.querySelector('[data-testid="quiz-toggle"]').checked`, 5*time.Second)
		key(t, ctx, kb.End, false)
		waitStatus(t, ctx, 10*time.Second, "done")
	})

	t.Run("keyboard only: upload", func(t *testing.T) {
		img := makeGzImage(t)
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="upload-choose"]`)))
		if _, err := chromedp.Call(ctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
			t.Fatal(err)
		}
		chosen := make(chan page.EventFileChooserOpened, 1)
		go func() {
			for ev, err := range chromedp.Events(ctx, page.FileChooserOpened) {
				if err != nil {
					return
				}
				chosen <- ev
				return
			}
		}()
		tabTo(t, ctx, `[data-testid="upload-choose"]`)
		key(t, ctx, kb.Enter, false)
		select {
		case ev := <-chosen:
			if _, err := chromedp.Call(ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{img}, BackendNodeID: ev.BackendNodeID}); err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Enter on the upload button opened no file chooser")
		}
		waitJS(t, ctx, `!!document.querySelector('[data-testid="upload-link"]')`, time.Minute)
		// The new row is reachable too: Tab to its link and follow it with Enter.
		tabTo(t, ctx, `[data-testid="upload-link"]`)
		key(t, ctx, kb.Enter, false)
		do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="file-entry"][data-path="/hello/world.txt"]`)))
		do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="upload-choose"]`)))
		checkPageContrast(t, ctx, "images page")
	})

	t.Run("quiz to a score", func(t *testing.T) {
		o := outline(t, ts, bench)
		var qs []int
		for k, s := range o.Stops {
			if s.Question != nil {
				qs = append(qs, k)
			}
		}
		if len(qs) < 2 {
			t.Fatalf("bench64's tour has %d questions, want at least 2", len(qs))
		}
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "quiz": {"1"}, "colour": {"run"}})))
		waitStatus(t, ctx, 30*time.Second, "paused")
		if !js[bool](t, ctx, `document.querySelector('[data-testid="quiz-toggle"]').checked`) {
			t.Error("&quiz=1 did not turn the quiz on")
		}
		// Playing stops where the first question is asked.
		first := o.Stops[qs[0]].Question
		do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-play"]`)))
		waitJS(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="quiz-question"]').textContent === %q && document.querySelector('[data-testid="run-status"]').textContent === 'paused'`, first.Text), 15*time.Second)
		if s := stepShown(t, ctx); s < first.Ask || s >= first.Reveal {
			t.Errorf("the quiz stopped at step %d, outside the question's [%d, %d)", s, first.Ask, first.Reveal)
		}
		// The counters and calls stay hidden until the answer.
		if !js[bool](t, ctx, `document.body.classList.contains('veiled') && getComputedStyle(document.querySelector('[data-testid="stat-calls-batched"]')).visibility === 'hidden'`) {
			t.Error("counters visible while a question is open")
		}
		screenshot(t, ctx, "run-quiz")
		// Right, by a choice button when there are choices.
		if first.Kind == "choice" || first.Kind == "yesno" {
			do(t, ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="quiz-choice"][data-value=%q]`, first.Answer))))
		} else {
			do(t, ctx, chromedp.SetValue(chromedp.CSS(`[data-testid="quiz-answer"]`), first.Answer), chromedp.Click(chromedp.CSS(`[data-testid="quiz-submit"]`)))
		}
		waitJS(t, ctx, `document.querySelector('[data-testid="quiz-result"]').textContent === 'correct' && document.querySelector('[data-testid="quiz-score"]').textContent === '1/1'`, 10*time.Second)
		waitJS(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="step"]').textContent.replace(/,/g, '') === '%d'`, first.Reveal), 10*time.Second)
		if js[bool](t, ctx, `document.body.classList.contains('veiled')`) {
			t.Error("counters still hidden after the answer")
		}
		// Wrong: one n goes to the next question, where it is asked (n stops at every question).
		second := o.Stops[qs[1]].Question
		key(t, ctx, "n", false)
		waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="quiz-question"]').textContent === %q && (!document.querySelector('[data-testid="quiz-answer"]').disabled || !!document.querySelector('[data-testid="quiz-choice"]:not(:disabled)'))`, second.Text), 10*time.Second,
			`document.querySelector('[data-testid="quiz-question"]').textContent + ' | step ' + document.querySelector('[data-testid="step"]').textContent + ' | ' + document.querySelector('[data-testid="tour-pos"]').textContent`)
		if s := stepShown(t, ctx); s != second.Ask {
			t.Errorf("n opened the second question at step %d, want its ask step %d", s, second.Ask)
		}
		wrong := "no"
		if second.Answer == "no" {
			wrong = "yes"
		} else if second.Kind == "number" {
			wrong = "12345"
		}
		if second.Kind == "number" {
			do(t, ctx, chromedp.Focus(chromedp.CSS(`[data-testid="quiz-answer"]`)), chromedp.KeyEvent(wrong), chromedp.KeyEvent(kb.Enter))
		} else { // yes/no and choices are pressed, not typed (issue 20)
			if second.Kind == "choice" {
				for _, c := range second.Choices {
					if c != second.Answer {
						wrong = c
						break
					}
				}
			}
			// The pointer rests where the first answer was pressed, maybe over a term of the stop's
			// text: its entry is placed clear of the choices, which take the click.
			if c := popoverOverChoices(t, ctx); c != "" {
				t.Errorf("the glossary entry covers the quiz: %s", c)
			}
			do(t, ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="quiz-choice"][data-value=%q]`, wrong))))
		}
		waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="quiz-result"]').textContent === %q && document.querySelector('[data-testid="quiz-score"]').textContent === '1/2'`, "wrong: "+second.Answer), 10*time.Second,
			`[document.querySelector('[data-testid="quiz-result"]').textContent, document.querySelector('[data-testid="quiz-score"]').textContent, document.querySelector('[data-testid="quiz-hint"]').textContent, document.querySelector('[data-testid="quiz-question"]').textContent, document.querySelector('[data-testid="step"]').textContent, document.querySelector('[data-testid="tour-pos"]').textContent].join(' | ')`)
		waitJS(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="step"]').textContent.replace(/,/g, '') === '%d'`, second.Reveal), 10*time.Second)
		// Slider markers of the calls stay hidden in a quiz; they return without it.
		key(t, ctx, "q", false)
		waitJS(t, ctx, `!document.querySelector('[data-testid="quiz-toggle"]').checked`, 5*time.Second)
	})

	t.Run("the end: summary and outcome", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "run": {"end"}, "colour": {"run"}})))
		waitStatus(t, ctx, time.Minute, "done")
		waitJS(t, ctx, `document.querySelector('[data-testid="counters-panel"]').dataset.final === 'true'`, 5*time.Second)
		for id, want := range map[string]string{
			"sum-calls-pb": "16,384", "sum-calls-bt": "19", "sum-locks-pb": "16,384", "sum-locks-bt": "19",
			"sum-slots-before": "16,384 · 0 · 0", "sum-slots-now": "0 · 16,384 · 0",
			"sum-sit-before": "16,384", "sum-sit-bt": "0", "sum-prefree-bt": "32",
			"cost-pb": "16.4 ms", "cost-bt": "10.0 ms",
		} {
			if got := text(t, ctx, id); got != want {
				t.Errorf("%s = %q, want %q", id, got, want)
			}
		}
		if f := text(t, ctx, "cost-formula"); f != "t = 0.611 µs × blocks + 0.393 µs × calls" {
			t.Errorf("cost formula %q", f)
		}
		if o := text(t, ctx, "outcome"); !strings.Contains(o, "returns 0") || !strings.Contains(o, "862× fewer SIT lock holds") {
			t.Errorf("outcome %q", o)
		}
		screenshot(t, ctx, "run-end")
		do(t, ctx, chromedp.Click(chromedp.CSS(`#cost-source-link`)))
		if src := text(t, ctx, "cost-source"); !strings.Contains(src, "16.436") || !strings.Contains(src, "10.011") {
			t.Errorf("the model's source %q does not name the measurement", src)
		}
		do(t, ctx, chromedp.Click(chromedp.CSS(`#cost-source-link`)))
		checkPageContrast(t, ctx, "player at the end")
		fits(t, ctx)
		do(t, ctx, chromedp.EmulateViewport(1024, 768))
		// The page at its new size, and the frames its resize observers draw after it.
		waitJS(t, ctx, `innerWidth === 1024 && innerHeight === 768`, 10*time.Second)
		settle(t, ctx)
		fits(t, ctx)
	})

	t.Run("compressed file", func(t *testing.T) {
		id := addCompressedImage(t, ts)
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(base+"/images/"+id), chromedp.WaitVisible(chromedp.CSS(`[data-testid="file-tree"]`)))
		if got := text(t, ctx, "file-compressed"); got != "compressed (lz4, cluster 4 blocks)" {
			t.Errorf("tree says %q", got)
		}
		do(t, ctx, chromedp.Navigate(base+"/images/"+id+"/file?path=/c/z.bin"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="file-compressed"]`)))
		if got := text(t, ctx, "file-compressed"); !strings.HasPrefix(got, "compressed (lz4, cluster 4 blocks)") || !strings.Contains(got, "EOPNOTSUPP") {
			t.Errorf("file page says %q", got)
		}
		do(t, ctx, chromedp.Navigate(base+"/images/"+id+"/run?"+url.Values{"path": {"/c/z.bin"}, "mode": {"both"}}.Encode()))
		waitStatus(t, ctx, 30*time.Second, "paused")
		// Before the first step the page already says why the kernel will refuse.
		if got := text(t, ctx, "outcome"); !strings.Contains(got, "compressed and pinned files") {
			t.Errorf("at step 0 the outcome line says %q", got)
		}
		key(t, ctx, kb.End, false)
		waitStatus(t, ctx, 30*time.Second, "EOPNOTSUPP")
		if got := text(t, ctx, "outcome"); !strings.Contains(got, "compressed and pinned files") || !strings.Contains(got, "compressed (lz4, cluster 4 blocks)") {
			t.Errorf("outcome %q does not say why", got)
		}
		if got := text(t, ctx, "file-compressed"); got != "compressed (lz4, cluster 4 blocks)" {
			t.Errorf("player says %q", got)
		}
		if !js[bool](t, ctx, `/COMPRESS_ADDR.*compressed-cluster marker/.test(document.querySelector('[data-testid="legend"]').textContent)`) {
			t.Error("the legend does not call COMPRESS_ADDR the compressed-cluster marker")
		}
	})
}

// waitJSOr waits until expr is truthy; on a timeout it fails with what the page shows (show, an
// expression).
func waitJSOr(t *testing.T, ctx context.Context, expr string, timeout time.Duration, show string) {
	t.Helper()
	if err := pollJS(ctx, expr, timeout); err != nil {
		t.Fatalf("waiting for %s: %v; the page shows %s", expr, err, js[string](t, ctx, show))
	}
}

// checkPageContrast fails for every visible text on the page below 4.5:1.
func checkPageContrast(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	for _, b := range js[[]string](t, ctx, pageContrast) {
		t.Errorf("%s: contrast below 4.5:1: %s", where, b)
	}
}

// addCompressedImage builds an image holding /c/z.bin, a 64-block file marked compressed (lz4,
// 4-block clusters) the way f2fs marks one — F2FS_COMPR_FL in i_flags, i_compress_algorithm,
// i_log_cluster_size — on a volume made with the compression feature, and adds it to the server.
// Its clusters stay uncompressed (a cluster f2fs could not shrink is stored so); f2fs refuses
// ZERO_RANGE on the file all the same.
func addCompressedImage(t *testing.T, ts *testServer) string {
	t.Helper()
	raw := makeF2FS(t, 64<<20, map[string][]byte{"c/z.bin": bytes.Repeat([]byte("zrviz compressed\n"), 64*4096/17+1)[:64*4096]},
		"-O", "extra_attr,compression")
	im, err := imgio.OpenFileContext(context.Background(), raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := im.Lookup("/c/z.bin")
	if err != nil {
		t.Fatal(err)
	}
	at := int64(f.Inode().Blkaddr) * 4096
	im.Close()
	fh, err := os.OpenFile(raw, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var flags [4]byte
	if _, err := fh.ReadAt(flags[:], at+0x50); err != nil { // i_flags
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(flags[:], binary.LittleEndian.Uint32(flags[:])|0x4) // F2FS_COMPR_FL
	for _, w := range []struct {
		off int64
		b   []byte
	}{{0x50, flags[:]}, {0x188, []byte{1, 2}}} { // i_compress_algorithm = COMPRESS_LZ4, i_log_cluster_size = 2
		if _, err := fh.WriteAt(w.b, at+w.off); err != nil {
			t.Fatal(err)
		}
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	img, err := imgio.OpenFileContext(context.Background(), raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.AddImage("compressed", "compressed.img", img); err != nil {
		t.Fatal(err)
	}
	return "compressed"
}
