package web

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zrviz/zrviz/internal/imgedit"
)

// TestBrowserAfterCheck: on the player of kernel case 6 (/cases/fragmented.bin, its first MiB, both
// modes), the kernel's own after-image agrees (no mark, "agrees", the node's copy-on-write
// explained with its function); a doctored copy (one SIT bit set again, one slot pointed back at its
// old block) is marked on the SIT and slots panels, the model's and the image's values in each
// mark's name and its tooltip on focus, and listed; an after-image uploaded from the page (the
// batched kernel's, zstd) is stored and checked. axe-core finds nothing serious on any of it.
func TestBrowserAfterCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	src := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	stock := filepath.Join(kernelCasesDir, "6.after.img.zst")
	addKernelImage(t, ts, "k6", stock, nil)
	const freed = 5634 // file block 0's block before the zero: segment 3, bit 2
	addKernelImage(t, ts, "k6doc", stock, func(e imgedit.Editor) {
		if err := e.SetBlockValid(freed, true); err != nil {
			t.Fatal(err)
		}
		if err := e.SetSlot(30, 5, freed); err != nil {
			t.Fatal(err)
		}
	})
	ctx := tab(t)
	run := runURL(ts.ts.URL, "/cases/fragmented.bin", url.Values{"offset": {"0"}, "length": {"1048576"}, "mode": {"both"}, "run": {"end"}})
	do(t, ctx, chromedp.Navigate(run))
	waitStatus(t, ctx, 30*time.Second, "done")
	do(t, ctx, chromedp.Click(testid("ac-open")))
	do(t, ctx, chromedp.WaitVisible(testid("ac-panel")))
	if js[bool](t, ctx, `!document.querySelector('[data-testid="tour"]').checkVisibility()`) != true {
		t.Error("the tour still shows under the open panel")
	}
	waitJS(t, ctx, `document.querySelectorAll('[data-testid="ac-pick"] option').length >= 3`, 10*time.Second)

	check := func(id string) {
		t.Helper()
		do(t, ctx, chromedp.Evaluate[chromedp.Void](`delete document.querySelector('[data-testid="ac-verdict"]').dataset.agree`),
			chromedp.SetValue(testid("ac-pick"), id), chromedp.Click(testid("ac-go")))
		waitJS(t, ctx, `document.querySelector('[data-testid="ac-verdict"]').dataset.agree !== undefined`, 30*time.Second)
	}

	// The kernel's own after-image agrees.
	check("k6")
	waitJS(t, ctx, `document.querySelector('[data-testid="ac-verdict"]').dataset.agree === 'true'`, 30*time.Second)
	if v := text(t, ctx, "ac-verdict"); !strings.Contains(v, "agrees with both modes") {
		t.Errorf("verdict %q", v)
	}
	if n := js[int](t, ctx, `document.querySelectorAll('.ac-mark').length`); n != 0 {
		t.Errorf("%d marks on an agreeing image", n)
	}
	if ex := text(t, ctx, "ac-explained"); !strings.Contains(ex, "f2fs_do_write_node_page") {
		t.Errorf("explained %q: the inode's copy-on-write is not named", ex)
	}
	axeCheck(t, ctx, src, "after-image check, agreeing")
	shot(t, ctx, "after-agree")

	// The doctored image: the bit and the slot, marked and listed.
	check("k6doc")
	waitJS(t, ctx, `document.querySelector('[data-testid="ac-verdict"]').dataset.agree === 'false'`, 30*time.Second)
	waitJS(t, ctx, `document.querySelector('[data-testid="ac-mark-slot"][data-index="5"]') && document.querySelector('[data-testid="ac-mark-bit"][data-segno="3"][data-bit="2"]')`, 10*time.Second)
	if v := text(t, ctx, "ac-verdict"); !strings.Contains(v, "per-block: 2 differences · batched: 2 differences") {
		t.Errorf("verdict %q", v)
	}
	for _, c := range []struct{ sel, want string }{
		{`[data-testid="ac-mark-slot"][data-index="5"]`, "slot 5 of /cases/fragmented.bin (i_addr[5]): the model has NEW_ADDR, the image block 5,634"},
		{`[data-testid="ac-mark-bit"][data-segno="3"][data-bit="2"]`, "segment 3 bit 2 (block 5,634): the model has it clear, the image set"},
	} {
		if l := js[string](t, ctx, `document.querySelector('`+c.sel+`').getAttribute('aria-label')`); !strings.Contains(l, c.want) {
			t.Errorf("mark %s: name %q, want %q", c.sel, l, c.want)
		}
		// The mark is on screen, inside its canvas.
		if !js[bool](t, ctx, `(() => { const m = document.querySelector('`+c.sel+`').getBoundingClientRect(); const cv = document.querySelector('`+c.sel+`').closest('.panel').querySelector('canvas').getBoundingClientRect();
			return m.width > 0 && m.left >= cv.left - 1 && m.right <= cv.right + 1 && m.top >= cv.top - 1 && m.bottom <= cv.bottom + 1; })()`) {
			t.Errorf("mark %s is not over its canvas", c.sel)
		}
	}
	if n := js[int](t, ctx, `document.querySelectorAll('[data-testid="ac-difference"]').length`); n != 2 {
		t.Errorf("%d differences listed, want 2", n)
	}
	// Focus shows the values in the tooltip.
	do(t, ctx, chromedp.Focus(`[data-testid="ac-mark-slot"][data-index="5"]`))
	waitJS(t, ctx, `!document.getElementById('ac-tip').hidden && document.getElementById('ac-tip').textContent.includes('the image block 5,634')`, 5*time.Second)
	axeCheck(t, ctx, src, "after-image check, differing")
	shot(t, ctx, "after-differs")

	// An upload from the page: the batched kernel's after-image, zstd as the oracle wrote it.
	do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS(testid("ac-file")), []string{mustAbs(t, filepath.Join(kernelCasesDir, "6.after.batched.img.zst"))}))
	waitJS(t, ctx, `document.querySelector('[data-testid="ac-verdict"]').textContent.includes('6.after.batched.img.zst')`, 60*time.Second)
	if v := text(t, ctx, "ac-verdict"); !strings.HasPrefix(v, "✓") {
		t.Errorf("the uploaded batched after-image: %q", v)
	}
	if n := js[int](t, ctx, `document.querySelectorAll('.ac-mark').length`); n != 0 {
		t.Errorf("%d marks left after an agreeing check", n)
	}
	// On a phone: the panel in the tour's place, the marks on the panels, nothing sideways.
	do(t, ctx, chromedp.EmulateViewport(390, 844))
	check("k6doc")
	waitJS(t, ctx, `document.querySelector('[data-testid="ac-mark-slot"][data-index="5"]') && document.querySelector('[data-testid="ac-mark-bit"][data-segno="3"][data-bit="2"]')`, 10*time.Second)
	noSideways(t, ctx, "after-image check on a phone")
	axeCheck(t, ctx, src, "after-image check on a phone")
	shot(t, ctx, "after-differs-390x844")
	do(t, ctx, chromedp.EmulateViewport(viewW, viewH))

	// Closing goes back to the tour.
	do(t, ctx, chromedp.Click(`[data-close="ac"]`))
	waitJS(t, ctx, `document.querySelector('[data-testid="tour"]').checkVisibility()`, 5*time.Second)
}

