package web

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/zrviz/zrviz/player"
)

// Presenter mode on real projectors (issue 30, the lecture hall): at 1024×768, 1280×720, 1366×768,
// 1600×900 and 1920×1080 the run page with present=1 shows the slot strip, the SIT panel, the counters
// and the tour on one screen, every label at 18 px or more, nothing cut, nothing over anything else.
// What does not fit is dropped (and comes back with the "all panels" button), never squeezed.
// ZRVIZ_SCREENSHOTS=1 writes docs/screenshots/run-present-<w>x<h>.png at a tour stop.

// presentSizes are the screens presenter mode is laid out for: a 4:3 projector, the two common
// widescreen projectors and laptops, and two large screens.
var presentSizes = []struct{ w, h int64 }{{1024, 768}, {1280, 720}, {1366, 768}, {1600, 900}, {1920, 1080}}

// presentMinCanvas is the least height, in CSS pixels, of the slot and SIT canvases in presenter
// mode: the slot panel's three lanes (whole range, cursor, chunks) and two SIT rows at 18 px type.
const presentMinCanvas = 120

// presentLayout measures the page as it is and returns what breaks presenter mode's layout, one
// line per fault (empty when none):
//   - the slot and SIT canvases: at least min px high, wholly inside the viewport and every box
//     that clips them;
//   - the counters (headline figures, table, model line) and the tour (position, title, text,
//     terms, the quiz when open): wholly visible, the tour's text not scrolled;
//   - every visible text: 18 px or more; not cut (scrollWidth/scrollHeight beyond the box of an
//     element that clips, an ellipsis); each line inside the viewport, inside every box that
//     clips it and inside its panel (no spilling under a neighbour);
//   - no two text lines, icons or canvases overlap (the "next call" label over its icon).
const presentLayout = `((minFont, min, page) => {
  // With "all panels" the page scrolls down: the bounds are then the page's, not the viewport's.
  // A quiz's open question veils the SIT and the counters (they would answer it): hidden on purpose.
  const veiled = document.body.classList.contains('veiled');
  const W = innerWidth, H = page ? document.documentElement.scrollHeight - scrollY : innerHeight, T = page ? -scrollY : 0;
  const out = [];
  const nm = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const rs = (r) => '[' + [r.left, r.top, r.right, r.bottom].map(Math.round).join(',') + ']';
  const shown = (el) => el.checkVisibility({ visibilityProperty: true, opacityProperty: true }) && !el.closest('.sr-only, .hidden-metric, .skip:not(:focus), .popover, .tooltip');
  // The rectangle el can be seen in: the viewport cut by every ancestor that clips.
  const clip = (el) => {
    let c = { left: 0, top: T, right: W, bottom: H };
    for (let p = el.parentElement; p && p !== document.documentElement; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const b = p.getBoundingClientRect();
      c = { left: Math.max(c.left, b.left), top: Math.max(c.top, b.top), right: Math.min(c.right, b.right), bottom: Math.min(c.bottom, b.bottom) };
    }
    return c;
  };
  const inside = (r, c) => r.left >= c.left - 1 && r.top >= c.top - 1 && r.right <= c.right + 1 && r.bottom <= c.bottom + 1;
  const whole = (sel) => {
    const el = document.querySelector(sel);
    if (!el || !shown(el)) { out.push(sel + ' is not shown'); return null; }
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) { out.push(sel + ' is empty ' + rs(r)); return null; }
    if (!inside(r, clip(el))) out.push(sel + ' ' + rs(r) + ' not wholly visible in ' + rs(clip(el)));
    return r;
  };
  for (const sel of veiled ? ['#slots'] : ['#slots', '#sit']) {
    const r = whole(sel);
    if (r && r.height < min) out.push(sel + ' is ' + Math.round(r.height) + ' px high, want ' + min);
  }
  // A quiz's open question veils the counters (they would answer it): the table is then hidden on
  // purpose, and the veil's line says so.
  for (const sel of [veiled ? '.counters .quiz-veil' : '[data-testid="summary"]', '#tour-pos', '[data-testid="tour-next"]', '[data-testid="tour-prev"]']) whole(sel);
  // What the preset may drop (checked shown by the "all panels" part of the test) and the tour's
  // parts that are empty at some stops: whole when shown.
  for (const sel of ['#counters-big', '[data-testid="cost-model"]', '#tour-title', '#tour-text', '#tour-terms', '#quiz']) {
    const el = document.querySelector(sel);
    if (el && shown(el) && el.textContent.trim() !== '') whole(sel);
  }
  const body = document.getElementById('tour-body');
  if (body.scrollHeight > body.clientHeight + 1) out.push('the tour scrolls: ' + body.scrollHeight + ' px of text in ' + body.clientHeight);

  const boxes = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('option, select, script, style, template')) continue;
    const texts = [...el.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (el.matches('svg.icon, canvas') && shown(el)) { const r = el.getBoundingClientRect(); if (r.width > 0 && r.height > 0) boxes.push({ el, r, what: nm(el) }); }
    if (!texts.length || !shown(el)) continue;
    const s = getComputedStyle(el);
    const say = nm(el) + ' "' + el.textContent.trim().replace(/\s+/g, ' ').slice(0, 40) + '"';
    if (parseFloat(s.fontSize) < minFont) out.push(say + ' at ' + s.fontSize);
    if (s.display !== 'inline') {
      if (s.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1) out.push(say + ' cut: ' + el.scrollWidth + ' px wide in ' + el.clientWidth);
      if (s.overflowY !== 'visible' && el.scrollHeight > el.clientHeight + 1) out.push(say + ' cut: ' + el.scrollHeight + ' px high in ' + el.clientHeight);
      if (s.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1) out.push(say + ' ends in an ellipsis');
    }
    const c = clip(el);
    const panel = el.closest('.panel, header.top');
    const pr = panel && panel.getBoundingClientRect();
    for (const t of texts) {
      const rg = document.createRange();
      rg.selectNodeContents(t);
      for (const r of rg.getClientRects()) {
        if (r.width < 1 || r.height < 1) continue;
        if (!inside(r, c)) out.push(say + ': a line at ' + rs(r) + ' is cut by ' + rs(c));
        else if (pr && !inside(r, pr)) out.push(say + ': a line at ' + rs(r) + ' spills out of its panel ' + rs(pr));
        boxes.push({ el, r, what: say });
      }
    }
  }
  const seen = new Set();
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.el === b.el || a.el.contains(b.el) && a.el.matches('svg, canvas') || b.el.contains(a.el) && b.el.matches('svg, canvas')) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 1 && h > 2) {
        const k = a.what + ' | ' + b.what;
        if (!seen.has(k)) { seen.add(k); out.push('overlap: ' + a.what + ' ' + rs(a.r) + ' and ' + b.what + ' ' + rs(b.r)); }
      }
    }
  }
  return out;
})`

