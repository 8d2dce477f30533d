package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/chromedp/chromedp"
	"github.com/zrviz/zrviz/internal/testutil"
)

// The static site (zrviz site DIR, issue 31): the server's handlers built as WebAssembly and run in
// the page's service worker. These tests build the site once with the real command, serve DIR with a
// plain file server that records every request, and drive it in headless Chromium.

var (
	siteOnce sync.Once
	siteDir  string
	siteCLI  string // the zrviz binary that wrote it
	siteErr  error
)

// builtSite builds zrviz and runs `zrviz site` once for the test binary; it returns DIR.
func builtSite(t testing.TB) string {
	t.Helper()
	testutil.NeedTool(t, "go")
	siteOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zrviz-site-")
		if err != nil {
			siteErr = err
			return
		}
		siteDir, siteCLI = filepath.Join(dir, "site"), filepath.Join(dir, "zrviz")
		for _, c := range [][]string{{"go", "build", "-o", siteCLI, "./cmd/zrviz"}, {siteCLI, "site", siteDir}} {
			cmd := exec.Command(c[0], c[1:]...)
			cmd.Dir = ".."
			if out, err := cmd.CombinedOutput(); err != nil {
				siteErr = fmt.Errorf("%v: %w\n%s", c, err, out)
				return
			}
		}
	})
	if siteErr != nil {
		t.Fatal(siteErr)
	}
	return siteDir
}

// fileRequest is one request the static file server got.
type fileRequest struct {
	method, path string
	inDir        bool // the path names a file in DIR
	upgrade      bool // a websocket upgrade was asked for
}

// staticHost serves dir as a plain static file server does (no websocket, no API, nothing but
// files) and records every request.
type staticHost struct {
	dir string
	mu  sync.Mutex
	got []fileRequest
}

func serveSite(t testing.TB, dir string) (*staticHost, string) {
	h := &staticHost{dir: dir}
	files := http.FileServer(http.Dir(dir))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+r.URL.Path)))
		fi, err := os.Stat(name)
		h.mu.Lock()
		h.got = append(h.got, fileRequest{method: r.Method, path: r.URL.Path, inDir: err == nil && (!fi.IsDir() ||
			fileExists(filepath.Join(name, "index.html"))), upgrade: r.Header.Get("Upgrade") != ""})
		h.mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	// Service workers need a secure context: http://localhost is one, http://127.0.0.1 too.
	u, _ := url.Parse(ts.URL)
	return h, "http://localhost:" + u.Port()
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// requests returns what the host got so far.
func (h *staticHost) requests() []fileRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]fileRequest(nil), h.got...)
}

// checkOnlyFiles fails for any request that was not a GET of a file in DIR.
func (h *staticHost) checkOnlyFiles(t testing.TB) {
	t.Helper()
	got := h.requests()
	if len(got) == 0 {
		t.Fatal("the static host got no request at all")
	}
	for _, r := range got {
		if r.method != http.MethodGet || !r.inDir || r.upgrade || strings.HasPrefix(r.path, "/api/") || strings.HasPrefix(r.path, "/ws/") {
			t.Errorf("the static host got %s %s (a file of DIR: %v, upgrade: %v): the site asked a server for something",
				r.method, r.path, r.inDir, r.upgrade)
		}
	}
}

// siteTab opens the site's front page in a new tab and waits for the worker's images page.
func siteTab(t testing.TB, tab func(testing.TB) context.Context, base string) context.Context {
	t.Helper()
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/"))
	waitJS(t, ctx, `!!document.querySelector('[data-testid="image-list"]')`, 90*time.Second)
	return ctx
}

// TestSitePlaysBench64 is issue 31's first "done when": the built site, on a plain file server,
// plays /seed/bench64.bin in both modes to the end with the server's numbers (16,384 per-block
// calls, 19 batched), and every request the host got was a GET of a file in DIR.
func TestSitePlaysBench64(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the site and drives a browser")
	}
	t.Parallel()
	dir := builtSite(t)
	host, base := serveSite(t, dir)
	tab := browser(t)
	ctx := siteTab(t, tab, base)
	if got := text(t, ctx, "image-list"); !strings.Contains(got, "demo") {
		t.Fatalf("the site's images list does not show the demo: %q", got)
	}
	do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
	waitStatus(t, ctx, time.Minute, "paused")
	playFull(t, ctx)
	waitStatus(t, ctx, 3*time.Minute, "done")
	playedToEnd(t, ctx)
	for id, want := range map[string]string{"stat-calls-per-block": "16384", "stat-calls-batched": "19"} {
		if got := count(t, ctx, id); got != want {
			t.Errorf("%s = %q after the play, want %s", id, got, want)
		}
	}
	screenshot(t, ctx, "site-bench64")
	host.checkOnlyFiles(t)
}

