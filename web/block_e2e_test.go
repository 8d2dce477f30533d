package web

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/zrviz/zrviz/imgio"
)

// hover moves the mouse to the middle of the element sel (scrolled into view first).
func hover(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	do(t, ctx, chromedp.WaitReady(chromedp.CSS(sel)))
	pt, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(
		`(() => { const e = document.querySelector(%q); e.scrollIntoView({block: 'nearest'}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, sel)))
	if err != nil || len(pt) != 2 {
		t.Fatalf("hover %s: %v %v", sel, pt, err)
	}
	do(t, ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pt[0], pt[1]))
}

// lit returns the offsets of the highlighted bytes, in the hex column (which) "b" or the ASCII "a".
func lit(t *testing.T, ctx context.Context, which string) []int {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](fmt.Sprintf(
		`[...document.querySelectorAll('#hexdump .%s.hl')].map((e) => Number(e.dataset.o))`, which)))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func span(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// waitPath waits until the tab shows path (with its query and hash), through a navigation: an
// evaluation that meets the page being replaced is retried.
func waitPath(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	expr := fmt.Sprintf(`document.readyState === 'complete' && location.pathname + location.search + location.hash === %q`, path)
	if err := pollJS(ctx, expr, 15*time.Second); err != nil {
		last, _ := evalJS[string](ctx, `location.pathname + location.search + location.hash`)
		t.Fatalf("the tab shows %q, want %q: %v", last, path, err)
	}
}

// contrastJS computes the WCAG contrast ratio of an element's text against the first opaque
// background behind it.
const contrastJS = `(sel) => {
  const el = document.querySelector(sel);
  if (!el) return -1;
  const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  let bg = null;
  for (let e = el; e; e = e.parentElement) {
    const c = rgb(getComputedStyle(e).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) { bg = c.slice(0, 3); break; }
  }
  bg = bg || [255, 255, 255];
  const a = lum(rgb(getComputedStyle(el).color).slice(0, 3)), b = lum(bg);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}`

func TestBrowserBlock(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	addCorruptDemo(t, ts)
	segs4, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../imgio/testdata/segs4.img.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.AddImage("segs4", "segs4.img", segs4); err != nil {
		t.Fatal(err)
	}
	base := ts.ts.URL
	ready := `document.querySelectorAll('#hexdump .b').length === 4096`

	t.Run("hover, focus, keys and links", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(base+"/images/demo/blocks/4625"))
		waitJS(t, ctx, ready, 10*time.Second)
		// A field highlights its bytes, in both columns: i_name is 14 bytes at 0x5c.
		hover(t, ctx, `tr[data-name="i_name"] button.fld`)
		if got := lit(t, ctx, "b"); !slices.Equal(got, span(0x5c, 14)) {
			t.Errorf("hovering i_name lights bytes %v, want 92…105", got)
		}
		if got := lit(t, ctx, "a"); !slices.Equal(got, span(0x5c, 14)) {
			t.Errorf("hovering i_name lights ASCII %v", got)
		}
		// The picture: the top of the page, i_name lit in the dump and the list.
		do(t, ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 1, 1),
			chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		hover(t, ctx, `tr[data-name="i_name"] button.fld`)
		screenshot(t, ctx, "block")
		// And the other way round: a byte of i_addr[0] lights that field's row.
		hover(t, ctx, `#hexdump .b[data-o="361"]`)
		waitJS(t, ctx, `document.querySelector('tr[data-name="i_addr[0]"]').classList.contains('hl')`, 5*time.Second)
		if got := lit(t, ctx, "b"); !slices.Equal(got, span(360, 4)) {
			t.Errorf("hovering byte 361 lights %v, want 360…363", got)
		}
		if s := text(t, ctx, "hex-status"); !strings.Contains(s, "i_addr[0]") || !strings.Contains(s, "22528") {
			t.Errorf("status %q", s)
		}
		// Keyboard: focusing a field button lights it; the dump takes arrows, Home, End. The mouse
		// is parked off the page first, as a keyboard user's would be.
		do(t, ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 1, 1))
		do(t, ctx, chromedp.Focus(chromedp.CSS(`tr[data-name="i_size"] button.fld`)))
		if got := lit(t, ctx, "b"); !slices.Equal(got, span(0x10, 8)) {
			t.Errorf("focusing i_size lights %v, want 16…23", got)
		}
		do(t, ctx, chromedp.Focus(chromedp.CSS(`#hexdump`)), chromedp.KeyEvent(kb.End))
		waitJS(t, ctx, `document.getElementById('hexdump').dataset.cursor === '4095'`, 5*time.Second)
		do(t, ctx, chromedp.KeyEvent(kb.Home), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowRight))
		waitJS(t, ctx, `document.getElementById('hexdump').dataset.cursor === '17'`, 5*time.Second)
		if got := lit(t, ctx, "b"); !slices.Equal(got, span(0x10, 8)) {
			t.Errorf("cursor on byte 17 lights %v, want i_size's 16…23", got)
		}
		// Clicking byte 360 puts the cursor there; Enter follows i_addr[0] to its data block.
		do(t, ctx, chromedp.Click(chromedp.CSS(`#hexdump .b[data-o="360"]`)))
		waitJS(t, ctx, `document.getElementById('hexdump').dataset.cursor === '360'`, 5*time.Second)
		do(t, ctx, chromedp.KeyEvent(kb.Enter))
		waitPath(t, ctx, "/images/demo/blocks/22528")
		waitJS(t, ctx, ready, 10*time.Second)
		if k := text(t, ctx, "block-kind"); k != "data" {
			t.Errorf("kind %q after following i_addr[0]", k)
		}
		// The data block's owner link opens the file page at the slot.
		do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="block-owner-link"]`)))
		waitPath(t, ctx, "/images/demo/file?path=%2Fcases%2Fcontiguous.bin#slot=0")
		waitJS(t, ctx, `!document.getElementById('slotinfo').hidden && document.getElementById('slotinfo').dataset.slot === '0'`, 10*time.Second)
		if s := text(t, ctx, "slot-info"); !strings.Contains(s, "block 22528") {
			t.Errorf("slot info %q", s)
		}
		screenshot(t, ctx, "file-slot")
		// The file page's extents and nodes link back to blocks.
		do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="dnode-block"]`)))
		waitPath(t, ctx, "/images/demo/blocks/4625")
		// A field's link: i_nid[0] goes to the direct node.
		do(t, ctx, chromedp.Click(chromedp.CSS(`tr[data-name="i_nid[0]"] [data-testid="field-link"]`)))
		waitPath(t, ctx, "/images/demo/blocks/4626") // contiguous.bin's i_nid[0], nid 29
		waitJS(t, ctx, `document.querySelector('[data-testid="block-kind"]').textContent === 'direct'`, 10*time.Second)
	})

	t.Run("problems and contrast", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(base+"/images/bad/blocks/4609"))
		waitJS(t, ctx, ready, 10*time.Second)
		bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[...document.querySelectorAll('#hexdump .b.bad')].map((e) => Number(e.dataset.o))`))
		if err != nil || !slices.Equal(bad, span(4072, 4)) {
			t.Errorf("problem bytes %v (%v), want the footer nid 4072…4075", bad, err)
		}
		hover(t, ctx, `tr[data-name="addr[0]"] button.fld`)
		screenshot(t, ctx, "block-problem")
		for _, sel := range []string{".hx-off", "#hexdump .b.f0", "#hexdump .b.f1", "#hexdump .b.z", "#hexdump .b.hl", "#hexdump .b.bad",
			"#hexstatus", ".sub", "button.fld", ".kind-tag", ".problems li", "[data-testid=block-link]", ".goto label", "table.fields td.val"} {
			c, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf(`(%s)(%q)`, contrastJS, sel)))
			if err != nil {
				t.Fatal(err)
			}
			if c < 4.5 {
				t.Errorf("%s: contrast %.2f:1, want at least 4.5:1", sel, c)
			}
		}
	})

	t.Run("from the image page", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(base+"/images/demo"), chromedp.WaitVisible(chromedp.CSS(`#image-goto-addr`)))
		do(t, ctx, chromedp.SendKeys(chromedp.CSS(`#image-goto-addr`), "0x5800"+kb.Enter))
		waitPath(t, ctx, "/images/demo/blocks/22528")
		// A block of a segment's valid map: segment 36's block 0 is 22528 too.
		do(t, ctx, chromedp.Navigate(base+"/images/demo#seg=36"), chromedp.Reload())
		waitJS(t, ctx, `/^Segment 36 /.test(document.getElementById('segdetail-title').textContent)`, 10*time.Second)
		waitJS(t, ctx, `!!document.querySelector('[data-testid="segment-summary-block"]')`, 10*time.Second)
		pt, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](
			`(() => { const c = document.getElementById('segbits'); c.scrollIntoView(); const r = c.getBoundingClientRect(); return [r.left + 36, r.top + 2]; })()`))
		if err != nil {
			t.Fatal(err)
		}
		do(t, ctx, chromedp.MouseClickXY(pt[0], pt[1]))
		waitPath(t, ctx, "/images/demo/blocks/22528")
	})

	t.Run("sections", func(t *testing.T) {
		ctx := tab(t)
		do(t, ctx, chromedp.Navigate(base+"/images/segs4"))
		waitJS(t, ctx, `document.getElementById('segmap').dataset.segsPerSec === '4' && !!document.querySelector('[data-testid="section-legend"]')`, 10*time.Second)
		do(t, ctx, chromedp.Navigate(base+"/images/segs4#seg=1"), chromedp.Reload())
		waitJS(t, ctx, `/section 0 \(segments 0 … 3\): valid \d+ \/ 2,048/.test(document.getElementById('segdetail-title').textContent)`, 10*time.Second)
		screenshot(t, ctx, "image-sections")
	})
}
