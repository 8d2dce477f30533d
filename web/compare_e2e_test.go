package web

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// compareWant is what core.Simulate says a run of the compare page makes in the batched mode
// (simulateAfter).
func compareWant(t *testing.T, path string, offset, length int64, before []string, op core.Op) *core.Result {
	t.Helper()
	return simulateAfter(t, request.Run{Path: path, Op: op, Offset: offset, Length: length, HasLength: true}, before, core.Batched)
}

// simulateAfter computes run afresh from the demo image in mode: the operations before it run on one
// mount (source.NewSeq, source.RunOps), its range is written back (PrepareZero), then core.Simulate.
func simulateAfter(t *testing.T, run request.Run, before []string, mode core.Mode) *core.Result {
	t.Helper()
	ctx := context.Background()
	img, err := imgio.OpenFileContext(ctx, testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	f, err := img.Lookup(run.Path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := source.FileInput(img, f)
	if err != nil {
		t.Fatal(err)
	}
	var ops []request.Op
	for _, line := range before {
		o, err := request.ParseOp(line)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, o)
	}
	q, err := source.NewSeq(ctx, img, core.PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	if err := source.RunOps(ctx, q, img, ops, nil); err != nil {
		t.Fatal(err)
	}
	in = q.File(in)
	req := run.Request(in.Inode.Size)
	in, _, err = core.NewSeq(core.PerBlock).PrepareZero(in, req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := core.Simulate(in, req, mode)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestBrowserCompare plays the compare page to its end in headless Chromium with its one set of
// controls and holds each side's call count, SIT lock acquisitions and blocks invalidated to
// core.Simulate's for that op in the batched mode: over /cases/holes.bin's data-hole-data range
// (a NULL slot ends the punch's run: one call against two), over prealloc.bin and over a range a
// zero preallocated first (every NEW_ADDR slot is a punch call of its own). axe-core finds nothing serious at a
// laptop's, a projector's and a phone's size; ZRVIZ_SCREENSHOTS=1 writes compare-WxH.png.
func TestBrowserCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	axe := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL

	for _, tc := range []struct {
		name           string
		path           string
		offset, length int64
		before         []string
		shots          bool
	}{
		{name: "holes", path: "/cases/holes.bin", offset: 0, length: 786432, shots: true},
		// NEW_ADDR slots between written pages: the zero's one run, a punch call per NEW_ADDR slot.
		{name: "prealloc", path: "/cases/prealloc.bin", offset: 0, length: 1 << 20},
		// A length of 0: both calls refused (EINVAL) before a slot is walked; the page still plays
		// to the end, where each side says so.
		{name: "empty range", path: "/cases/holes.bin", offset: 0, length: 0},
		{name: "after a zero", path: "/cases/contiguous.bin", offset: 0, length: 1 << 20,
			before: []string{"zero /cases/contiguous.bin 0 1048576"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tab(t)
			q := url.Values{"image": {"demo"}, "path": {tc.path}, "offset": {strconv.FormatInt(tc.offset, 10)},
				"length": {strconv.FormatInt(tc.length, 10)}, "before": tc.before}
			do(t, ctx, chromedp.EmulateViewport(1366, 768), chromedp.Navigate(base+"/compare?"+q.Encode()))
			waitJS(t, ctx, `document.querySelector('[data-testid="cmp-status"]').textContent === 'paused'`, time.Minute)
			// Both sides start at step 0: nothing called yet.
			for _, op := range []string{"zero", "punch"} {
				if got := count(t, ctx, "calls-"+op); got != "0" {
					t.Errorf("%s: %s calls at the start, want 0", op, got)
				}
			}
			// One slot on with the keyboard moves both sides (the slider says where).
			do(t, ctx, chromedp.KeyEvent(kb.ArrowRight))
			waitJS(t, ctx, `document.getElementById('cmp-seek').value === '1'`, 10*time.Second)
			if tc.length > 0 {
				// On the focused slider too, one slot a key (not its own step as well).
				do(t, ctx, chromedp.Focus(chromedp.CSS(`#cmp-seek`)), chromedp.KeyEvent(kb.ArrowRight))
				settle(t, ctx)
				if got := js[string](t, ctx, `document.getElementById('cmp-seek').value`); got != "2" {
					t.Errorf("→ on the slider: position %s, want 2", got)
				}
			}
			// The slider takes both sides to one slot: for holes.bin, inside the hole, where the
			// punch's run has ended and the zero's goes on. (A range of no slots has only a start
			// and an end: the step above took it to the end.)
			if tc.length > 0 {
				do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('cmp-seek'); s.value = '100'; s.dispatchEvent(new Event('input')); })()`))
				waitJS(t, ctx, `document.getElementById('cmp-pos').textContent.startsWith('100 ')`, 10*time.Second)
			} else {
				// Back to the start, so that "done" below is the play's end.
				do(t, ctx, chromedp.KeyEvent(kb.Home))
				waitJS(t, ctx, `document.getElementById('cmp-seek').value === '0' && document.querySelector('[data-testid="cmp-status"]').textContent === 'paused'`, 10*time.Second)
			}
			if tc.shots {
				// The frames of both sides' seeks have come when both narrate a step past 0.
				waitJS(t, ctx, `[...document.querySelectorAll('.cmp-side [data-role="state"]')].every((e) => /^step [1-9]/.test(e.textContent))`, 10*time.Second)
				screenshot(t, ctx, "compare-hole-1366x768")
			}
			do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="cmp-play"]`)))
			waitJS(t, ctx, `document.querySelector('[data-testid="cmp-status"]').textContent === 'done'`, 2*time.Minute)

			var line []string
			for _, op := range []core.Op{core.OpZero, core.OpPunch} {
				want := compareWant(t, tc.path, tc.offset, tc.length, tc.before, op)
				errno := want.Errno
				if errno == "" {
					errno = "0"
				}
				if got := text(t, ctx, "state-"+op.String()); got != "done: returned "+errno {
					t.Errorf("%s: the side says %q, want done: returned %s", op, got, errno)
				}
				for id, n := range map[string]uint64{"calls-": want.Stats.Calls, "locks-": want.Stats.SITLockAcquisitions, "blocks-": want.Stats.BlocksInvalidated} {
					if got := count(t, ctx, id+op.String()); got != strconv.FormatUint(n, 10) {
						t.Errorf("%s%s = %q, want %d (core.Simulate, batched)", id, op, got, n)
					}
				}
				// The call log lists the side's latest calls (at most 16), numbered to the last.
				items := js[int](t, ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid="log-%s"] li').length`, op))
				if want := min(int(want.Stats.Calls), 16); items != want {
					t.Errorf("%s: %d calls in the log, want %d", op, items, want)
				}
				if want.Stats.Calls > 0 {
					if got := js[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('[data-testid="log-%s"] li')].pop().value`, op)); uint64(got) != want.Stats.Calls {
						t.Errorf("%s: the last call is numbered %d, want %d", op, got, want.Stats.Calls)
					}
				}
				line = append(line, fmt.Sprintf("%s: %s call", op, units.Group(int64(want.Stats.Calls))))
			}
			summary := text(t, ctx, "compare-summary")
			for _, w := range line {
				if !strings.Contains(summary, w) {
					t.Errorf("summary %q does not say %q", summary, w)
				}
			}
			if strings.Contains(summary, "so far") {
				t.Errorf("the summary at the end says %q", summary)
			}
			t.Logf("%s: %s", tc.name, summary)
			if tc.name == "prealloc" {
				// A NEW_ADDR call is named, not numbered.
				if log := text(t, ctx, "log-punch"); !strings.Contains(log, "f2fs_invalidate_blocks(NEW_ADDR, 1)") {
					t.Errorf("the punch's call log does not name NEW_ADDR: %q", log)
				}
				screenshot(t, ctx, "compare-prealloc-1366x768")
			}

			for _, v := range []struct{ w, h int64 }{{1366, 768}, {1920, 1080}, {390, 844}} {
				do(t, ctx, chromedp.EmulateViewport(v.w, v.h))
				settle(t, ctx)
				axeCheck(t, ctx, axe, fmt.Sprintf("compare %s at %d×%d", tc.name, v.w, v.h))
				// Nothing wider than the screen: the two sides stack on a phone.
				if w := js[int](t, ctx, `document.documentElement.scrollWidth`); int64(w) > v.w {
					t.Errorf("at %d×%d the page is %d px wide", v.w, v.h, w)
				}
				if tc.shots && v.w != 390 {
					screenshot(t, ctx, fmt.Sprintf("compare-%dx%d", v.w, v.h))
				}
			}

			// Home takes both sides back to step 0.
			do(t, ctx, chromedp.EmulateViewport(1366, 768), chromedp.KeyEvent(kb.Home))
			waitJS(t, ctx, `document.querySelector('[data-testid="calls-zero"]').dataset.count === '0' && document.querySelector('[data-testid="calls-punch"]').dataset.count === '0'`, 10*time.Second)
		})
	}
}

// compareSnapshot is what the compare page shows of both sides, as JSON: the position, each side's
// figures (plain digits), its latest calls, its narration and its step.
const compareSnapshot = `JSON.stringify({
	pos: document.getElementById('cmp-seek').value,
	sides: [...document.querySelectorAll('.cmp-side')].map((s) => ({
		op: s.dataset.op,
		figures: [...s.querySelectorAll('.cmp-counters .value')].map((v) => v.dataset.count ?? ''),
		log: [...s.querySelectorAll('.cmp-log li')].map((li) => li.value + ' ' + li.textContent),
		now: s.querySelector('[data-role="now"]').textContent,
		state: s.querySelector('[data-role="state"]').textContent,
	})),
})`

// TestBrowserComparePaths: any path through the compare page's controls (keys, buttons, the
// slider, in a seeded random order) shows what a fresh load of its address shows — the position is
// in the URL (&at=), and each side's figures, calls, narration and step are those of a page opened
// there. Over holes.bin (a NULL hole) and prealloc.bin (NEW_ADDR slots between written pages).
func TestBrowserComparePaths(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	for _, path := range []string{"/cases/holes.bin", "/cases/prealloc.bin"} {
		t.Run(path, func(t *testing.T) {
			r := rand.New(rand.NewPCG(28, uint64(len(path))))
			a, b := tab(t), tab(t)
			do(t, a, chromedp.Navigate(base+"/compare?"+url.Values{"image": {"demo"}, "path": {path}}.Encode()))
			waitJS(t, a, `document.querySelector('[data-testid="cmp-status"]').textContent === 'paused'`, time.Minute)
			n := js[int](t, a, `Number(document.getElementById('cmp-seek').max)`)
			if n <= 0 {
				t.Fatalf("the slider spans %d slots", n)
			}
			for round := range 6 {
				var did []string
				for range 1 + r.IntN(4) {
					switch k := r.IntN(6); k {
					case 0:
						do(t, a, chromedp.KeyEvent(kb.ArrowRight))
						did = append(did, "→")
					case 1:
						do(t, a, chromedp.KeyEvent(kb.ArrowLeft))
						did = append(did, "←")
					case 2:
						p := r.IntN(n + 1)
						do(t, a, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.getElementById('cmp-seek'); s.value = '%d'; s.dispatchEvent(new Event('input')); })()`, p)))
						did = append(did, fmt.Sprintf("slider %d", p))
					case 3:
						do(t, a, chromedp.KeyEvent(kb.Home))
						did = append(did, "Home")
					case 4:
						do(t, a, chromedp.KeyEvent(kb.End))
						did = append(did, "End")
					default:
						do(t, a, chromedp.Click(chromedp.CSS(`[data-testid="cmp-step"]`)))
						did = append(did, "step button")
					}
				}
				// The page has drawn what the controls did (two animation frames: its loop ran), and
				// the address has caught up with the position.
				settle(t, a)
				waitJS(t, a, `(new URLSearchParams(location.search).get('at') || '0') === document.getElementById('cmp-seek').value`, 10*time.Second)
				here := js[string](t, a, `location.href`)
				do(t, b, chromedp.Navigate(here))
				waitJS(t, b, `document.querySelector('[data-testid="cmp-status"]').textContent !== 'connecting'`, time.Minute)
				// Both pages show the same once each has the frames of its last controls: a condition
				// polled in both tabs, not a pause.
				deadline := time.Now().Add(30 * time.Second)
				var sa, sb string
				for {
					sa, sb = js[string](t, a, compareSnapshot), js[string](t, b, compareSnapshot)
					if sa == sb || time.Now().After(deadline) {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				if sa != sb {
					t.Fatalf("round %d after %v: the page shows\n%s\na fresh load of %s shows\n%s", round, did, sa, here, sb)
				}
			}
		})
	}
}