// siteDiffers are the sweep's pages the static build renders differently from the server's.
var siteDiffers = map[string]bool{"images": true, "run": true, "notfound": true}

// TestSiteTruth walks TestBrowserTruth's paths (End, Home, the slider back before the first SIT
// update, the next call and back, tour stops) through the static site: after each, every panel reads
// as a fresh load of the page's permalink does in the site; and TestBrowserModeSwitch's (b three
// times at the end of bench64, a switch mid-run against a reload).
func TestSiteTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the site and drives a browser")
	}
	t.Parallel()
	_, base := serveSite(t, builtSite(t))
	tab := browser(t)
	siteTab(t, tab, base) // installs the worker, which the paths' fresh tabs share
	truthPaths(t, tab, base, "bench64", "prealloc", "257 segments")
	t.Run("mode switch", func(t *testing.T) { modeSwitch(t, tab, base) })
}

// sitePages are the sweep's pages the static site serves: every one but the room follower's (the
// site has no rooms) and the diff against a second stored image (the site's images are the demo and
// the ones the user opens; TestSiteLocalImage opens one).
func sitePages() []classroomPage {
	var out []classroomPage
	for _, p := range classroomPages {
		if p.name == "follow" || p.name == "diff" {
			continue
		}
		out = append(out, p)
	}
	return out
}

// TestSitePages loads every page of the sweep from the built site at a phone's, a laptop's and a
// projector's size: each gets ready as it does from the server, with no uncaught exception, no
// sideways scroll and no axe-core violation; the run page says that rooms need the server, and
// the API the site has no use for answers server_only.
func TestSitePages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the site and drives a browser")
	}
	t.Parallel()
	src := axeSource(t)
	dir := builtSite(t)
	host, base := serveSite(t, dir)
	tab := browser(t)
	siteTab(t, tab, base) // installs the worker
	for _, vp := range []struct{ w, h int64 }{{390, 844}, {1280, 720}, {1920, 1080}} {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			for _, p := range sitePages() {
				ctx := tab(t)
				do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h))
				where := fmt.Sprintf("site %s at %d×%d", p.name, vp.w, vp.h)
				do(t, ctx, chromedp.Navigate(base+p.path))
				waitJSOr(t, ctx, p.ready, time.Minute, `document.title + ' ' + document.body.innerText.slice(0, 200)`)
				settle(t, ctx)
				noSideways(t, ctx, where)
				headingOne(t, ctx, where)
				// The site's pages are the server's templates, which TestBrowserClassroomScreens
				// holds to axe-core at four sizes; here axe runs at every size on the pages the
				// static build renders differently (the images list, the run page's room and
				// after-check, the not-found page), and at the laptop's on the rest.
				if siteDiffers[p.name] || vp.w == 1280 {
					axeCheck(t, ctx, src, where)
				}
				if p.name == "run" {
					if got := text(t, ctx, "room-static"); !strings.Contains(got, "zrviz serve") {
						t.Errorf("%s: the room note reads %q", where, got)
					}
					shot(t, ctx, fmt.Sprintf("site-run-%dx%d", vp.w, vp.h))
				}
			}
		})
	}
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/glossary"))
	waitJS(t, ctx, `!!document.querySelector('[data-testid="term-sit-lock"]')`, time.Minute)
	got, err := evalJS[[]any](ctx, `(async () => { const r = await fetch('/api/images', {method: 'POST', body: 'x'}); return [r.status, (await r.json()).code]; })()`, chromedp.EvalAwaitPromise)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != float64(http.StatusNotImplemented) || got[1] != string(ESERVERONLY) {
		t.Errorf("POST /api/images in the site answers %v, want 501 %s", got, ESERVERONLY)
	}
	host.checkOnlyFiles(t)
}