// canvasTextRecorder is installed before a page's scripts: it records the size of every font the
// page's own canvases draw text with (as canvasFontRecorder does) and, per canvas, the box of every
// text drawn since the canvas was last cleared whole: what the canvas shows now.
const canvasTextRecorder = `(() => {
  window.__canvasFonts = [];
  window.__canvasTexts = new Map();
  const P = CanvasRenderingContext2D.prototype;
  const fillText = P.fillText, clearRect = P.clearRect;
  P.clearRect = function (x, y, w, h) {
    if (this.canvas && this.canvas.isConnected) {
      const m = this.getTransform();
      if (x <= 0 && y <= 0 && (x + w) * m.a + m.e >= this.canvas.width - 1 && (y + h) * m.d + m.f >= this.canvas.height - 1) window.__canvasTexts.set(this.canvas, []);
    }
    return clearRect.call(this, x, y, w, h);
  };
  P.fillText = function (text, x, y, maxWidth) {
    if (this.canvas && this.canvas.isConnected && String(text).trim() !== '') {
      window.__canvasFonts.push(parseFloat(this.font.replace(/^\D*?(\d)/, '$1')) + ' ' + text);
      const t = this.measureText(text);
      const k = maxWidth !== undefined && t.width > maxWidth ? maxWidth / t.width : 1;
      const m = this.getTransform();
      const list = window.__canvasTexts.get(this.canvas) || [];
      list.push({ text: String(text), left: (x - t.actualBoundingBoxLeft * k) * m.a + m.e, right: (x + t.actualBoundingBoxRight * k) * m.a + m.e,
        top: (y - t.actualBoundingBoxAscent) * m.d + m.f, bottom: (y + t.actualBoundingBoxDescent) * m.d + m.f });
      window.__canvasTexts.set(this.canvas, list);
    }
    return fillText.call(this, text, x, y, maxWidth);
  };
})()`

