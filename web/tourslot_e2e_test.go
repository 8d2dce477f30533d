package web

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zrviz/zrviz/internal/units"
)

// TestBrowserTourPointsAtItsSlot: at each tour stop the slot panel's cursor line names the slot the
// stop's text is about (issue 38: it named the slot after it, where the engine goes next), and the
// tour's last line is not cut at 1280×720.
func TestBrowserTourPointsAtItsSlot(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	for _, path := range []string{"/seed/bench64.bin", "/cases/prealloc.bin", "/cases/holes.bin"} {
		o := outline(t, ts, url.Values{"image": {DemoID}, "path": {path}, "mode": {"both"}})
		ctx := tab(t)
		do(t, ctx, chromedp.EmulateViewport(1280, 720))
		do(t, ctx, chromedp.Navigate(runURL(ts.ts.URL, path, url.Values{"mode": {"both"}})))
		waitStatus(t, ctx, 30*time.Second, "paused")
		checked := 0
		for k, s := range o.Stops {
			if s.Slot < o.Range.Start || s.Slot >= o.Range.End || s.Kind == "start" || s.Kind == "end" {
				continue
			}
			do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('[data-testid="tour-next"]').length && (() => { const s = document.getElementById('seek'); s.value = '%d'; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); })()`, s.Step)))
			waitJSOr(t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="step"]').textContent.replace(/,/g, '') === '%d' && document.querySelector('[data-testid="tour-title"]').textContent === %q`, s.Step, s.Title), 15*time.Second,
				`document.querySelector('[data-testid="step"]').textContent + ' ' + document.querySelector('[data-testid="tour-title"]').textContent`)
			settle(t, ctx)
			line := js[string](t, ctx, `document.getElementById('slots-desc').textContent`)
			if want := "cursor at slot " + units.Group(s.Slot) + " "; !strings.Contains(line, want) {
				t.Errorf("%s stop %d (%s, about slot %d): the cursor line reads %q", path, k, s.Kind, s.Slot, line)
			}
			// The tour panel's text is all in view: its last line is not cut.
			if cut := js[string](t, ctx, `(() => { const b = document.getElementById('tour-body'); const r = b.getBoundingClientRect(); const last = [...b.querySelectorAll('*')].filter((e) => e.getClientRects().length && e.textContent.trim()).pop(); if (!last) return ''; const lr = last.getBoundingClientRect(); return lr.bottom > r.bottom + 1 && b.scrollHeight <= b.clientHeight + 1 ? last.textContent.slice(0, 40) + ' ends at ' + Math.round(lr.bottom) + ', the panel at ' + Math.round(r.bottom) : ''; })()`); cut != "" {
				t.Errorf("%s stop %d: the tour's last line is cut at 1280×720: %s", path, k, cut)
			}
			checked++
		}
		if checked == 0 {
			t.Errorf("%s: no stop about a slot of the range", path)
		}
	}
}