// TestSiteLocalImage opens an image from this computer in the built site, through the images
// page's file input and the real worker: a gzip made with mkfs.f2fs and sload.f2fs. A zero played
// on one of its files gives the calls `zrviz run --json` gives; the after-check opens a second
// image the same way; a fresh browser's permalink to the image asks for the file again, refuses
// another file, and reloads the permalink on the same one. Every request the host got was a GET of
// a file in DIR: the image went nowhere.
func TestSiteLocalImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the site and drives a browser")
	}
	t.Parallel()
	src := axeSource(t)
	dir := builtSite(t)
	gz := makeGzImage(t)
	other := testutil.RawImage(t, "../imgio/testdata/basic.img.gz")
	host, base := serveSite(t, dir)

	// What the CLI says of the same zero.
	out, err := exec.Command(siteCLI, "run", "--image", gz, "--json", "/hello/world.txt").Output()
	if err != nil {
		t.Fatalf("zrviz run --json: %v", err)
	}
	var cli struct {
		Results []struct {
			Mode  string     `json:"mode"`
			Errno string     `json:"errno"`
			Calls [][]uint32 `json:"calls"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &cli); err != nil || len(cli.Results) != 2 {
		t.Fatalf("zrviz run --json: %v\n%s", err, out)
	}

	tab := browser(t)
	ctx := siteTab(t, tab, base)
	if n := js[int](t, ctx, `document.querySelectorAll('[data-testid="upload"]').length`); n != 0 {
		t.Errorf("the site's images page shows %d upload forms", n)
	}
	if got := text(t, ctx, "local-privacy"); !strings.Contains(got, "stays on this machine") {
		t.Errorf("the privacy sentence reads %q", got)
	}
	// A file that is no image: refused with the reader's words, what and where.
	bad := filepath.Join(t.TempDir(), "bad.img")
	if err := os.WriteFile(bad, []byte("an image's bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS(testid("local-input")), []string{bad}))
	waitJS(t, ctx, `document.getElementById('local-msg').classList.contains('error')`, time.Minute)
	if got := text(t, ctx, "local-message"); got != "Could not open bad.img: bad.img: imgio: not an F2FS image: no magic 0xF2F52010 at byte 0x400 or 0x1400 (16-byte input)" {
		t.Errorf("after a refusal: %q", got)
	}
	axeCheck(t, ctx, src, "site images page after a refusal")
	do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS(testid("local-input")), []string{gz}))
	waitJS(t, ctx, `document.querySelector('[data-testid="local-link"]') !== null`, time.Minute)
	id := strings.TrimPrefix(js[string](t, ctx, `document.querySelector('[data-testid="local-link"]').getAttribute('href')`), "/images/")
	if !isLocalID(id) {
		t.Fatalf("the opened image's link names %q", id)
	}
	waitJS(t, ctx, fmt.Sprintf(`[...document.querySelectorAll('[data-testid="image-item"]')].some((tr) => tr.dataset.id === %q && tr.textContent.includes('gzip'))`, id), 30*time.Second)
	axeCheck(t, ctx, src, "site images page with a local image")
	shot(t, ctx, "site-local-open")

	// Its tree, then a zero of /hello/world.txt played to the end in both modes.
	do(t, ctx, chromedp.Navigate(base+"/images/"+id))
	waitJS(t, ctx, `!!document.querySelector('[data-testid="file-entry"][data-path="/hello/world.txt"]')`, time.Minute)
	do(t, ctx, chromedp.Navigate(base+"/images/"+id+"/run?"+url.Values{"path": {"/hello/world.txt"}, "mode": {"both"}}.Encode()))
	waitStatus(t, ctx, time.Minute, "paused")
	playFull(t, ctx)
	waitStatus(t, ctx, time.Minute, "done")
	playedToEnd(t, ctx)
	for i, stat := range []string{"stat-calls-per-block", "stat-calls-batched"} {
		if got, want := count(t, ctx, stat), fmt.Sprint(len(cli.Results[i].Calls)); got != want {
			t.Errorf("%s: %s = %s in the site, %s in zrviz run --json", cli.Results[i].Mode, stat, got, want)
		}
	}
	shot(t, ctx, "site-local-run")

	// The after-check opens an after-image from this computer too (basic.img: another volume, which
	// the check refuses as such), without a request to the host.
	do(t, ctx, chromedp.Click(chromedp.CSS(testid("ac-open"))))
	if got := text(t, ctx, "ac-upload"); got != "open…" {
		t.Errorf("the after-check's file button reads %q in the site", got)
	}
	do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS(testid("ac-file")), []string{other}))
	waitJS(t, ctx, `(() => { const s = document.querySelector('[data-testid="ac-status"]').textContent; return s !== '' && !s.startsWith('opening') && !s.startsWith('holding'); })()`, time.Minute)
	if got := text(t, ctx, "ac-status") + text(t, ctx, "ac-verdict"); got == "" {
		t.Error("the after-check said nothing about the opened image")
	}

	// A fresh browser (no worker, no image): the permalink installs the site, then asks for the file.
	fresh := browser(t)
	ctx2 := siteTab(t, fresh, base)
	permalink := base + "/images/" + id + "/run?path=%2Fhello%2Fworld.txt&mode=both&step=2"
	do(t, ctx2, chromedp.Navigate(permalink))
	waitJS(t, ctx2, `!!document.querySelector('[data-testid="local-fingerprint"]')`, time.Minute)
	if got := text(t, ctx2, "local-fingerprint"); !strings.HasSuffix(id, got) {
		t.Errorf("the permalink page names fingerprint %q for %s", got, id)
	}
	axeCheck(t, ctx2, src, "site local permalink")
	shot(t, ctx2, "site-local-missing")
	do(t, ctx2, chromedp.SetUploadFiles(chromedp.CSS(testid("local-input")), []string{other}))
	waitJS(t, ctx2, `document.getElementById('local-msg').classList.contains('error')`, time.Minute)
	if got := text(t, ctx2, "local-message"); !strings.Contains(got, "different file") {
		t.Errorf("another file on the permalink: %q", got)
	}
	do(t, ctx2, chromedp.SetUploadFiles(chromedp.CSS(testid("local-input")), []string{gz}))
	waitStatus(t, ctx2, time.Minute, "paused")
	// The run page writes the range it resolved into the URL; the rest is the permalink's.
	if got := js[string](t, ctx2, `location.pathname + location.search`); !strings.HasPrefix(got, strings.TrimPrefix(permalink, base)) {
		t.Errorf("after opening the same file the page is %s, want the permalink", got)
	}
	if got := text(t, ctx2, "step"); got != "2" {
		t.Errorf("the permalink's player shows step %s, want 2", got)
	}
	host.checkOnlyFiles(t)
}

// siteBudget is issue 31's bound on the whole site, brotli-compressed: what a static host sends.
const siteBudget = 6_000_000

// brotliSize is the bytes of every file under dir compressed with brotli at quality q, and the
// bytes uncompressed.
func brotliSize(t testing.TB, dir string, q int) (packed, raw int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var c byteCounter
		w := brotli.NewWriterLevel(&c, q)
		if _, err := w.Write(b); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		packed += int64(c)
		raw += int64(len(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return packed, raw
}

type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) { *c += byteCounter(len(p)); return len(p), nil }

// TestSiteSize holds the built site to its budget. Quality 5 is cheap enough for every run and
// compresses worse than the quality 11 a host would use (BenchmarkSite states that figure), so a
// site within the budget here is within it there.
func TestSiteSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the site")
	}
	packed, raw := brotliSize(t, builtSite(t), 5)
	t.Logf("the site: %d bytes, %d brotli-compressed (quality 5)", raw, packed)
	if packed > siteBudget {
		t.Errorf("the site is %d bytes brotli-compressed (quality 5), over the budget of %d", packed, siteBudget)
	}
}

// BenchmarkSite measures issue 31's budgets on the built site, served by a plain file server, in
// headless Chromium; nothing is asserted about time, the figures go to docs/performance.md with the
// load average logged beside them:
//
//   - the site's bytes, brotli-compressed at quality 11 (br-bytes);
//
//   - a fresh browser (no worker, nothing cached) from its first request, /, until the demo's
//     images page is ready (first-ms), and until the bench64 player is ready (interactive-ms);
//
//   - an 8 GiB image made with mkfs.f2fs and sload.f2fs, opened from disk through the file input,
//     until its tree is listed (open8g-ms), and the worker's memory for the server then
//     (wasm-MiB: the WebAssembly instance's linear memory, which only grows);
//
//   - bench64 played in both modes at the default pace, in the site and from the server in the
//     same run: the player's 95th-percentile draw time (reportFrames).
//
//     go test ./web -run '^$' -bench BenchmarkSite -benchtime 1x
func BenchmarkSite(b *testing.B) {
	dir := builtSite(b)
	_, base := serveSite(b, dir)
	b.Run("size", func(b *testing.B) {
		for range b.N {
			packed, raw := brotliSize(b, dir, 11)
			b.ReportMetric(float64(packed), "br-bytes")
			b.Logf("the site: %d bytes, %d brotli-compressed (quality 11)", raw, packed)
		}
	})
	b.Run("first visit", func(b *testing.B) {
		for range b.N {
			ctx := browser(b)(b) // a fresh profile each time: no worker, no cache
			start := time.Now()
			do(b, ctx, chromedp.Navigate(base+"/"))
			waitJS(b, ctx, `!!document.querySelector('[data-testid="image-item"][data-id="demo"]')`, time.Minute)
			first := time.Since(start)
			do(b, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
			waitStatus(b, ctx, time.Minute, "paused")
			all := time.Since(start)
			b.ReportMetric(float64(first.Milliseconds()), "first-ms")
			b.ReportMetric(float64(all.Milliseconds()), "interactive-ms")
			b.Logf("fresh browser: images page %v, bench64 player ready %v after the first request; load average %s", first, all, loadAverage())
		}
	})
	b.Run("open 8 GiB", func(b *testing.B) {
		img := make8GiB(b)
		for range b.N {
			ctx := siteTab(b, browser(b), base)
			start := time.Now()
			do(b, ctx, chromedp.SetUploadFiles(chromedp.CSS(testid("local-input")), []string{img}))
			waitJS(b, ctx, `document.querySelector('[data-testid="local-link"]') !== null`, 2*time.Minute)
			id := strings.TrimPrefix(evalOr[string](b, ctx, `document.querySelector('[data-testid="local-link"]').getAttribute('href')`), "/images/")
			do(b, ctx, chromedp.Navigate(base+"/images/"+id))
			waitJS(b, ctx, `!!document.querySelector('[data-testid="file-entry"][data-path="/a/random.bin"]')`, 2*time.Minute)
			took := time.Since(start)
			mem := evalOr[float64](b, ctx, `new Promise((ok) => { const ch = new MessageChannel(); ch.port1.onmessage = (e) => ok(e.data.wasmMemory); navigator.serviceWorker.controller.postMessage({type: 'zrviz-stats'}, [ch.port2]); })`, chromedp.EvalAwaitPromise)
			b.ReportMetric(float64(took.Milliseconds()), "open8g-ms")
			b.ReportMetric(mem/(1<<20), "wasm-MiB")
			b.Logf("8 GiB raw image opened and its tree listed in %v; the worker's WebAssembly memory %.0f MiB; load average %s", took, mem/(1<<20), loadAverage())
		}
	})
	ts := mustOpenServer(b, Config{})
	for _, side := range []struct{ name, base string }{{"site", base}, {"server", ts.ts.URL}} {
		b.Run("bench64 frames "+side.name, func(b *testing.B) {
			ctx := browser(b)(b)
			if side.name == "site" {
				ctx = siteTab(b, func(testing.TB) context.Context { return ctx }, base)
			}
			do(b, ctx, chromedp.Navigate(runURL(side.base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
			waitStatus(b, ctx, time.Minute, "paused")
			do(b, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-reset')?.click()`))
			for i := range b.N {
				replay(b, ctx, i > 0)
				waitStatus(b, ctx, 2*time.Minute, "done")
				playedToEnd(b, ctx)
			}
			reportFrames(b, ctx, side.name+": bench64 both, default pace, 1280×720")
		})
	}
}

