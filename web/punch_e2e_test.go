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

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// TestBrowserPunchTruncate (issue 28): the player plays a punch hole and a truncate as it plays a
// zero. At a laptop's size (and a phone's for the punch) each plays to the end with no serious or
// critical axe-core violation; its tour stops where the batchings differ, where the narration
// names the kernel function (f2fs_truncate_data_blocks_range, truncate_node) and a reload of the
// page's step= permalink shows the same panels; at the end the calls shown in each mode are
// core.Simulate's (what `zrviz run --json` prints), and the page names the call it plays.
func TestBrowserPunchTruncate(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	axe := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	base := ts.ts.URL
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })

	for _, c := range []struct {
		name, path string
		q          url.Values
		req        core.Request
		stop       string // the tour stop whose narration says stopSays
		stopSays   string
		crumb      string
		w, h       int64
	}{
		{"punch holes", "/cases/holes.bin", url.Values{"op": {"punch"}, "offset": {"0"}, "length": {"8MiB"}},
			core.Request{Op: core.OpPunch, Offset: 0, Length: 8 << 20}, "NULL ends a run here", "ends the pending run", "punch hole", 1366, 768},
		{"punch holes phone", "/cases/holes.bin", url.Values{"op": {"punch"}, "offset": {"0"}, "length": {"8MiB"}},
			core.Request{Op: core.OpPunch, Offset: 0, Length: 8 << 20}, "NULL ends a run here", "ends the pending run", "punch hole", 390, 844},
		{"truncate indirect", "/cases/indirect.bin", url.Values{"op": {"truncate"}, "size": {"1MiB"}},
			core.Request{Op: core.OpTruncate, Offset: 1 << 20}, "A node block is freed", "truncate_node", "truncate to 1 MiB", 1366, 768},
		// A 4:3 projector in presenter mode.
		{"truncate indirect projector", "/cases/indirect.bin", url.Values{"op": {"truncate"}, "size": {"1MiB"}, "present": {"1"}},
			core.Request{Op: core.OpTruncate, Offset: 1 << 20}, "A node block is freed", "truncate_node", "truncate to 1 MiB", 1024, 768},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := img.Resolve(c.path)
			if err != nil {
				t.Fatal(err)
			}
			in, err := source.FileInput(img, f)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]uint64{}
			for _, m := range request.Both() {
				res, err := core.Simulate(in, c.req, m)
				if err != nil {
					t.Fatal(err)
				}
				if res.Errno != "" {
					t.Fatalf("%s: %s", m, res.Errno)
				}
				want[m.String()] = res.Stats.Calls
			}
			if want["per-block"] == want["batched"] {
				t.Fatalf("the modes make %d calls each: the case shows no batching", want["batched"])
			}

			// Every tab of the case, the fresh loads compared with too, at the case's size.
			sized := func(t testing.TB) context.Context {
				ctx := tab(t)
				do(t, ctx, chromedp.EmulateViewport(c.w, c.h))
				return ctx
			}
			ctx := sized(t)
			q := url.Values{"mode": {"both"}}
			for k, v := range c.q {
				q[k] = v
			}
			do(t, ctx, chromedp.Navigate(runURL(base, c.path, q)))
			settled(t, ctx, 0)
			where := fmt.Sprintf("%s at %d×%d", c.name, c.w, c.h)
			// The page names what it plays: its breadcrumb and its h1.
			if crumb := js[string](t, ctx, `document.querySelector('nav.crumbs').textContent.replace(/\s+/g, ' ')`); !strings.Contains(crumb, c.crumb) {
				t.Errorf("%s: the breadcrumb %q does not say %q", where, crumb, c.crumb)
			}
			if h1 := js[string](t, ctx, `document.querySelector('h1').textContent`); strings.Contains(h1, "zero") {
				t.Errorf("%s: h1 %q speaks of a zero", where, h1)
			}
			// The run form has the call chosen, and only its fields enabled.
			if op := js[string](t, ctx, `document.getElementById('f-op').value`); op != c.q.Get("op") {
				t.Errorf("%s: the form's call is %q", where, op)
			}
			truncate := c.q.Get("op") == "truncate"
			if got := js[bool](t, ctx, `!document.getElementById('f-size').disabled && document.getElementById('f-offset').disabled`); got != truncate {
				t.Errorf("%s: the size field enabled (and the range disabled) is %v", where, got)
			}

			// The first steps: the narration names the loop that clears the slots.
			var said []string
			for k := int64(1); k <= 12; k++ {
				click(t, ctx, "btn-step")
				settled(t, ctx, k)
				said = append(said, text(t, ctx, "narration-per-block"), text(t, ctx, "narration-batched"))
			}
			if !strings.Contains(strings.Join(said, " | "), "f2fs_truncate_data_blocks_range") {
				t.Errorf("%s: the first 12 steps' narration does not name f2fs_truncate_data_blocks_range: %q", where, said)
			}
			// The tour's stop where the batchings differ, and its narration.
			found := false
			var titles []string
			for range 16 {
				pos := text(t, ctx, "tour-pos")
				click(t, ctx, "tour-next")
				waitJS(t, ctx, fmt.Sprintf(`document.getElementById('tour-pos').textContent.trim() !== %q`, pos), 10*time.Second)
				titles = append(titles, text(t, ctx, "tour-title"))
				if titles[len(titles)-1] == c.stop {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("%s: no stop %q in the tour: %q", where, c.stop, titles)
			}
			// The stop is past the 12 steps taken: wait for its frame before reading its step.
			waitJS(t, ctx, `document.getElementById('step-now').textContent.replace(/[^0-9]/g, '') !== '12'`, 30*time.Second)
			// A seek's frames may come in more than one message on a loaded machine: read the step
			// once the page and its permalink agree on it and it holds still.
			step := stableStep(t, ctx)
			settled(t, ctx, step)
			narr := text(t, ctx, "narration-per-block") + " | " + text(t, ctx, "narration-batched")
			if !strings.Contains(narr, c.stopSays) {
				t.Errorf("%s: at the stop %q (step %d) the narration %q does not say %q", where, c.stop, step, narr, c.stopSays)
			}
			if href := js[string](t, ctx, `location.search`); !strings.Contains(href, "op="+c.q.Get("op")) {
				t.Errorf("%s: the permalink %q lost the call", where, href)
			}
			// A reload of the step= permalink shows the same panels.
			compareFresh(t, sized, ctx, where+", tour stop "+c.stop)
			axeCheck(t, ctx, axe, where+", tour stop")

			total, err := strconv.ParseInt(strings.ReplaceAll(text(t, ctx, "step-total"), ",", ""), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			click(t, ctx, "btn-end")
			settled(t, ctx, total)
			for id, mode := range map[string]string{"stat-calls-per-block": "per-block", "stat-calls-batched": "batched"} {
				if got := count(t, ctx, id); got != strconv.FormatUint(want[mode], 10) {
					t.Errorf("%s: at the end #%s shows %s calls, core.Simulate makes %d", where, id, got, want[mode])
				}
			}
			if out := text(t, ctx, "outcome"); strings.Contains(out, "zero") || !strings.Contains(out, "returns 0") {
				t.Errorf("%s: outcome %q", where, out)
			}
			if truncate && text(t, ctx, "sum-nodes-bt") == "0" {
				t.Errorf("%s: no node block freed shown at the end", where)
			}
			axeCheck(t, ctx, axe, where+", end")
			noSideways(t, ctx, where)
			compareFresh(t, sized, ctx, where+", end")
			screenshot(t, ctx, fmt.Sprintf("player-%s-%dx%d", strings.ReplaceAll(c.name, " ", "-"), c.w, c.h))
		})
	}
}

