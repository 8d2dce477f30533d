package web

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// demoStep is one numbered step of README.md's "A five-minute demo", its lines joined.
type demoStep struct {
	n    int
	text string
}

// readmeDemo reads the five-minute demo's steps from README.md.
func readmeDemo(t *testing.T) []demoStep {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## A five-minute demo\n")
	if !ok {
		t.Fatal(`README.md has no "## A five-minute demo" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var steps []demoStep
	item := regexp.MustCompile(`(?m)^(\d+)\. \*\*[^*]+\*\* `)
	locs := item.FindAllStringSubmatchIndex(sec, -1)
	for i, l := range locs {
		end := len(sec)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		body := sec[l[1]:end]
		body, _, _ = strings.Cut(body, "\n\n") // the paragraph after the list is not a step
		n, _ := strconv.Atoi(sec[l[2]:l[3]])
		steps = append(steps, demoStep{n: n, text: strings.Join(strings.Fields(body), " ")})
	}
	if len(steps) != 6 {
		t.Fatalf("README.md's demo has %d steps, this test follows 6", len(steps))
	}
	return steps
}

// demoAction finds what a step does, in order: open a URL, go back, click a link by its text
// (next to a path: that file's row of the tree), press keys (a second after ", then", a count).
var demoAction = regexp.MustCompile(`Open (http://127\.0\.0\.1:8080\S*?):` +
	`|Go back \(the browser's back button\)` +
	`|Copy the address bar` + // the permalink, read below
	"|[Cc]lick \\*\\*([^*]+)\\*\\*(?: next to `([^`]+)`)?" +
	`|[Pp]ress \*\*([^*]+)\*\*(?:, then \*\*([^*]+)\*\*)?(?: \([^)]*\))?(?: (once|twice))?`)

// italic finds *a tour stop's title* (bold text is masked first).
var italic = regexp.MustCompile(`\*([^*]+)\*`)

// fact finds what a step says the page shows, and how to read it there.
var demoFacts = []struct {
	re   *regexp.Regexp
	read func(t *testing.T, ctx contextT, m []string)
}{
	{regexp.MustCompile(`its \*\*segment map\*\* shows`), func(t *testing.T, ctx contextT, m []string) {
		waitJS(t, ctx, `(document.getElementById('segmap') || {}).height > 20`, 10*time.Second)
	}},
	{regexp.MustCompile(`opens in "([a-z-]+)" mode`), func(t *testing.T, ctx contextT, m []string) {
		if got := js[string](t, ctx, `document.querySelector('[data-testid="mode-select"]').value`); got != m[1] {
			t.Errorf("the player opened in mode %q, the README says %q", got, m[1])
		}
	}},
	{regexp.MustCompile(`\*\*coloured by physical run\*\*: (\w+) colours`), func(t *testing.T, ctx contextT, m []string) {
		if got := js[string](t, ctx, `document.querySelector('[data-testid="colour-by"]').value`); got != "run" {
			t.Errorf("coloured by %q, the README says by physical run", got)
		}
		waitJS(t, ctx, `/\b3 physical runs\b/.test(document.getElementById('slots-aside').textContent)`, 10*time.Second)
		if m[1] != "three" {
			t.Errorf("the README says %s colours; bench64 has 3 physical runs", m[1])
		}
	}},
	{regexp.MustCompile(`races to ([\d,]+) .*? makes (\d+) —`), func(t *testing.T, ctx contextT, m []string) {
		if pb, bt := text(t, ctx, "stat-calls-per-block"), text(t, ctx, "stat-calls-batched"); pb != m[1] || bt != m[2] {
			t.Errorf("calls per-block %s, batched %s; the README says %s and %s", pb, bt, m[1], m[2])
		}
	}},
	{regexp.MustCompile(`(\d+) segments made prefree`), func(t *testing.T, ctx contextT, m []string) {
		if got := js[string](t, ctx, `document.getElementById('c-bt-prefree').textContent.trim()`); got != m[1] {
			t.Errorf("%s segments made prefree, the README says %s", got, m[1])
		}
	}},
	{regexp.MustCompile(`cost model's ([\d.]+ ms) against ([\d.]+ ms)`), func(t *testing.T, ctx contextT, m []string) {
		if pb, bt := text(t, ctx, "cost-pb"), text(t, ctx, "cost-bt"); !strings.Contains(pb, m[1]) || !strings.Contains(bt, m[2]) {
			t.Errorf("cost model %q against %q; the README says %s against %s", pb, bt, m[1], m[2])
		}
	}},
	{regexp.MustCompile(`(\d+) runs of (\d+) blocks, (\d+) calls against (\d+)`), func(t *testing.T, ctx contextT, m []string) {
		waitJS(t, ctx, fmt.Sprintf(`new RegExp('\\b%s physical runs\\b').test(document.getElementById('slots-aside').textContent)`, m[1]), 10*time.Second)
		if pb, bt := text(t, ctx, "stat-calls-per-block"), text(t, ctx, "stat-calls-batched"); bt != m[3] || pb != m[4] {
			t.Errorf("calls per-block %s, batched %s; the README says %s against %s", pb, bt, m[3], m[4])
		}
	}},
}

// TestBrowserReadmeDemo follows README.md's five-minute demo as it is written: the steps are read
// from the file (what to open, click and press, the tour stops each n lands on, the numbers the
// page then shows), so the README cannot drift from the pages. Only the address differs: the test
// server's for http://127.0.0.1:8080.
func TestBrowserReadmeDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium, two runs played at the default pace")
	}
	t.Parallel()
	steps := readmeDemo(t)
	// Without the back-forward cache: a page it restores fires no load event, and chromedp's waits
	// for the page's new document hang on it (the demo's "go back" would, under the test only).
	tab := browser(t, chromedp.Flag("disable-features", "BackForwardCache"))
	ts := mustOpenServer(t, Config{})
	// The two plays' 30 s each in 3 s: what the steps check is where a play ends, not how long
	// it takes (the pace's arithmetic is TestPaceSpeeds').
	ts.playClockScale.Store(math.Float64bits(10))
	base := ts.ts.URL
	ctx := tab(t)
	start := time.Now()
	for _, st := range steps {
		t.Logf("step %d (%s in): %s", st.n, time.Since(start).Round(time.Second), st.text)
		masked := regexp.MustCompile(`\*\*[^*]+\*\*`).ReplaceAllStringFunc(st.text, func(s string) string { return strings.Repeat("\x00", len(s)) })
		titles := italic.FindAllStringSubmatchIndex(masked, -1)
		acts := demoAction.FindAllStringSubmatchIndex(st.text, -1)
		if len(acts) == 0 {
			t.Fatalf("step %d: nothing to open, click or press in %q", st.n, st.text)
		}
		for i, a := range acts {
			next := len(st.text)
			if i+1 < len(acts) {
				next = acts[i+1][0]
			}
			var after []string // the tour stops this action's n presses land on, in order
			for _, ti := range titles {
				if ti[0] > a[1] && ti[0] < next {
					after = append(after, st.text[ti[2]:ti[3]])
				}
			}
			group := func(k int) string {
				if a[2*k] < 0 {
					return ""
				}
				return st.text[a[2*k]:a[2*k+1]]
			}
			switch {
			case group(1) != "": // Open URL
				do(t, ctx, chromedp.Navigate(base+strings.TrimPrefix(group(1), "http://127.0.0.1:8080")))
				waitNav(t, ctx, `document.readyState === 'complete'`, 20*time.Second)
			case strings.HasPrefix(st.text[a[0]:a[1]], "Copy"): // the permalink is checked below
			case strings.HasPrefix(st.text[a[0]:a[1]], "Go back"):
				do(t, ctx, chromedp.NavigateBack())
				waitNav(t, ctx, `document.readyState === 'complete' && !!document.querySelector('[data-testid="file-tree"]')`, 20*time.Second)
			case group(2) != "": // Click **label** [next to `path`]
				clickLabel(t, ctx, group(2), group(3))
			case group(4) != "": // Press **key** [, then **key**] [once|twice]
				keys := []string{group(4)}
				if group(5) != "" {
					keys = append(keys, group(5))
				}
				last := keys[len(keys)-1]
				times := map[string]int{"": 1, "once": 1, "twice": 2}[group(6)]
				if m := regexp.MustCompile(`through the tour's (\d+) stops`).FindStringSubmatch(st.text[a[1]:next]); m != nil {
					stops, _ := strconv.Atoi(m[1])
					if got := text(t, ctx, "tour-count"); got != m[1] {
						t.Errorf("step %d: the tour has %s stops, the README says %s", st.n, got, m[1])
					}
					times = stops - 1 // from the first stop, open at Home
				}
				for _, k := range keys[:len(keys)-1] {
					pressDemoKey(t, ctx, k, nil)
				}
				if last == "n" && len(after) != times {
					t.Fatalf("step %d: %d presses of n and %d stop titles in %q", st.n, times, len(after), st.text)
				}
				for p := range times {
					var want *string
					if last == "n" {
						want = &after[p]
					}
					pressDemoKey(t, ctx, last, want)
				}
			}
		}
		for _, f := range demoFacts {
			if m := f.re.FindStringSubmatch(st.text); m != nil {
				f.read(t, ctx, m)
			}
		}
		if m := regexp.MustCompile("URL \\(`(/images/demo/run\\?[^`]+)`").FindStringSubmatch(st.text); m != nil {
			// The address is a permalink: it has the README's path and parameters (… is any value),
			// and a fresh tab shows that step.
			here := js[string](t, ctx, `location.pathname + location.search`)
			wantPath, wantQuery, _ := strings.Cut(m[1], "?")
			gotPath, gotQuery, _ := strings.Cut(here, "?")
			got, err := url.ParseQuery(gotQuery)
			if err != nil || gotPath != wantPath {
				t.Errorf("step %d: the address %s is not of the README's form %s", st.n, here, m[1])
			}
			for _, kv := range strings.Split(wantQuery, "&") {
				k, v, _ := strings.Cut(kv, "=")
				if !got.Has(k) || (v != "…" && got.Get(k) != v) {
					t.Errorf("step %d: the address %s has %s=%q, the README's form %s", st.n, here, k, got.Get(k), m[1])
				}
			}
			step := js[string](t, ctx, `new URLSearchParams(location.search).get('step') || ''`)
			other := tab(t)
			do(t, other, chromedp.Navigate(base+here))
			waitJS(t, other, fmt.Sprintf(`new URLSearchParams(location.search).get('step') === %q && document.getElementById('step-now').textContent.replace(/[^0-9]/g, '') === %q`, step, step), 30*time.Second)
		}
	}
}

// contextT is the tab's context (the helpers' type), named for the fact table.
type contextT = context.Context

// clickLabel clicks the link whose text is label — in the tree's row of path when one is given —
// with the mouse, as a reader would.
func clickLabel(t *testing.T, ctx context.Context, label, path string) {
	t.Helper()
	find := fmt.Sprintf(`[...document.querySelectorAll('a')].find((a) => a.textContent.trim() === %q)`, label)
	if path != "" {
		find = fmt.Sprintf(`[...document.querySelectorAll('[data-path=%q] a')].find((a) => a.textContent.trim() === %q)`, path, label)
	}
	waitNav(t, ctx, `!!`+find, 20*time.Second)
	do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const a = %s; a.scrollIntoView({block: 'center'}); a.dataset.readme = '1'; })()`, find)))
	do(t, ctx, chromedp.Click(`a[data-readme="1"]`))
	waitNav(t, ctx, `document.readyState === 'complete' && !document.querySelector('a[data-readme]')`, 20*time.Second)
	if js[bool](t, ctx, `!!document.querySelector('[data-testid="run-status"]')`) {
		waitStatus(t, ctx, 30*time.Second, "paused")
	}
}

// pressDemoKey presses a key the README names; after n the tour shows the stop title wants, and
// after space the run plays to its end (30 s at the default pace, 3 s under the test's clock).
func pressDemoKey(t *testing.T, ctx context.Context, name string, want *string) {
	t.Helper()
	switch name {
	case "space":
		key(t, ctx, " ", false)
		waitStatus(t, ctx, 10*time.Second, "playing", "done")
		waitStatus(t, ctx, 3*time.Minute, "done")
	case "Home":
		key(t, ctx, kb.Home, false)
		waitJS(t, ctx, `new URLSearchParams(location.search).get('step') === '0' || document.getElementById('step-now').textContent.replace(/[^0-9]/g, '') === '0'`, 10*time.Second)
	case "n":
		key(t, ctx, "n", false)
		if want != nil {
			if err := pollJS(ctx, fmt.Sprintf(`document.querySelector('[data-testid="tour-title"]').textContent.trim() === %q`, *want), 10*time.Second); err != nil {
				t.Fatalf("n: the tour shows %q at step %s, the README says %q", text(t, ctx, "tour-title"), text(t, ctx, "step"), *want)
			}
		}
	default:
		t.Fatalf("the README presses %q, which this test does not know", name)
	}
}