// evalOr evaluates expr and fails the benchmark or test on error.
func evalOr[T any](tb testing.TB, ctx context.Context, expr string, opts ...chromedp.EvaluateOption) T {
	tb.Helper()
	v, err := evalJS[T](ctx, expr, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// make8GiB makes a sparse 8 GiB F2FS image with mkfs.f2fs holding /a/random.bin (64 MiB written by
// sload.f2fs), in a temporary directory.
func make8GiB(tb testing.TB) string {
	tb.Helper()
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i*2654435761>>13) ^ byte(i>>20)
	}
	return makeF2FS(tb, 8<<30, map[string][]byte{"a/random.bin": data})
}

// TestSiteSubpath serves the built site under a course's folder (/~prof/zrviz/) with a plain file
// server that answers an unknown path under it with 404.html, as GitHub Pages does (issue 38). A
// fresh browser's cold deep link to bench64's run page starts the worker there and plays the run to
// the end with the server's numbers; the images page's links, a local image opened from this
// computer and its tree stay under the folder; every request the host got was a GET under the
// folder. Opened as file://, the first page says what to run instead.
func TestSiteSubpath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the site and drives a browser")
	}
	t.Parallel()
	dir := builtSite(t)
	gz := makeGzImage(t)
	const prefix = "/~prof/zrviz/"
	var (
		mu  sync.Mutex
		got []string
	)
	files := http.StripPrefix(strings.TrimSuffix(prefix, "/"), http.FileServer(http.Dir(dir)))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if !strings.HasPrefix(r.URL.Path, prefix) {
			http.NotFound(w, r)
			return
		}
		name := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+strings.TrimPrefix(r.URL.Path, prefix))))
		if _, err := os.Stat(name); err != nil {
			b, err := os.ReadFile(filepath.Join(dir, "404.html"))
			if err != nil {
				t.Error(err)
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			w.Write(b)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL)
	base := "http://localhost:" + u.Port() + strings.TrimSuffix(prefix, "/")

	tab := browser(t)
	ctx := tab(t)
	// A cold deep link: nothing installed yet, the host answers with 404.html.
	do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
	waitStatus(t, ctx, 2*time.Minute, "paused")
	if p := js[string](t, ctx, `location.pathname`); p != prefix+"images/"+DemoID+"/run" {
		t.Errorf("the deep link ended at %s", p)
	}
	playFull(t, ctx)
	waitStatus(t, ctx, 3*time.Minute, "done")
	playedToEnd(t, ctx)
	for id, want := range map[string]string{"stat-calls-per-block": "16384", "stat-calls-batched": "19"} {
		if got := count(t, ctx, id); got != want {
			t.Errorf("%s = %q after the play under %s, want %s", id, got, prefix, want)
		}
	}
	// Every link and script of the page is under the folder.
	if out := js[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('a[href], script[src], link[href], form[action]')].map((e) => e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('action')).filter((h) => h.startsWith('/') && !h.startsWith(%q))`, prefix)); len(out) > 0 {
		t.Errorf("the run page under %s has root-relative URLs: %q", prefix, out[:min(len(out), 5)])
	}
	screenshot(t, ctx, "site-subpath-bench64")

	// The images page, a local image opened there, and its link (made in script) followed.
	do(t, ctx, chromedp.Navigate(base+"/"))
	waitJS(t, ctx, `!!document.querySelector('[data-testid="image-list"]')`, time.Minute)
	do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS(testid("local-input")), []string{gz}))
	waitJS(t, ctx, `document.querySelector('[data-testid="local-link"]') !== null`, time.Minute)
	do(t, ctx, chromedp.Click(chromedp.CSS(testid("local-link"))))
	waitJS(t, ctx, `!!document.querySelector('[data-testid="file-entry"][data-path="/hello/world.txt"]')`, time.Minute)
	if p := js[string](t, ctx, `location.pathname`); !strings.HasPrefix(p, prefix+"images/local-") {
		t.Errorf("the local image's link led to %s", p)
	}
	// Its file's run, by the tree's link.
	before := js[string](t, ctx, `location.href`)
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="file-entry"][data-path="/hello/world.txt"] a[href]').click()`))
	waitJS(t, ctx, fmt.Sprintf(`location.href !== %q && document.readyState === 'complete'`, before), time.Minute)
	if p := js[string](t, ctx, `location.pathname`); !strings.HasPrefix(p, prefix+"images/local-") {
		t.Errorf("the tree's link led to %s", p)
	}

	mu.Lock()
	for _, r := range got {
		if !strings.HasPrefix(r, "GET "+prefix) {
			t.Errorf("the host got %q: outside the site's folder", r)
		}
	}
	mu.Unlock()

	// file:// says what to run instead.
	fctx := tab(t)
	do(t, fctx, chromedp.Navigate("file://"+filepath.Join(dir, "index.html")))
	waitJS(t, fctx, `/python3 -m http.server/.test(document.getElementById('status').textContent)`, 10*time.Second)
	if s := text(t, fctx, "site-status"); !strings.Contains(s, "file://") || !strings.Contains(s, "zrviz serve") {
		t.Errorf("the site opened as file:// says %q", s)
	}
}