// TestBrowserChainPunch: issue 28's demo from the page: a zero of [1 MiB, 2 MiB) of
// contiguous.bin, then from its end "punch it" on the same range — the chain opens the player on the
// punch with the zero as a before= line — where every NEW_ADDR slot is its own call even batched:
// the page shows as many batched calls as per-block ones, the tour stops at "NEW_ADDR is its own
// call", and the call log names NEW_ADDR.
func TestBrowserChainPunch(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	axe := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(runURL(ts.ts.URL, "/cases/contiguous.bin", url.Values{"mode": {"both"}, "offset": {"1048576"}, "length": {"1048576"}, "run": {"end"}})))
	waitStatus(t, ctx, 30*time.Second, "done")
	do(t, ctx, chromedp.WaitVisible(testid("chain-form")))
	do(t, ctx, chromedp.SetValue(testid("chain-kind"), "punch"))
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('chain-kind').dispatchEvent(new Event('change'))`))
	do(t, ctx, chromedp.WaitVisible(testid("chain-args")))
	if got := text(t, ctx, "chain-go"); got != "punch it" {
		t.Errorf("the chain's button says %q", got)
	}
	do(t, ctx, chromedp.SendKeys(`#chain-arg-1`, "1MiB"), chromedp.SendKeys(`#chain-arg-2`, "1MiB"), chromedp.Click(testid("chain-go")))
	waitAcross(t, ctx, `new URLSearchParams(location.search).get('op') === 'punch' && document.readyState === 'complete'`, 20*time.Second)
	q := js[string](t, ctx, `location.search`)
	v, err := url.ParseQuery(strings.TrimPrefix(q, "?"))
	if err != nil {
		t.Fatal(err)
	}
	if b := v["before"]; len(b) != 1 || b[0] != "zero /cases/contiguous.bin 1048576 1048576" || v.Get("offset") != "1048576" || v.Get("length") != "1048576" {
		t.Fatalf("the chain's punch: %s", q)
	}
	settled(t, ctx, 0)
	found := false
	for range 8 {
		pos := text(t, ctx, "tour-pos")
		click(t, ctx, "tour-next")
		waitJS(t, ctx, fmt.Sprintf(`document.getElementById('tour-pos').textContent.trim() !== %q`, pos), 10*time.Second)
		if text(t, ctx, "tour-title") == "NEW_ADDR is its own call" {
			found = true
			break
		}
	}
	if !found {
		t.Fatal(`no tour stop "NEW_ADDR is its own call"`)
	}
	waitJS(t, ctx, `document.getElementById('lanes').textContent.includes('f2fs_invalidate_blocks(NEW_ADDR, 1)')`, 10*time.Second)
	axeCheck(t, ctx, axe, "the chain's punch at its NEW_ADDR stop")
	total, err := strconv.ParseInt(strings.ReplaceAll(text(t, ctx, "step-total"), ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	click(t, ctx, "btn-end")
	settled(t, ctx, total)
	// The engine's count: the zero, then the punch on the state it leaves, in each mode.
	si, err := ts.image(DemoID)
	if err != nil {
		t.Fatal(err)
	}
	f, err := si.Image.Resolve("/cases/contiguous.bin")
	if err != nil {
		t.Fatal(err)
	}
	in, err := source.FileInput(si.Image, f)
	if err != nil {
		t.Fatal(err)
	}
	z, err := core.Simulate(in, core.Request{Offset: 1 << 20, Length: 1 << 20}, core.PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, m := range []core.Mode{core.PerBlock, core.Batched} {
		res, err := core.Simulate(z.NextInput(), core.Request{Op: core.OpPunch, Offset: 1 << 20, Length: 1 << 20}, m)
		if err != nil {
			t.Fatal(err)
		}
		want[m.String()] = strconv.FormatUint(res.Stats.Calls, 10)
	}
	pb, bt := count(t, ctx, "stat-calls-per-block"), count(t, ctx, "stat-calls-batched")
	if pb != want["per-block"] || bt != want["batched"] || pb != bt {
		t.Errorf("a punch of NEW_ADDR slots: %s per-block calls, %s batched; the engine makes %v, as many batched as per-block", pb, bt, want)
	}
	screenshot(t, ctx, "player-zero-then-punch")
}

// TestBrowserSandboxPunch: issue 28's corrupt image, as a sandbox list that maps block 5,005 twice,
// punched in both modes: at the end the page shows the per-block loop skipping one address and the
// batched one freeing one block twice (the counters' "skipped · wrongly cleared" row), the tour
// has both stops, the call log names the run breaks, and axe-core finds nothing serious.
func TestBrowserSandboxPunch(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	axe := axeSource(t)
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	ctx := tab(t)
	do(t, ctx, chromedp.EmulateViewport(1366, 768))
	do(t, ctx, chromedp.Navigate(ts.ts.URL+"/sandbox/run?mode=both&op=punch&slots="+url.QueryEscape("5000-5019 5005 5020-5059")))
	waitStatus(t, ctx, 30*time.Second, "paused")
	var titles []string
	for range 10 {
		pos := text(t, ctx, "tour-pos")
		click(t, ctx, "tour-next")
		waitJS(t, ctx, fmt.Sprintf(`document.getElementById('tour-pos').textContent.trim() !== %q`, pos), 10*time.Second)
		titles = append(titles, text(t, ctx, "tour-title"))
		if titles[len(titles)-1] == "Validated before the flush: freed twice" {
			break
		}
	}
	if !slicesContains(titles, "Validated before the flush") || !slicesContains(titles, "Validated before the flush: freed twice") {
		t.Fatalf("tour %q", titles)
	}
	if tt := text(t, ctx, "tour-text"); !strings.Contains(tt, "Bitmap was wrongly cleared") {
		t.Errorf("the freed-twice stop says %q", tt)
	}
	if q := js[string](t, ctx, `location.search`); !strings.Contains(q, "op=punch") {
		t.Errorf("the permalink %q lost the call", q)
	}
	axeCheck(t, ctx, axe, "sandbox punch, freed twice")
	screenshot(t, ctx, "player-sandbox-punch-freed-twice")
	click(t, ctx, "btn-end")
	waitStatus(t, ctx, 30*time.Second, "done")
	if pb, bt := text(t, ctx, "sum-skipped-pb"), text(t, ctx, "sum-skipped-bt"); pb != "1 · 0" || bt != "0 · 1" {
		t.Errorf("skipped · wrongly cleared: per-block %q, batched %q", pb, bt)
	}
}