// canvasTextFaults lists the texts the page's visible canvases show now that are cut by the
// canvas's edge or drawn over another text of the same canvas.
const canvasTextFaults = `(() => {
  const out = [];
  for (const [c, list] of window.__canvasTexts) {
    if (!c.isConnected || !c.checkVisibility()) continue;
    const name = 'canvas#' + c.id;
    for (const b of list) {
      if (b.left < -1 || b.top < -1 || b.right > c.width + 1 || b.bottom > c.height + 1) out.push(name + ': "' + b.text + '" cut by the canvas edge');
    }
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i], b = list[j];
        if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1) out.push(name + ': "' + a.text + '" over "' + b.text + '"');
      }
    }
  }
  return [...new Set(out)];
})()`

// checkPresentLayout fails the test with each fault presentLayout finds, and when the page scrolls
// (with all panels shown, when it scrolls sideways).
func checkPresentLayout(t *testing.T, ctx context.Context, where string, allPanels bool) {
	t.Helper()
	settle(t, ctx)
	faults := js[[]string](t, ctx, fmt.Sprintf("%s(18, %d, %t)", presentLayout, presentMinCanvas, allPanels))
	for i, f := range faults {
		if i == 12 {
			t.Errorf("%s: … and %d more", where, len(faults)-i)
			break
		}
		t.Errorf("%s: %s", where, f)
	}
	if got := js[[]int](t, ctx, `[document.documentElement.scrollWidth, document.documentElement.scrollHeight, innerWidth, innerHeight]`); got[0] > got[2] || got[1] > got[3] && !allPanels {
		t.Errorf("%s: the page is %d×%d in a %d×%d viewport: it scrolls", where, got[0], got[1], got[2], got[3])
	}
	t.Logf("%s: slot canvas %s", where, js[string](t, ctx, `['slots', 'sit'].map((id) => Math.round(document.getElementById(id).getBoundingClientRect().height) + ' px').join(', SIT canvas ')`))
	for _, f := range js[[]string](t, ctx, canvasTextFaults) {
		t.Errorf("%s: %s", where, f)
	}
	// The canvases' own labels: 18 px or more since the last check.
	for _, f := range js[[]string](t, ctx, `window.__canvasFonts.splice(0)`) {
		if px, _ := strconv.ParseFloat(strings.Fields(f)[0], 64); px < 18 {
			t.Errorf("%s: canvas text below 18 px: %s", where, f)
			break
		}
	}
}

func TestBrowserPresenterLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium at five sizes")
	}
	t.Parallel()
	src := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	o := outline(t, ts, url.Values{"image": {DemoID}, "path": {"/seed/bench64.bin"}, "mode": {"both"}})
	if len(o.Stops) < 3 {
		t.Fatalf("bench64's tour has %d stops, want at least 3", len(o.Stops))
	}
	for _, vp := range presentSizes {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			ctx := tab(t)
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: canvasTextRecorder}); err != nil {
				t.Fatal(err)
			}
			do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h))
			do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "present": {"1"}})))
			waitStatus(t, ctx, 30*time.Second, "paused")
			waitJS(t, ctx, `document.body.classList.contains('present')`, 5*time.Second)
			size := fmt.Sprintf("%d×%d", vp.w, vp.h)
			waitJS(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="tour-title"]').textContent === %q`, o.Stops[0].Title), 10*time.Second)
			checkPresentLayout(t, ctx, size+" at the start", false)
			// Every stop of the tour, opened as a clicker opens it (Page Down), each checked once its
			// step is drawn. The start shows the first stop; two stops at one step open as one (the
			// page shows the later).
			for k, presses := 1, 0; k < len(o.Stops); presses++ {
				if presses >= len(o.Stops) {
					t.Fatalf("%s: %d presses of Page Down did not reach the last stop", size, presses)
				}
				k = pageDownStop(t, ctx, o, k)
				stop := o.Stops[k-1]
				checkPresentLayout(t, ctx, fmt.Sprintf("%s at stop %d (%s)", size, k, stop.Title), false)
				if k == 4 {
					// What is dropped or moved must not cost contrast or a name (axe-core).
					checkPageContrast(t, ctx, fmt.Sprintf("%s at stop %d", size, k))
					axeCheck(t, ctx, src, fmt.Sprintf("%s at stop %d", size, k))
					shot(t, ctx, fmt.Sprintf("run-present-%dx%d", vp.w, vp.h))
				}
			}
			key(t, ctx, kb.End, false)
			waitStatus(t, ctx, 30*time.Second, "done")
			checkPresentLayout(t, ctx, size+" at the end", false)

			// What the preset dropped comes back with "all panels", under the four: the page may then
			// scroll down, never sideways, and still nothing is cut, small or overlapping. Where
			// nothing is dropped (1920×1080) the button is not offered.
			dropped := js[[]string](t, ctx, presentDropped)
			offered := js[bool](t, ctx, `!!document.querySelector('[data-testid="btn-panels"]').offsetParent`)
			if offered != (len(dropped) > 0) {
				t.Fatalf("%s: \"all panels\" offered %t with %v dropped", size, offered, dropped)
			}
			t.Logf("%s: presenter mode drops %v", size, dropped)
			if !offered {
				return
			}
			do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-panels"]`)))
			waitJS(t, ctx, `document.querySelector('[data-testid="btn-panels"]').getAttribute('aria-pressed') === 'true' && document.body.classList.contains('all-panels')`, 5*time.Second)
			if still := js[[]string](t, ctx, presentDropped); len(still) > 0 {
				t.Errorf("%s with all panels: still hidden: %v", size, still)
			}
			checkPresentLayout(t, ctx, size+" with all panels", true)
			// Pressed again, the four have the screen to themselves again.
			do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-panels"]`)))
			waitJS(t, ctx, `document.querySelector('[data-testid="btn-panels"]').getAttribute('aria-pressed') === 'false'`, 5*time.Second)
			if again := js[[]string](t, ctx, presentDropped); strings.Join(again, " ") != strings.Join(dropped, " ") {
				t.Errorf("%s: after all panels and back, %v dropped, want %v", size, again, dropped)
			}
			checkPresentLayout(t, ctx, size+" after all panels and back", false)
		})
	}
}