// TestBrowserWritebackAndChain: kernel sequence b (fill_zero dirties pages 16 and 64 of
// /cases/holes.bin, sync writes them back, the zero walks) on the player: the writeback panel says
// what sync wrote where with the SIT change; the chain adds a write and a sync and then zeroes,
// the URL carrying them as before= lines in order.
func TestBrowserWritebackAndChain(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	src := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	ctx := tab(t)
	q := seqQuery(t, filepath.Join(kernelSeqDir, "b-holes-partial-sync", "ops"), "both")
	q.Set("run", "end")
	do(t, ctx, chromedp.Navigate(ts.ts.URL+"/images/demo/run?"+q.Encode()))
	waitStatus(t, ctx, 30*time.Second, "done")
	waitJS(t, ctx, `/^writeback \(\d+ pages?\)$/.test(document.querySelector('[data-testid="wb-open"]').textContent)`, 20*time.Second)
	do(t, ctx, chromedp.Click(testid("wb-open")))
	do(t, ctx, chromedp.WaitVisible(testid("wb-panel")))
	groups := js[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="wb-group"]')].map((g) => g.dataset.kind)`)
	if strings.Join(groups, " ") != "zero sync zero unmount" {
		t.Errorf("groups %v", groups)
	}
	sync := js[string](t, ctx, `document.querySelector('[data-testid="wb-group"][data-kind="sync"]').textContent`)
	if !strings.Contains(sync, "written out of place") || !strings.Contains(sync, "f2fs_outplace_write_data") || !strings.Contains(sync, "bit") || !strings.Contains(sync, "valid") {
		t.Errorf("the sync's writeback: %q", sync)
	}
	if js[bool](t, ctx, `document.getElementById('narr-wb').hidden`) != true {
		t.Error("the narration speaks of writeback though the played zero and the unmount write nothing (sync did)")
	}
	axeCheck(t, ctx, src, "writeback panel")
	shot(t, ctx, "run-writeback")
	do(t, ctx, chromedp.Click(`[data-close="wb"]`))

	// The chain: a write and a sync, then the next zero.
	do(t, ctx, chromedp.WaitVisible(testid("chain-form")))
	do(t, ctx, chromedp.SetValue(testid("chain-kind"), "write"))
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('chain-kind').dispatchEvent(new Event('change'))`))
	do(t, ctx, chromedp.WaitVisible(testid("chain-args")))
	do(t, ctx, chromedp.SendKeys(`#chain-arg-1`, "64KiB"), chromedp.SendKeys(`#chain-arg-2`, "0x2000"), chromedp.Click(testid("chain-go")))
	do(t, ctx, chromedp.SetValue(testid("chain-kind"), "sync"))
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('chain-kind').dispatchEvent(new Event('change'))`))
	do(t, ctx, chromedp.Click(testid("chain-go")))
	// gc, whose form the page learnt from the server (a choice of 1 or 0), needs nothing of its own.
	do(t, ctx, chromedp.SetValue(testid("chain-kind"), "gc"))
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('chain-kind').dispatchEvent(new Event('change'))`))
	do(t, ctx, chromedp.WaitVisible(`#chain-arg-0`), chromedp.SetValue(`#chain-arg-0`, "1"), chromedp.Click(testid("chain-go")))
	added := js[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="chain-added"]')].map((li) => li.querySelector('.op').textContent.trim())`)
	if strings.Join(added, "|") != "then write /cases/holes.bin 65,536 8,192|then sync|then gc 1" {
		t.Errorf("added %q", added)
	}
	axeCheck(t, ctx, src, "chain with added operations")
	shot(t, ctx, "run-chain-ops")
	do(t, ctx, chromedp.Click(testid("chain-go"))) // zero it: a new page
	waitAcross(t, ctx, `new URLSearchParams(location.search).getAll('before').length === 6 && document.readyState === 'complete'`, 20*time.Second)
	before := js[[]string](t, ctx, `new URLSearchParams(location.search).getAll('before')`)
	want := []string{"zero /cases/holes.bin 67584 195560", "sync", "zero /cases/holes.bin 0 524288", "write /cases/holes.bin 65536 8192", "sync", "gc 1"}
	if strings.Join(before, "|") != strings.Join(want, "|") {
		t.Errorf("before= %q, want %q", before, want)
	}
	waitStatus(t, ctx, 30*time.Second, "paused")

	// Sequence a: the played zero overlaps the two pages the first one dirtied: the narration
	// says they are written back before its walk, and where.
	q = seqQuery(t, filepath.Join(kernelSeqDir, "a-holes-partial", "ops"), "both")
	do(t, ctx, chromedp.Navigate(ts.ts.URL+"/images/demo/run?"+q.Encode()))
	waitJS(t, ctx, `!document.getElementById('narr-wb').hidden`, 20*time.Second)
	if w := text(t, ctx, "narr-writeback"); !strings.HasPrefix(w, "before the walk, filemap_write_and_wait_range writes back page 16") || !strings.Contains(w, "page 64 of /cases/holes.bin out of place, NEW_ADDR → block") {
		t.Errorf("narration %q", w)
	}
	shot(t, ctx, "run-writeback-narration")
}

// waitAcross waits until expr is true in the tab, across a navigation (an evaluation that fails
// because the page it ran in went away is tried again in the next one).
func waitAcross(t *testing.T, ctx context.Context, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", expr, err)
		}
		// The next try waits for the tab's next animation frame, not for a time.
		_, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise((ok) => requestAnimationFrame(() => ok(true)))`, chromedp.EvalAwaitPromise))
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