// TestBrowserComparePresenter: the compare view on a projector (issue 38). With &present=1 (and by
// the presenter button) at 1024×768, 1280×720, 1366×768 and 1920×1080, mid-run and at the end: the
// page does not scroll, nor does any part of it; no visible text is under 18 px; the legend names
// white, hatched and coloured slots; axe finds nothing serious.
func TestBrowserComparePresenter(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	axe := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	ctx := tab(t)
	q := url.Values{"image": {"demo"}, "path": {"/cases/holes.bin"}, "offset": {"0"}, "length": {"786432"}}
	do(t, ctx, chromedp.EmulateViewport(1366, 768), chromedp.Navigate(ts.ts.URL+"/compare?"+q.Encode()))
	waitJS(t, ctx, `document.querySelector('[data-testid="cmp-status"]').textContent === 'paused'`, time.Minute)
	if got := text(t, ctx, "compare-legend"); !strings.Contains(got, "white: NULL_ADDR") || !strings.Contains(got, "hatched: NEW_ADDR") || !strings.Contains(got, "coloured: a block") {
		t.Errorf("the legend reads %q", got)
	}
	// The button turns presenter mode on, and the address says so.
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="cmp-present"]`)))
	waitJS(t, ctx, `document.body.classList.contains('present') && new URLSearchParams(location.search).get('present') === '1'`, 5*time.Second)
	// Mid-run (inside the hole), then at the end.
	for _, at := range []string{"100", "end"} {
		if at == "end" {
			do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.body.focus()`), chromedp.KeyEvent(kb.End))
			waitJS(t, ctx, `document.querySelector('[data-testid="cmp-status"]').textContent === 'done'`, time.Minute)
		} else {
			do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('cmp-seek'); s.value = '100'; s.dispatchEvent(new Event('input')); })()`))
			waitJS(t, ctx, `[...document.querySelectorAll('.cmp-side [data-role="state"]')].every((e) => /^step [1-9]/.test(e.textContent))`, 10*time.Second)
		}
		for _, v := range []struct{ w, h int64 }{{1024, 768}, {1280, 720}, {1366, 768}, {1920, 1080}} {
			where := fmt.Sprintf("presenter compare at %s, %d×%d", at, v.w, v.h)
			do(t, ctx, chromedp.EmulateViewport(v.w, v.h))
			settle(t, ctx)
			if s := js[string](t, ctx, `(() => { const d = document.scrollingElement; return d.scrollHeight > innerHeight + 1 || d.scrollWidth > innerWidth + 1 ? d.scrollWidth + '×' + d.scrollHeight : ''; })()`); s != "" {
				t.Errorf("%s: the page is %s: it scrolls", where, s)
			}
			// A part of it that scrolls: a box whose content is larger than it and may scroll.
			if s := js[[]string](t, ctx, `[...document.querySelectorAll('main *')].filter((e) => { const cs = getComputedStyle(e); return /auto|scroll/.test(cs.overflowY + cs.overflowX) && (e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1) && e.offsetParent; }).map((e) => e.dataset.testid || e.id || e.className)`); len(s) > 0 {
				t.Errorf("%s: these scroll: %q", where, s)
			}
			// The smallest visible text.
			small := js[[]string](t, ctx, `(() => {
				const out = [];
				const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
				for (let n = w.nextNode(); n; n = w.nextNode()) {
					const el = n.parentElement;
					if (!n.textContent.trim() || !el || !el.getClientRects().length) continue;
					const cs = getComputedStyle(el);
					if (cs.visibility === 'hidden' || parseFloat(cs.fontSize) >= 18) continue;
					out.push(parseFloat(cs.fontSize) + 'px: ' + n.textContent.trim().slice(0, 40) + ' (' + (el.dataset.testid || el.id || el.className || el.tagName) + ')');
				}
				return out;
			})()`)
			if len(small) > 0 {
				t.Errorf("%s: text under 18 px: %q", where, small[:min(len(small), 6)])
			}
			axeCheck(t, ctx, axe, where)
			if (v.w == 1024 || v.w == 1920) && at == "100" {
				screenshot(t, ctx, fmt.Sprintf("compare-present-%dx%d", v.w, v.h))
			}
		}
	}
	// A permalink with present=1 opens in presenter mode.
	do(t, ctx, chromedp.Navigate(ts.ts.URL+"/compare?"+q.Encode()+"&present=1"))
	waitJS(t, ctx, `document.body.classList.contains('present') && document.querySelector('[data-testid="cmp-present"]').getAttribute('aria-pressed') === 'true'`, 30*time.Second)
}