// pageDownStop presses Page Down (a clicker's next) on a page at tour stop k (1-based) and returns the
// stop it opens once that stop's step is drawn: a later one than k+1 when stops share a step.
func pageDownStop(t *testing.T, ctx context.Context, o *player.Outline, k int) int {
	t.Helper()
	const show = `['tour-pos', 'tour-title', 'run-status', 'step'].map((id) => document.querySelector('[data-testid="' + id + '"]').textContent).join(' | ')`
	key(t, ctx, kb.PageDown, false)
	waitJSOr(t, ctx, fmt.Sprintf(`(() => { const m = /^stop (\d+) of %d$/.exec(document.querySelector('[data-testid="tour-pos"]').textContent); return m && Number(m[1]) > %d; })()`, len(o.Stops), k), 30*time.Second, show)
	k, err := strconv.Atoi(strings.Fields(text(t, ctx, "tour-pos"))[1])
	if err != nil {
		t.Fatal(err)
	}
	stop := o.Stops[k-1]
	waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="tour-title"]').textContent === %q && document.querySelector('[data-testid="step"]').textContent.replace(/,/g, '') === '%d' && ['paused', 'done'].includes(document.querySelector('[data-testid="run-status"]').textContent)`, stop.Title, stop.Step), 30*time.Second, show)
	return k
}

// presentDropped lists the parts of the run page, beyond the four presenter mode keeps, that are not
// shown: what the projector preset drops at this size.
const presentDropped = `['header.top', '.calls', '.narr', '.legendbar .legend', '.legendbar .keys', '.legendbar .glossary-link',
  '.sessionbar', '#slots-mode', '#sit-mode', '.slots .slot-links', '.controls .gotoslot', '#time-left', '#run-status',
  '.tourp .tourcount', '#tour-terms', '#counters-big', '[data-testid="cost-model"]']
  .filter((sel) => { const el = document.querySelector(sel); return el && !el.checkVisibility(); })`

// TestBrowserPresenterRoom: presenter mode in a room on a projector. The room's line (its code and
// link for the class, a follower's detach) is not dropped; the layout still holds, on the
// presenter's page and on a follower's in presenter mode (a second screen in the hall).
func TestBrowserPresenterRoom(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium, two tabs at five sizes")
	}
	t.Parallel()
	tab := browser(t)
	for _, vp := range presentSizes {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			// A server a size: one client may hold only a few rooms at once.
			ts := mustOpenServer(t, Config{})
			base := ts.ts.URL
			o := outline(t, ts, url.Values{"image": {DemoID}, "path": {"/seed/bench64.bin"}, "mode": {"both"}})
			size := fmt.Sprintf("%d×%d", vp.w, vp.h)
			pres := tab(t)
			if _, err := chromedp.Call(pres, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: canvasTextRecorder}); err != nil {
				t.Fatal(err)
			}
			do(t, pres, chromedp.EmulateViewport(vp.w, vp.h))
			do(t, pres, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "present": {"1"}})))
			waitStatus(t, pres, 30*time.Second, "paused")
			// Where the room's bar is dropped, "all panels" shows its "start a room"; the room then
			// keeps its bar when the four have the screen again.
			panels := js[bool](t, pres, `!!document.querySelector('[data-testid="btn-panels"]').offsetParent`)
			if panels {
				do(t, pres, chromedp.Click(chromedp.CSS(`[data-testid="btn-panels"]`)))
				waitJS(t, pres, `document.querySelector('[data-testid="btn-panels"]').getAttribute('aria-pressed') === 'true'`, 5*time.Second)
			}
			code := pressRoomStart(t, pres)
			if panels {
				do(t, pres, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="btn-panels"]').click()`))
				waitJS(t, pres, `document.querySelector('[data-testid="btn-panels"]').getAttribute('aria-pressed') === 'false'`, 5*time.Second)
			}
			if !js[bool](t, pres, `document.querySelector('[data-testid="room-code"]').checkVisibility()`) {
				t.Errorf("%s: the room's code is not shown in presenter mode", size)
			}
			// On to the stop where a run is pending over the lane (its label between the strips).
			pageDownStop(t, pres, o, pageDownStop(t, pres, o, 1))
			checkPresentLayout(t, pres, size+", the presenter's page in a room", false)
			checkPageContrast(t, pres, size+", the presenter's page in a room")

			fol := tab(t)
			if _, err := chromedp.Call(fol, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: canvasTextRecorder}); err != nil {
				t.Fatal(err)
			}
			do(t, fol, chromedp.EmulateViewport(vp.w, vp.h))
			do(t, fol, chromedp.Navigate(base+"/follow/"+code+"?present=1"))
			waitJSOr(t, fol, `document.body.classList.contains('present') && document.querySelector('[data-testid="room-status"]').textContent === 'following the presenter'`, 30*time.Second,
				`document.body.className + ' | ' + document.querySelector('[data-testid="room-status"]').textContent`)
			waitJS(t, fol, fmt.Sprintf(`document.querySelector('[data-testid="tour-pos"]').textContent === %q`, text(t, pres, "tour-pos")), 30*time.Second)
			if !js[bool](t, fol, `document.querySelector('[data-testid="room-detach"]').checkVisibility()`) {
				t.Errorf("%s: a follower in presenter mode has no detach button", size)
			}
			checkPresentLayout(t, fol, size+", a follower's page", false)
		})
	}
}

// TestBrowserPresenterQuiz: presenter mode with the quiz on, on a projector: a question open (the
// choices or the answer box, the veils over what would answer it) and then answered (the verdict,
// the stop's text) still fit the tour panel and the screen at the five sizes.
func TestBrowserPresenterQuiz(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium at five sizes")
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
	for _, vp := range presentSizes {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			size := fmt.Sprintf("%d×%d", vp.w, vp.h)
			ctx := tab(t)
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: canvasTextRecorder}); err != nil {
				t.Fatal(err)
			}
			do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h))
			do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}, "present": {"1"}, "quiz": {"1"}})))
			waitStatus(t, ctx, 30*time.Second, "paused")
			for n, k := range qs[:2] {
				q := o.Stops[k].Question
				seekTo(t, ctx, q.Ask)
				waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="quiz-question"]').textContent === %q && document.body.classList.contains('veiled') && document.querySelector('[data-testid="run-status"]').textContent === 'paused'`, q.Text), 30*time.Second,
					`document.querySelector('[data-testid="quiz-question"]').textContent + ' | ' + document.body.className`)
				checkPresentLayout(t, ctx, fmt.Sprintf("%s, question %d asked", size, n+1), false)
				// Answered (right or wrong, the layout is the same): the verdict, then the stop.
				do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const b = document.querySelector('#quiz-choices button[data-value=%q]'); if (b) b.click(); else { document.getElementById('quiz-answer').value = %q; document.getElementById('quiz-submit').click(); } })()`, q.Answer, q.Answer)))
				waitJSOr(t, ctx, `document.querySelector('[data-testid="quiz-result"]').textContent !== '' && !document.body.classList.contains('veiled') && document.querySelector('[data-testid="run-status"]').textContent === 'paused'`, 30*time.Second,
					`document.querySelector('[data-testid="quiz-result"]').textContent + ' | ' + document.body.className + ' | ' + document.querySelector('[data-testid="run-status"]').textContent`)
				checkPresentLayout(t, ctx, fmt.Sprintf("%s, question %d answered", size, n+1), false)
			}
		})
	}
}
